//! Parse: the `#[tool(...)]` attribute and the annotated function, as syn
//! gives them, with unknown keys rejected at their span.

use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;
use syn::{ItemFn, LitBool, LitStr};

/// A string attribute value and where it was written.
pub struct WithSpan<T> {
    pub value: T,
    pub span: Span,
}

/// The keys of `#[tool(...)]`.
#[derive(Default)]
pub struct ToolAttr {
    pub name: Option<WithSpan<String>>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
    pub keep_defs: bool,
    pub requires: Vec<String>,
}

/// The parsed input of `#[tool]`.
pub struct ParsedTool {
    pub attr: ToolAttr,
    pub func: ItemFn,
}

const KEYS: &str = "name, title, description, read_only, destructive, idempotent, open_world, keep_defs, requires";

fn flag(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<bool> {
    if meta.input.peek(syn::Token![=]) {
        Ok(meta.value()?.parse::<LitBool>()?.value)
    } else {
        Ok(true)
    }
}

/// Parses the attribute arguments and the item.
pub fn tool(attr: TokenStream, item: TokenStream) -> syn::Result<ParsedTool> {
    let func: ItemFn = syn::parse2(item).map_err(|e| {
        syn::Error::new(
            e.span(),
            "#[tool] applies to a function: `fn name(args) -> Output { ... }`",
        )
    })?;
    let mut out = ToolAttr::default();
    let parser = syn::meta::parser(|meta| {
        let key = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
        match key.as_str() {
            "name" => {
                let lit: LitStr = meta.value()?.parse()?;
                out.name = Some(WithSpan {
                    value: lit.value(),
                    span: lit.span(),
                });
            }
            "title" => out.title = Some(meta.value()?.parse::<LitStr>()?.value()),
            "description" => out.description = Some(meta.value()?.parse::<LitStr>()?.value()),
            "read_only" => out.read_only = Some(flag(&meta)?),
            "destructive" => out.destructive = Some(flag(&meta)?),
            "idempotent" => out.idempotent = Some(flag(&meta)?),
            "open_world" => out.open_world = Some(flag(&meta)?),
            "keep_defs" => out.keep_defs = flag(&meta)?,
            "requires" => meta.parse_nested_meta(|cap| {
                let name = cap.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
                if !matches!(name.as_str(), "sampling" | "elicitation" | "roots") {
                    return Err(cap.error("expected a client capability: sampling, elicitation or roots"));
                }
                out.requires.push(name);
                Ok(())
            })?,
            _ => {
                return Err(syn::Error::new(
                    meta.path.span(),
                    format!("unknown #[tool] attribute key `{key}`; expected one of: {KEYS}"),
                ))
            }
        }
        Ok(())
    });
    syn::parse::Parser::parse2(parser, attr)?;
    Ok(ParsedTool { attr: out, func })
}

fn string(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<WithSpan<String>> {
    let lit: LitStr = meta.value()?.parse()?;
    Ok(WithSpan {
        value: lit.value(),
        span: lit.span(),
    })
}

fn item_fn(item: TokenStream, m: &str) -> syn::Result<ItemFn> {
    syn::parse2(item).map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("{m} applies to a function: `fn name(args) -> Output {{ ... }}`"),
        )
    })
}

/// The keys of `#[resource(...)]`.
#[derive(Default)]
pub struct ResourceAttr {
    pub uri: Option<WithSpan<String>>,
    pub uri_template: Option<WithSpan<String>>,
    pub name: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    pub ttl_ms: Option<u64>,
    pub cache_scope: Option<WithSpan<String>>,
}

/// The parsed input of `#[resource]`.
pub struct ParsedResource {
    pub attr: ResourceAttr,
    pub func: ItemFn,
    pub attr_span: Span,
}

const RESOURCE_KEYS: &str = "uri, uri_template, name, title, description, mime_type, ttl_ms, cache_scope";

/// Parses `#[resource(...)]` and its function.
pub fn resource(attr: TokenStream, item: TokenStream) -> syn::Result<ParsedResource> {
    let attr_span = attr.span();
    let func = item_fn(item, "#[resource]")?;
    let mut out = ResourceAttr::default();
    let parser = syn::meta::parser(|meta| {
        let key = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
        match key.as_str() {
            "uri" => out.uri = Some(string(&meta)?),
            "uri_template" => out.uri_template = Some(string(&meta)?),
            "name" => out.name = Some(string(&meta)?.value),
            "title" => out.title = Some(string(&meta)?.value),
            "description" => out.description = Some(string(&meta)?.value),
            "mime_type" => out.mime_type = Some(string(&meta)?.value),
            "ttl_ms" => out.ttl_ms = Some(meta.value()?.parse::<syn::LitInt>()?.base10_parse()?),
            "cache_scope" => out.cache_scope = Some(string(&meta)?),
            _ => {
                return Err(syn::Error::new(
                    meta.path.span(),
                    format!("unknown #[resource] attribute key `{key}`; expected one of: {RESOURCE_KEYS}"),
                ))
            }
        }
        Ok(())
    });
    syn::parse::Parser::parse2(parser, attr)?;
    Ok(ParsedResource {
        attr: out,
        func,
        attr_span,
    })
}

/// The keys of `#[prompt(...)]`.
#[derive(Default)]
pub struct PromptAttr {
    pub name: Option<WithSpan<String>>,
    pub title: Option<String>,
    pub description: Option<String>,
}

/// The parsed input of `#[prompt]`.
pub struct ParsedPrompt {
    pub attr: PromptAttr,
    pub func: ItemFn,
}

/// Parses `#[prompt(...)]` and its function.
pub fn prompt(attr: TokenStream, item: TokenStream) -> syn::Result<ParsedPrompt> {
    let func = item_fn(item, "#[prompt]")?;
    let mut out = PromptAttr::default();
    let parser = syn::meta::parser(|meta| {
        let key = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
        match key.as_str() {
            "name" => out.name = Some(string(&meta)?),
            "title" => out.title = Some(string(&meta)?.value),
            "description" => out.description = Some(string(&meta)?.value),
            _ => {
                return Err(syn::Error::new(
                    meta.path.span(),
                    format!("unknown #[prompt] attribute key `{key}`; expected one of: name, title, description"),
                ))
            }
        }
        Ok(())
    });
    syn::parse::Parser::parse2(parser, attr)?;
    Ok(ParsedPrompt { attr: out, func })
}
