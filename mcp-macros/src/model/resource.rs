//! The model of a `#[resource]`: a static URI or an RFC 6570 template whose
//! variables bind to the function's parameters by name.

use super::{check_signature, output, params, Param, ParamKind, ParamRules};
use crate::parse::ParsedResource;
use proc_macro2::Span;
use syn::{ItemFn, Type};

pub struct Resource {
    pub func: ItemFn,
    pub uri: String,
    pub is_template: bool,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    pub ttl_ms: u64,
    pub public: bool,
    pub params: Vec<Param>,
    pub output: Type,
    pub is_async: bool,
}

/// The variables of a template, or what is unsupported in it (the runtime
/// parses templates the same way; this check runs at compile time).
pub fn template_variables(template: &str) -> Result<Vec<String>, String> {
    let mut vars = Vec::new();
    let mut rest = template;
    let mut last_was_var = false;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            last_was_var = false;
        }
        let close = rest[open..].find('}').ok_or("unclosed `{` in the URI template")? + open;
        let expr = &rest[open + 1..close];
        let name = expr.strip_prefix('+').unwrap_or(expr);
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "unsupported expression `{{{expr}}}`: only RFC 6570 `{{name}}` and `{{+name}}` are supported"
            ));
        }
        if last_was_var {
            return Err("two variables need a literal between them".into());
        }
        if vars.iter().any(|v| v == name) {
            return Err(format!("variable `{name}` appears twice"));
        }
        vars.push(name.to_owned());
        last_was_var = true;
        rest = &rest[close + 1..];
    }
    if rest.contains('}') {
        return Err("unopened `}` in the URI template".into());
    }
    Ok(vars)
}

impl Resource {
    pub fn from_parsed(parsed: ParsedResource) -> syn::Result<Resource> {
        let ParsedResource {
            attr,
            mut func,
            attr_span,
        } = parsed;
        check_signature(&func, "#[resource]")?;
        let (uri, is_template, uri_span) = match (&attr.uri, &attr.uri_template) {
            (Some(u), None) => (u.value.clone(), false, u.span),
            (None, Some(t)) => (t.value.clone(), true, t.span),
            (Some(u), Some(_)) => return Err(syn::Error::new(u.span, "give either `uri` or `uri_template`, not both")),
            (None, None) => {
                return Err(syn::Error::new(
                    if attr_span.source_text().is_some() {
                        attr_span
                    } else {
                        Span::call_site()
                    },
                    "#[resource] needs `uri = \"scheme://...\"` or `uri_template = \"scheme://{var}\"`",
                ))
            }
        };
        if !uri.contains(':') {
            return Err(syn::Error::new(
                uri_span,
                "a resource URI needs a scheme, like `docs://readme`",
            ));
        }
        let public = match &attr.cache_scope {
            None => false,
            Some(s) if s.value == "public" => true,
            Some(s) if s.value == "private" => false,
            Some(s) => return Err(syn::Error::new(s.span, "cache_scope is \"public\" or \"private\"")),
        };
        let params = params(&mut func, ParamRules::RESOURCE)?;
        let vars = if is_template {
            template_variables(&uri).map_err(|e| syn::Error::new(uri_span, e))?
        } else {
            Vec::new()
        };
        for p in &params {
            if let ParamKind::Argument { wire, .. } = &p.kind {
                if !vars.contains(wire) {
                    let why = if is_template {
                        format!("parameter `{wire}` has no `{{{wire}}}` variable in the URI template")
                    } else {
                        format!("a static resource takes no parameters; use `uri_template` to bind `{wire}`")
                    };
                    return Err(syn::Error::new(p.ident.span(), why));
                }
            }
        }
        for v in &vars {
            let bound = params
                .iter()
                .any(|p| matches!(&p.kind, ParamKind::Argument { wire, .. } if wire == v));
            if !bound {
                return Err(syn::Error::new(
                    uri_span,
                    format!("template variable `{v}` has no parameter `{v}`"),
                ));
            }
        }
        let output = output(&func, "#[resource]")?;
        Ok(Resource {
            name: attr
                .name
                .clone()
                .unwrap_or_else(|| func.sig.ident.to_string().trim_start_matches("r#").to_owned()),
            description: attr.description.clone().or_else(|| crate::docs::collect(&func.attrs)),
            title: attr.title,
            mime_type: attr.mime_type,
            ttl_ms: attr.ttl_ms.unwrap_or(0),
            public,
            is_async: func.sig.asyncness.is_some(),
            uri,
            is_template,
            params,
            output,
            func,
        })
    }
}
