//! Parse: the macro's attribute and the annotated function, as syn gives
//! them. Every problem is recorded in the [`Ctxt`] and reading goes on, so
//! that one compile shows all of them: unknown keys, keys given twice and
//! malformed values, each at its span.

use crate::ctxt::Ctxt;
use proc_macro2::{Span, TokenStream, TokenTree};
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{ItemFn, LitBool, LitStr};

/// An attribute value and where it was written.
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
    /// `task`, `task = required`, `task(required, ttl_ms = N, poll_interval_ms = N)`.
    pub task: Option<TaskAttr>,
    /// `scopes("a", "b")`: the OAuth scopes a caller needs.
    pub scopes: Vec<WithSpan<String>>,
    /// `blocking`: a synchronous function run on tokio's blocking pool.
    pub blocking: Option<WithSpan<bool>>,
    /// `timeout = "30s"`: how long a call may run, in milliseconds.
    pub timeout_ms: Option<u64>,
    /// `max_concurrency = N`: calls running at once, at most.
    pub max_concurrency: Option<u64>,
    /// `rate_limit = "10/s burst 20"`: calls per caller (count, period in
    /// milliseconds, burst).
    pub rate_limit: Option<(u32, u64, u32)>,
    /// `visible_if = path::to_fn`: who is shown the tool.
    pub visible_if: Option<syn::Path>,
    /// `ui = "ui://.."`: the MCP Apps view that renders the tool's results.
    pub ui: Option<WithSpan<String>>,
    /// `visibility(model, app)`: who may call the tool (MCP Apps), as
    /// written; the key's span when the list is empty.
    pub visibility: Option<WithSpan<Vec<WithSpan<String>>>>,
}

/// `app(..)` of `#[resource]`: the view's sandbox (MCP Apps).
pub struct AppAttr {
    /// Where `app` was written.
    pub span: Span,
    pub connect: Option<Vec<String>>,
    pub resource: Option<Vec<String>>,
    pub frame: Option<Vec<String>>,
    pub base_uri: Option<Vec<String>>,
    /// `permissions(camera, ..)`, as written.
    pub permissions: Vec<WithSpan<String>>,
    pub domain: Option<String>,
    pub prefers_border: Option<bool>,
}

/// How a tool runs as a task.
#[derive(Default)]
pub struct TaskAttr {
    pub required: bool,
    pub ttl_ms: Option<u64>,
    pub poll_interval_ms: Option<u64>,
}

/// The parsed input of `#[tool]`.
pub struct ParsedTool {
    pub attr: ToolAttr,
    pub func: ItemFn,
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
    pub scopes: Vec<WithSpan<String>>,
    pub visible_if: Option<syn::Path>,
    /// `app(..)`: the resource is an MCP Apps view.
    pub app: Option<AppAttr>,
}

/// The parsed input of `#[resource]`.
pub struct ParsedResource {
    pub attr: ResourceAttr,
    pub func: ItemFn,
    pub attr_span: Span,
}

/// The keys of `#[prompt(...)]`.
#[derive(Default)]
pub struct PromptAttr {
    pub name: Option<WithSpan<String>>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub scopes: Vec<WithSpan<String>>,
    pub visible_if: Option<syn::Path>,
}

/// The parsed input of `#[prompt]`.
pub struct ParsedPrompt {
    pub attr: PromptAttr,
    pub func: ItemFn,
}

const TOOL_KEYS: &str =
    "name, title, description, read_only, destructive, idempotent, open_world, keep_defs, requires, task, scopes, blocking, timeout, max_concurrency, rate_limit, visible_if, ui, visibility";
const RESOURCE_KEYS: &str =
    "uri, uri_template, name, title, description, mime_type, ttl_ms, cache_scope, scopes, visible_if, app";
const PROMPT_KEYS: &str = "name, title, description, scopes, visible_if";

/// `scopes("a", "b")`: string literals, with their spans.
fn scopes(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<WithSpan<String>>> {
    let content;
    syn::parenthesized!(content in meta.input);
    let list = syn::punctuated::Punctuated::<LitStr, syn::Token![,]>::parse_terminated(&content)?;
    Ok(list
        .iter()
        .map(|lit| WithSpan {
            value: lit.value(),
            span: lit.span(),
        })
        .collect())
}

/// `visible_if = path::to_fn`: the path of a predicate function (its
/// signature is the compiler's to check, at the path).
fn predicate(meta: &ParseNestedMeta<'_>) -> syn::Result<syn::Path> {
    match meta.value()?.parse::<syn::Expr>()? {
        syn::Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => Ok(p.path),
        other => Err(syn::Error::new_spanned(
            other,
            "visible_if takes the path of a function `fn(&Viewer<'_>) -> bool`, like `visible_if = staff_only`",
        )),
    }
}

/// A flag (`key`) or a boolean (`key = false`).
fn flag(meta: &ParseNestedMeta<'_>) -> syn::Result<bool> {
    if meta.input.peek(syn::Token![=]) {
        Ok(meta.value()?.parse::<LitBool>()?.value)
    } else {
        Ok(true)
    }
}

/// `key = "text"`, with the literal's span.
fn string(meta: &ParseNestedMeta<'_>) -> syn::Result<WithSpan<String>> {
    let lit: LitStr = meta.value()?.parse()?;
    Ok(WithSpan {
        value: lit.value(),
        span: lit.span(),
    })
}

/// Skips what is left of a key's value, up to the next `,`.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    while !meta.input.is_empty() && !meta.input.peek(syn::Token![,]) {
        meta.input.parse::<TokenTree>()?;
    }
    Ok(())
}

/// Reads `#[m(key = value, flag, ...)]`: `read` reads the value of a known
/// key (returning `false` for an unknown one). Each key is accepted once.
fn read_keys(
    cx: &Ctxt,
    attr: TokenStream,
    m: &str,
    keys: &str,
    mut read: impl FnMut(&str, &ParseNestedMeta<'_>) -> syn::Result<bool>,
) {
    let mut seen: Vec<String> = Vec::new();
    let parser = syn::meta::parser(|meta| {
        let key = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
        if seen.contains(&key) {
            cx.error(
                meta.path.span(),
                format!("`{key}` is given twice in {m}: give each key once"),
            );
            return skip_value(&meta);
        }
        seen.push(key.clone());
        match read(&key, &meta) {
            Ok(true) => Ok(()),
            Ok(false) => {
                cx.error(
                    meta.path.span(),
                    format!("unknown {m} attribute key `{key}`; expected one of: {keys}"),
                );
                skip_value(&meta)
            }
            Err(e) => {
                cx.syn_error(e);
                skip_value(&meta)
            }
        }
    });
    if let Err(e) = syn::parse::Parser::parse2(parser, attr) {
        cx.syn_error(e);
    }
}

/// The annotated function, or `None` (recorded) when the item is not one.
fn item_fn(cx: &Ctxt, item: TokenStream, m: &str) -> Option<ItemFn> {
    match syn::parse2(item) {
        Ok(func) => Some(func),
        Err(e) => {
            cx.error(
                e.span(),
                format!("{m} applies to a function: `fn name(args) -> Output {{ ... }}`"),
            );
            None
        }
    }
}

/// Parses `#[tool(...)]` and its function.
pub fn tool(cx: &Ctxt, attr: TokenStream, item: TokenStream) -> Option<ParsedTool> {
    let mut out = ToolAttr::default();
    read_keys(cx, attr, "#[tool]", TOOL_KEYS, |key, meta| {
        match key {
            "name" => out.name = Some(string(meta)?),
            "title" => out.title = Some(string(meta)?.value),
            "description" => out.description = Some(string(meta)?.value),
            "read_only" => out.read_only = Some(flag(meta)?),
            "destructive" => out.destructive = Some(flag(meta)?),
            "idempotent" => out.idempotent = Some(flag(meta)?),
            "open_world" => out.open_world = Some(flag(meta)?),
            "keep_defs" => out.keep_defs = flag(meta)?,
            "task" => out.task = Some(task(cx, meta)?),
            "scopes" => out.scopes = scopes(meta)?,
            "timeout" => out.timeout_ms = duration_ms(cx, meta)?,
            "max_concurrency" => out.max_concurrency = Some(positive(meta)?),
            "rate_limit" => out.rate_limit = rate(cx, meta)?,
            "visible_if" => out.visible_if = Some(predicate(meta)?),
            "ui" => out.ui = Some(string(meta)?),
            "visibility" => out.visibility = Some(idents(meta)?),
            "blocking" => {
                out.blocking = Some(WithSpan {
                    value: flag(meta)?,
                    span: meta.path.span(),
                })
            }
            "requires" => meta.parse_nested_meta(|cap| {
                let name = cap.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
                if !matches!(name.as_str(), "sampling" | "elicitation" | "roots") {
                    cx.error(
                        cap.path.span(),
                        "expected a client capability: sampling, elicitation or roots",
                    );
                } else if out.requires.contains(&name) {
                    cx.error(cap.path.span(), format!("`{name}` is required twice"));
                } else {
                    out.requires.push(name);
                }
                Ok(())
            })?,
            _ => return Ok(false),
        }
        Ok(true)
    });
    let func = item_fn(cx, item, "#[tool]")?;
    Some(ParsedTool { attr: out, func })
}

/// `task`, `task = required | optional`, or `task(required, ttl_ms = N, poll_interval_ms = N)`.
fn task(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<TaskAttr> {
    let mut out = TaskAttr::default();
    if meta.input.peek(syn::Token![=]) {
        let mode: syn::Ident = meta.value()?.parse()?;
        match mode.to_string().as_str() {
            "required" => out.required = true,
            "optional" => {}
            _ => cx.error(mode.span(), "expected `task = required` or `task = optional`"),
        }
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| {
            let key = inner.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
            match key.as_str() {
                "required" => out.required = true,
                "optional" => {}
                "ttl_ms" => out.ttl_ms = Some(positive(&inner)?),
                "poll_interval_ms" => out.poll_interval_ms = Some(positive(&inner)?),
                _ => {
                    cx.error(
                        inner.path.span(),
                        format!(
                            "unknown task key `{key}`; expected one of: required, optional, ttl_ms, poll_interval_ms"
                        ),
                    );
                    skip_value(&inner)?;
                }
            }
            Ok(())
        })?;
    }
    Ok(out)
}

/// `rate_limit = "10/s"`: `N/s`, `N/min` (or `N/m`), `N/h` or `N/<ms>ms`,
/// optionally followed by `burst B` (default `N`): read by
/// `mcp_grammar::parse_rate`, as `mcp_runtime::Rate` reads it, into (count,
/// period in milliseconds, burst), or `None` after an error, reported to `cx`.
fn rate(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Option<(u32, u64, u32)>> {
    let lit: LitStr = meta.value()?.parse()?;
    let text = lit.value();
    match mcp_grammar::parse_rate(&text) {
        Ok(r) => Ok(Some((r.count, r.period_ms, r.burst))),
        Err(_) => {
            cx.error(
                lit.span(),
                format!("expected a rate such as \"10/s\", \"600/min\" or \"100/h burst 20\", found {text:?}"),
            );
            Ok(None)
        }
    }
}

/// `key = "30s"`: a duration of `ms`, `s`, `m` or `h`, more than zero,
/// in milliseconds (`None` after an error, reported to `cx`).
fn duration_ms(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Option<u64>> {
    let lit: LitStr = meta.value()?.parse()?;
    let text = lit.value();
    let trimmed = text.trim();
    let split = trimmed.find(|c: char| !c.is_ascii_digit()).unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let factor = match unit.trim() {
        "ms" => Some(1),
        "s" => Some(1_000),
        "m" | "min" => Some(60_000),
        "h" => Some(3_600_000),
        _ => None,
    };
    match (number.parse::<u64>().ok(), factor) {
        (Some(n), Some(f)) if n > 0 => match n.checked_mul(f) {
            Some(ms) => Ok(Some(ms)),
            None => {
                cx.error(lit.span(), format!("the timeout {text:?} is too long"));
                Ok(None)
            }
        },
        _ => {
            cx.error(
                lit.span(),
                format!("expected a duration above zero such as \"500ms\", \"30s\", \"5m\" or \"1h\", found {text:?}"),
            );
            Ok(None)
        }
    }
}

/// `key = N` with N > 0.
fn positive(meta: &ParseNestedMeta<'_>) -> syn::Result<u64> {
    let lit: syn::LitInt = meta.value()?.parse()?;
    let n: u64 = lit.base10_parse()?;
    if n == 0 {
        return Err(syn::Error::new(lit.span(), "must be a positive number of milliseconds"));
    }
    Ok(n)
}

/// Parses `#[resource(...)]` and its function.
pub fn resource(cx: &Ctxt, attr: TokenStream, item: TokenStream) -> Option<ParsedResource> {
    let attr_span = attr.span();
    let mut out = ResourceAttr::default();
    read_keys(cx, attr, "#[resource]", RESOURCE_KEYS, |key, meta| {
        match key {
            "uri" => out.uri = Some(string(meta)?),
            "uri_template" => out.uri_template = Some(string(meta)?),
            "name" => out.name = Some(string(meta)?.value),
            "title" => out.title = Some(string(meta)?.value),
            "description" => out.description = Some(string(meta)?.value),
            "mime_type" => out.mime_type = Some(string(meta)?.value),
            "ttl_ms" => out.ttl_ms = Some(meta.value()?.parse::<syn::LitInt>()?.base10_parse()?),
            "cache_scope" => out.cache_scope = Some(string(meta)?),
            "scopes" => out.scopes = scopes(meta)?,
            "visible_if" => out.visible_if = Some(predicate(meta)?),
            "app" => out.app = Some(app(cx, meta)?),
            _ => return Ok(false),
        }
        Ok(true)
    });
    let func = item_fn(cx, item, "#[resource]")?;
    Some(ParsedResource {
        attr: out,
        func,
        attr_span,
    })
}

/// `key(a, b)`: bare names with their spans (checked later), and the key's span.
fn idents(meta: &ParseNestedMeta<'_>) -> syn::Result<WithSpan<Vec<WithSpan<String>>>> {
    let mut names = Vec::new();
    if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        let list = syn::punctuated::Punctuated::<syn::Ident, syn::Token![,]>::parse_terminated(&content)?;
        names.extend(list.iter().map(|i| WithSpan {
            value: i.to_string(),
            span: i.span(),
        }));
    }
    Ok(WithSpan {
        value: names,
        span: meta.path.span(),
    })
}

/// `key = ["a", "b"]`: string literals.
fn strings(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<String>> {
    let input = meta.value()?;
    let content;
    syn::bracketed!(content in input);
    let list = syn::punctuated::Punctuated::<LitStr, syn::Token![,]>::parse_terminated(&content)?;
    Ok(list.iter().map(LitStr::value).collect())
}

/// `app`, or `app(csp(connect = [..], resource = [..], frame = [..],
/// base_uri = [..]), permissions(camera, ..), domain = "..", prefers_border)`.
fn app(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<AppAttr> {
    let mut out = AppAttr {
        span: meta.path.span(),
        connect: None,
        resource: None,
        frame: None,
        base_uri: None,
        permissions: Vec::new(),
        domain: None,
        prefers_border: None,
    };
    if !meta.input.peek(syn::token::Paren) {
        return Ok(out);
    }
    let mut seen: Vec<String> = Vec::new();
    meta.parse_nested_meta(|inner| {
        let key = inner.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
        if seen.contains(&key) {
            cx.error(inner.path.span(), format!("`{key}` is given twice in app(..)"));
            return skip_value(&inner);
        }
        seen.push(key.clone());
        match key.as_str() {
            "csp" => inner.parse_nested_meta(|csp| {
                let key = csp.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
                let slot = match key.as_str() {
                    "connect" => &mut out.connect,
                    "resource" => &mut out.resource,
                    "frame" => &mut out.frame,
                    "base_uri" => &mut out.base_uri,
                    _ => {
                        cx.error(
                            csp.path.span(),
                            format!("unknown csp key `{key}`; expected one of: connect, resource, frame, base_uri"),
                        );
                        return skip_value(&csp);
                    }
                };
                *slot = Some(strings(&csp)?);
                Ok(())
            })?,
            "permissions" => out.permissions = idents(&inner)?.value,
            "domain" => out.domain = Some(string(&inner)?.value),
            "prefers_border" => out.prefers_border = Some(flag(&inner)?),
            _ => {
                cx.error(
                    inner.path.span(),
                    format!("unknown app key `{key}`; expected one of: csp, permissions, domain, prefers_border"),
                );
                skip_value(&inner)?;
            }
        }
        Ok(())
    })?;
    Ok(out)
}

/// Parses `#[prompt(...)]` and its function.
pub fn prompt(cx: &Ctxt, attr: TokenStream, item: TokenStream) -> Option<ParsedPrompt> {
    let mut out = PromptAttr::default();
    read_keys(cx, attr, "#[prompt]", PROMPT_KEYS, |key, meta| {
        match key {
            "name" => out.name = Some(string(meta)?),
            "title" => out.title = Some(string(meta)?.value),
            "description" => out.description = Some(string(meta)?.value),
            "scopes" => out.scopes = scopes(meta)?,
            "visible_if" => out.visible_if = Some(predicate(meta)?),
            _ => return Ok(false),
        }
        Ok(true)
    });
    let func = item_fn(cx, item, "#[prompt]")?;
    Some(ParsedPrompt { attr: out, func })
}
