//! The model of a `#[prompt]`: parameters become the prompt's arguments.

use super::{check_signature, output, params, Param, ParamRules};
use crate::parse::ParsedPrompt;
use syn::{ItemFn, Type};

pub struct Prompt {
    pub func: ItemFn,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub params: Vec<Param>,
    pub output: Type,
    pub is_async: bool,
}

impl Prompt {
    pub fn from_parsed(parsed: ParsedPrompt) -> syn::Result<Prompt> {
        let ParsedPrompt { attr, mut func } = parsed;
        check_signature(&func, "#[prompt]")?;
        let (name, span) = match &attr.name {
            Some(n) => (n.value.clone(), n.span),
            None => (
                func.sig.ident.to_string().trim_start_matches("r#").to_owned(),
                func.sig.ident.span(),
            ),
        };
        if name.is_empty() || name.len() > 128 {
            return Err(syn::Error::new(span, "a prompt name has 1 to 128 characters"));
        }
        let params = params(&mut func, ParamRules::PROMPT)?;
        let output = output(&func, "#[prompt]")?;
        Ok(Prompt {
            name,
            title: attr.title,
            description: attr.description.or_else(|| crate::docs::collect(&func.attrs)),
            is_async: func.sig.asyncness.is_some(),
            params,
            output,
            func,
        })
    }
}
