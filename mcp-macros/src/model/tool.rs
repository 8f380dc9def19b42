//! The model of a `#[tool]`.

use super::{output, params, Param, ParamKind, ParamRules};
use crate::ctxt::Ctxt;
use crate::parse::{ParsedTool, ToolAttr};
use proc_macro2::Span;
use syn::{Attribute, ItemFn, Type};

pub struct Tool {
    /// The user's function, with parameter attributes removed.
    pub func: ItemFn,
    pub name: String,
    /// Where the name was written (the attribute's literal, or the function's name).
    pub name_span: Span,
    pub title: Option<String>,
    pub description: Option<crate::docs::Doc>,
    pub attr: ToolAttr,
    pub params: Vec<Param>,
    pub output: Type,
    pub is_async: bool,
}

impl Tool {
    /// The model of a parsed `#[tool]` (problems with parameters recorded).
    pub fn from_parsed(cx: &Ctxt, parsed: ParsedTool) -> Tool {
        let ParsedTool { attr, mut func } = parsed;
        let (name, name_span) = match &attr.name {
            Some(n) => (n.value.clone(), n.span),
            None => (
                func.sig.ident.to_string().trim_start_matches("r#").to_owned(),
                func.sig.ident.span(),
            ),
        };
        let params = params(cx, &mut func, ParamRules::TOOL);
        let output = output(&func);
        let description = attr
            .description
            .clone()
            .map(crate::docs::Doc::Text)
            .or_else(|| crate::docs::collect(&func.attrs));
        Tool {
            is_async: func.sig.asyncness.is_some(),
            title: attr.title.clone(),
            name,
            name_span,
            description,
            attr,
            params,
            output,
            func,
        }
    }

    pub fn arguments(&self) -> impl Iterator<Item = (&Param, &str, bool, &[Attribute])> {
        self.params.iter().filter_map(|p| match &p.kind {
            ParamKind::Argument {
                wire,
                has_default,
                attrs,
            } => Some((p, wire.as_str(), *has_default, attrs.as_slice())),
            ParamKind::Extractor | ParamKind::Whole => None,
        })
    }

    /// The `#[arguments]` parameter, if there is one.
    pub fn whole(&self) -> Option<&Param> {
        self.params.iter().find(|p| matches!(p.kind, ParamKind::Whole))
    }
}
