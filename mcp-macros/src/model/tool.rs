//! The model of a `#[tool]`.

use super::{check_signature, output, params, valid_name, Param, ParamKind, ParamRules};
use crate::parse::{ParsedTool, ToolAttr};
use syn::{Attribute, ItemFn, Type};

pub struct Tool {
    /// The user's function, with parameter attributes removed.
    pub func: ItemFn,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub attr: ToolAttr,
    pub params: Vec<Param>,
    pub output: Type,
    pub is_async: bool,
}

impl Tool {
    pub fn from_parsed(parsed: ParsedTool) -> syn::Result<Tool> {
        let ParsedTool { attr, mut func } = parsed;
        check_signature(&func, "#[tool]")?;
        let sig = &func.sig;
        let (name, name_span) = match &attr.name {
            Some(n) => (n.value.clone(), n.span),
            None => (
                sig.ident.to_string().trim_start_matches("r#").to_owned(),
                sig.ident.span(),
            ),
        };
        if name.len() > 128 {
            return Err(syn::Error::new(
                name_span,
                format!("tool name is {} characters long; the limit is 128", name.len()),
            ));
        }
        if !valid_name(&name) {
            return Err(syn::Error::new(
                name_span,
                format!("invalid tool name `{name}`: use 1 to 128 characters of A-Za-z0-9, `_`, `.`, `-`"),
            ));
        }
        let params = params(&mut func, ParamRules::TOOL)?;
        let wholes: Vec<&Param> = params.iter().filter(|p| matches!(p.kind, ParamKind::Whole)).collect();
        if let Some(w) = wholes.first() {
            let others = params
                .iter()
                .filter(|p| !matches!(p.kind, ParamKind::Extractor))
                .count();
            if wholes.len() > 1 || others > 1 {
                return Err(syn::Error::new(
                    w.ident.span(),
                    "an #[arguments] parameter receives all the arguments: the other parameters must be extractors",
                ));
            }
        }
        let output = output(&func, "#[tool]")?;
        let description = attr.description.clone().or_else(|| crate::docs::collect(&func.attrs));
        Ok(Tool {
            is_async: func.sig.asyncness.is_some(),
            title: attr.title.clone(),
            name,
            description,
            attr,
            params,
            output,
            func,
        })
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
