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
                Piece::Line(line.strip_prefix(' ').unwrap_or(&line).trim_end().to_owned())
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
