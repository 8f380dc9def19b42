//! The model of a `#[resource]`: a static URI or an RFC 6570 template whose
//! variables bind to the function's parameters by name.

use super::{output, params, Param, ParamRules};
use crate::ctxt::Ctxt;
use crate::parse::{ParsedResource, ResourceAttr};
use proc_macro2::Span;
use syn::{ItemFn, Type};

pub struct Resource {
    pub func: ItemFn,
    pub uri: String,
    /// Where the URI (or template) was written, else the attribute.
    pub uri_span: Span,
    pub is_template: bool,
    /// The attribute as written (for the checks).
    pub attr: ResourceAttr,
    /// The span of the attribute's arguments.
    pub attr_span: Span,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<crate::docs::Doc>,
    pub mime_type: Option<String>,
    pub ttl_ms: u64,
    pub public: bool,
    pub params: Vec<Param>,
    pub output: Type,
    pub is_async: bool,
}

impl Resource {
    /// The model of a parsed `#[resource]` (problems with parameters
    /// recorded; the URI and its bindings are checked in [`crate::check`]).
    pub fn from_parsed(cx: &Ctxt, parsed: ParsedResource) -> Resource {
        let ParsedResource {
            attr,
            mut func,
            attr_span,
        } = parsed;
        let params = params(cx, &mut func, ParamRules::RESOURCE);
        let output = output(&func);
        let (uri, is_template, uri_span) = match (&attr.uri, &attr.uri_template) {
            (Some(u), _) => (u.value.clone(), false, u.span),
            (None, Some(t)) => (t.value.clone(), true, t.span),
            (None, None) => (String::new(), false, attr_span),
        };
        Resource {
            name: attr
                .name
                .clone()
                .unwrap_or_else(|| func.sig.ident.to_string().trim_start_matches("r#").to_owned()),
            description: attr
                .description
                .clone()
                .map(crate::docs::Doc::Text)
                .or_else(|| crate::docs::collect(&func.attrs)),
            title: attr.title.clone(),
            // An app's HTML is served as the app MIME type.
            mime_type: match &attr.app {
                Some(_) => Some("text/html;profile=mcp-app".to_owned()),
                None => attr.mime_type.clone(),
            },
            ttl_ms: attr.ttl_ms.unwrap_or(0),
            public: attr.cache_scope.as_ref().is_some_and(|s| s.value == "public"),
            is_async: func.sig.asyncness.is_some(),
            uri,
            uri_span,
            is_template,
            attr_span,
            attr,
            params,
            output,
            func,
        }
    }
}
