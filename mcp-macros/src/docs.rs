//! Doc comments: `///` lines become `#[doc = "..."]` attributes; this joins
//! them into one description. A doc attribute may also be an expression
//! (`#[doc = include_str!("tool.md")]`): then the description is joined by
//! `concat!` where the item is compiled, since only the compiler reads it.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// A description: known text, or pieces the compiler joins.
#[derive(Clone)]
pub enum Doc {
    Text(String),
    /// Literal lines (already trimmed) and expressions, joined by newlines.
    Joined(Vec<Piece>),
}

#[derive(Clone)]
pub enum Piece {
    Line(String),
    Expr(Expr),
}

impl Doc {
    /// `Some(..)`/`None` of a `&'static str`, usable in a `static`.
    pub fn tokens(doc: &Option<Doc>) -> TokenStream {
        match doc {
            None => quote!(::core::option::Option::None),
            Some(Doc::Text(text)) => quote!(::core::option::Option::Some(#text)),
            Some(Doc::Joined(pieces)) => {
                let mut parts = Vec::with_capacity(pieces.len() * 2);
                for (i, piece) in pieces.iter().enumerate() {
                    if i > 0 {
                        parts.push(quote!("\n"));
                    }
                    parts.push(match piece {
                        Piece::Line(line) => quote!(#line),
                        Piece::Expr(expr) => quote!(#expr),
                    });
                }
                quote! {
                    ::mcp_runtime::__private::doc_text(::core::concat!(#(#parts),*))
                }
            }
        }
    }
}

/// The doc attributes' text, lines trimmed and joined, or `None` when there
/// is none (or only blank lines).
pub fn collect(attrs: &[Attribute]) -> Option<Doc> {
    let mut pieces = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        let Meta::NameValue(nv) = &attr.meta else { continue };
        pieces.push(match &nv.value {
            Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => {
                let line = s.value();
                match unblock(&line) {
                    Some(block) => Piece::Line(block),
                    None => Piece::Line(line.strip_prefix(' ').unwrap_or(&line).trim_end().to_owned()),
                }
            }
            other => Piece::Expr(other.clone()),
        });
    }
    if pieces.iter().any(|p| matches!(p, Piece::Expr(_))) {
        return Some(Doc::Joined(pieces));
    }
    let lines: Vec<String> = pieces
        .into_iter()
        .filter_map(|p| match p {
            Piece::Line(line) => Some(line),
            Piece::Expr(_) => None,
        })
        .collect();
    let text = lines.join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| Doc::Text(text.to_owned()))
}

/// The text of a block doc comment (`/** ... */`, one attribute of many
/// lines) without its decoration, as rustdoc shows it: text on the opening
/// line kept apart, the blank (or only `*`) lines at either end dropped, a
/// `* ` before every other line taken off when every one that is not blank
/// has one, and the indentation (spaces, tabs) the lines share. `None` for
/// one line.
pub fn unblock(text: &str) -> Option<String> {
    if !text.contains('\n') {
        return None;
    }
    let mut lines: Vec<&str> = text.lines().collect();
    // Text on the opening line (`/** Summary.`) stands apart: the lines
    // after it decide whether the block is starred.
    let first = match lines.first() {
        Some(l) if !l.trim().is_empty() && !decorated(l) => {
            let first = l.trim();
            lines.remove(0);
            Some(first)
        }
        _ => None,
    };
    if first.is_none() {
        while lines.first().is_some_and(|l| only_stars(l)) {
            lines.remove(0);
        }
    }
    while lines.last().is_some_and(|l| only_stars(l)) {
        lines.pop();
    }
    let starred = lines.iter().filter(|l| !l.trim().is_empty()).all(|l| decorated(l));
    let lines: Vec<&str> = match starred {
        true => lines
            .iter()
            .map(|l| {
                let rest = l.trim_start();
                rest.strip_prefix("* ")
                    .or_else(|| rest.strip_prefix('*'))
                    .unwrap_or(rest)
            })
            .collect(),
        false => lines,
    };
    let margin = |l: &&str| l.len() - l.trim_start_matches([' ', '\t']).len();
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(margin)
        .min()
        .unwrap_or(0);
    let lines: Vec<&str> = first
        .into_iter()
        // Spaces and tabs are one byte each: `indent` falls between characters.
        .chain(lines.iter().map(|l| l.get(indent..).unwrap_or("").trim_end()))
        .collect();
    Some(lines.join("\n"))
}

/// Whether a line is blank or only `*`s: decoration at either end of a
/// block (`/**` on a line of its own, ` */` or ` **/`).
fn only_stars(line: &str) -> bool {
    line.trim().chars().all(|c| c == '*')
}

/// Whether a line of a block comment carries its `*` decoration: `*`
/// alone, or before a space (`*Emphasis*` is text).
fn decorated(line: &str) -> bool {
    let t = line.trim_start();
    t == "*" || t.starts_with("* ") || t.starts_with("*\t")
}

/// A parameter's doc attribute as the schema derive should read it: a block
/// doc comment without its decoration (see [`unblock`]), any other as it is.
pub fn carried(attr: Attribute) -> Attribute {
    let Meta::NameValue(nv) = &attr.meta else { return attr };
    let Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) = &nv.value else {
        return attr;
    };
    match unblock(&s.value()) {
        Some(text) => {
            let lit = syn::LitStr::new(&text, s.span());
            syn::parse_quote_spanned!(syn::spanned::Spanned::span(&attr)=> #[doc = #lit])
        }
        None => attr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_comments_lose_their_decoration() {
        assert_eq!(unblock(" one line "), None);
        assert_eq!(
            unblock("\n     * Adds two numbers.\n     *\n     *   indented\n     ").as_deref(),
            Some("Adds two numbers.\n\n  indented")
        );
        assert_eq!(
            unblock("\n    Plain block.\n      More.\n").as_deref(),
            Some("Plain block.\n  More.")
        );
        // Text on the opening line, stars on the lines after it.
        assert_eq!(
            unblock(" Summary.\n     * More.\n     ").as_deref(),
            Some("Summary.\nMore.")
        );
        // Emphasis is text; blank lines in between stay; tabs indent.
        assert_eq!(
            unblock(" Summary.\n\n * *Emphasis* here.\n *\n * More.\n *").as_deref(),
            Some("Summary.\n\n*Emphasis* here.\n\nMore.")
        );
        assert_eq!(unblock("\n\tA\n\t  B\n").as_deref(), Some("A\n  B"));
        assert_eq!(unblock("\n \u{3000}a\n  b\n").as_deref(), Some("\u{3000}a\n b"));
        // A star that is part of the text is kept when not every line has one.
        assert_eq!(
            unblock("\n  * a bullet\n  and text\n").as_deref(),
            Some("* a bullet\nand text")
        );
    }
}
