//! Doc comments: `///` lines become `#[doc = "..."]` attributes; this joins
//! them into one description.

use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// The text of the doc attributes, lines trimmed and joined, or `None`.
pub fn collect(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let text = lines
        .iter()
        .map(|l| l.strip_prefix(' ').unwrap_or(l).trim_end())
        .collect::<Vec<_>>()
        .join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}
