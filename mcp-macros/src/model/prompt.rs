//! The model of a `#[prompt]`: parameters become the prompt's arguments.

use super::{output, params, Param, ParamRules};
use crate::ctxt::Ctxt;
use crate::parse::ParsedPrompt;
use proc_macro2::Span;
use syn::{ItemFn, Type};

pub struct Prompt {
    pub func: ItemFn,
    pub name: String,
    /// Where the name was written.
    pub name_span: Span,
    pub title: Option<String>,
    pub description: Option<crate::docs::Doc>,
    pub params: Vec<Param>,
    pub output: Type,
    pub is_async: bool,
    /// The OAuth scopes a caller needs.
    pub scopes: Vec<crate::parse::WithSpan<String>>,
    /// Who is shown the prompt.
    pub visible_if: Option<syn::Path>,
}

impl Prompt {
    /// The model of a parsed `#[prompt]` (problems with parameters recorded).
    pub fn from_parsed(cx: &Ctxt, parsed: ParsedPrompt) -> Prompt {
        let ParsedPrompt { attr, mut func } = parsed;
        let (name, name_span) = match &attr.name {
            Some(n) => (n.value.clone(), n.span),
            None => (
                func.sig.ident.to_string().trim_start_matches("r#").to_owned(),
                func.sig.ident.span(),
            ),
        };
        let params = params(cx, &mut func, ParamRules::PROMPT);
        let output = output(&func);
        Prompt {
            name,
            name_span,
            title: attr.title,
            description: attr
                .description
                .map(crate::docs::Doc::Text)
                .or_else(|| crate::docs::collect(&func.attrs)),
            is_async: func.sig.asyncness.is_some(),
            params,
            output,
            func,
            scopes: attr.scopes,
            visible_if: attr.visible_if,
        }
    }
}
