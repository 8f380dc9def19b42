//! Check: the rules an item must follow, applied to its model. Every
//! broken rule is recorded in the [`Ctxt`] at the span of the user's code,
//! so one compile reports them all.

use crate::ctxt::Ctxt;
use crate::model::{Param, ParamKind, Prompt, Resource, Tool};
use syn::spanned::Spanned;
use syn::{ItemFn, ReturnType, Type};

/// Signatures no macro supports: generics, `const`, variadics, an
/// `impl Trait` return type.
fn signature(cx: &Ctxt, func: &ItemFn, m: &str) {
    let sig = &func.sig;
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        cx.error_spanned_by(&sig.generics, format!("{m} functions cannot be generic"));
    }
    if let Some(c) = &sig.constness {
        cx.error(c.span(), format!("{m} functions cannot be `const`"));
    }
    if let Some(v) = &sig.variadic {
        cx.error(v.span(), format!("{m} functions cannot be variadic"));
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        if let Type::ImplTrait(i) = &**ty {
            cx.error(
                i.span(),
                format!("{m} functions must name their return type, not `impl Trait`"),
            );
        }
    }
}

/// The last segment of a type's path (`Task` of `mcp_runtime::Task`).
fn last_ident(ty: &Type) -> Option<&syn::Ident> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| &s.ident),
        _ => None,
    }
}

/// Arguments are owned, named types.
fn arguments(cx: &Ctxt, params: &[Param], m: &str) {
    for p in params.iter().filter(|p| !matches!(p.kind, ParamKind::Extractor)) {
        match &p.ty {
            Type::ImplTrait(i) => cx.error(i.span(), format!("{m} arguments cannot be `impl Trait`")),
            ty => {
                let owned = format!("{m} arguments must be owned types (for example `String`, not `&str`)");
                match borrowed(ty) {
                    Some(Borrow::Reference(r)) => cx.error_spanned_by(r, owned),
                    Some(Borrow::Lifetime(l)) => cx.error_spanned_by(l, owned),
                    None => {}
                }
            }
        }
    }
}

/// What borrows in a type.
enum Borrow<'a> {
    Reference(&'a syn::TypeReference),
    Lifetime(&'a syn::Lifetime),
}

/// Where a type borrows, at its top or inside it (`Option<&str>`,
/// `Vec<&str>`, `Cow<'_, str>`): a reference, or a lifetime other than
/// `'static`. An argument is decoded from the request into a value the
/// handler owns, so it cannot borrow.
fn borrowed(ty: &Type) -> Option<Borrow<'_>> {
    match ty {
        Type::Reference(r) => Some(Borrow::Reference(r)),
        Type::Path(p) => p.path.segments.iter().find_map(|segment| match &segment.arguments {
            syn::PathArguments::AngleBracketed(args) => args.args.iter().find_map(|arg| match arg {
                syn::GenericArgument::Type(t) => borrowed(t),
                syn::GenericArgument::Lifetime(l) if l.ident != "static" => Some(Borrow::Lifetime(l)),
                _ => None,
            }),
            _ => None,
        }),
        Type::Tuple(t) => t.elems.iter().find_map(borrowed),
        Type::Array(a) => borrowed(&a.elem),
        Type::Slice(s) => borrowed(&s.elem),
        Type::Paren(p) => borrowed(&p.elem),
        Type::Group(g) => borrowed(&g.elem),
        _ => None,
    }
}

/// OAuth scopes are scope-tokens (RFC 6749 section 3.3: printable ASCII
/// but space, `"` and `\\`), each given once.
fn scopes(cx: &Ctxt, scopes: &[crate::parse::WithSpan<String>]) {
    for (i, scope) in scopes.iter().enumerate() {
        let token = !scope.value.is_empty()
            && scope
                .value
                .bytes()
                .all(|b| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E));
        if !token {
            cx.error(
                scope.span,
                "a scope is a non-empty token of printable ASCII without spaces, `\"` or `\\` (RFC 6749)",
            );
        } else if scopes[..i].iter().any(|s| s.value == scope.value) {
            cx.error(scope.span, format!("the scope `{}` is given twice", scope.value));
        }
    }
}

/// The rules of a `#[tool]`.
pub fn tool(cx: &Ctxt, tool: &Tool) {
    signature(cx, &tool.func, "#[tool]");
    scopes(cx, &tool.attr.scopes);
    if tool.name.len() > mcp_grammar::MAX_TOOL_NAME {
        cx.error(
            tool.name_span,
            format!("tool name is {} characters long; the limit is 128", tool.name.len()),
        );
    } else if !mcp_grammar::is_valid_tool_name(&tool.name) {
        cx.error(
            tool.name_span,
            format!(
                "invalid tool name `{}`: use 1 to 128 characters of A-Za-z0-9, `_`, `.`, `-`",
                tool.name
            ),
        );
    }
    arguments(cx, &tool.params, "#[tool]");
    ui(cx, tool);
    if let Some(blocking) = tool.attr.blocking.as_ref().filter(|b| b.value && tool.is_async) {
        cx.error(
            blocking.span,
            "`blocking` is for a synchronous function (it runs on tokio's blocking pool); an async tool awaits: \
             remove `async`, or run its blocking part with `tokio::task::spawn_blocking`",
        );
    }
    if tool.attr.task.is_none() {
        for p in tool.params.iter().filter(|p| matches!(p.kind, ParamKind::Extractor)) {
            if last_ident(&p.ty).is_some_and(|i| i == "Task") {
                cx.error_spanned_by(
                    &p.ty,
                    "a `Task` parameter needs a task tool: write `#[tool(task)]` (or `#[tool(task = required)]`)",
                );
            }
        }
    }
    let wholes: Vec<&Param> = tool
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Whole))
        .collect();
    if let Some(w) = wholes.first() {
        let others = tool
            .params
            .iter()
            .filter(|p| !matches!(p.kind, ParamKind::Extractor))
            .count();
        if wholes.len() > 1 || others > 1 {
            cx.error(
                w.ident.span(),
                "an #[arguments] parameter receives all the arguments: the other parameters must be extractors",
            );
        }
    }
}

/// The MCP Apps keys of a `#[tool]`: a `ui://` view, and a visibility of
/// `model` and `app`, each once.
fn ui(cx: &Ctxt, tool: &Tool) {
    if let Some(uri) = &tool.attr.ui {
        if !uri.value.starts_with("ui://") || uri.value.len() == "ui://".len() {
            cx.error(
                uri.span,
                "a tool's view is a `ui://` resource, like `ui = \"ui://weather/forecast\"`",
            );
        }
    }
    if let Some(visibility) = &tool.attr.visibility {
        if visibility.value.is_empty() {
            cx.error(visibility.span, "visibility lists who may call the tool: `visibility(model, app)`, `visibility(model)` or `visibility(app)`");
        }
        for (i, who) in visibility.value.iter().enumerate() {
            if who.value != "model" && who.value != "app" {
                cx.error(
                    who.span,
                    format!("unknown visibility `{}`; expected `model` or `app`", who.value),
                );
            } else if visibility.value[..i].iter().any(|w| w.value == who.value) {
                cx.error(who.span, format!("`{}` is given twice in visibility(..)", who.value));
            }
        }
    }
}

/// The MCP Apps rules of a `#[resource(app(..))]`: a static `ui://` URI,
/// the app MIME type (none given), known permissions.
fn app(cx: &Ctxt, r: &Resource) {
    let Some(app) = &r.attr.app else { return };
    if r.is_template || !r.uri.starts_with("ui://") {
        cx.error(
            r.uri_span,
            "an app is served at a static `ui://` URI, like `uri = \"ui://weather/forecast\"`",
        );
    }
    if r.attr.mime_type.is_some() {
        cx.error(
            app.span,
            "an app is served as `text/html;profile=mcp-app`: remove `mime_type`",
        );
    }
    for (i, p) in app.permissions.iter().enumerate() {
        if !matches!(
            p.value.as_str(),
            "camera" | "microphone" | "geolocation" | "clipboard_write"
        ) {
            cx.error(
                p.span,
                format!(
                    "unknown permission `{}`; expected camera, microphone, geolocation or clipboard_write",
                    p.value
                ),
            );
        } else if app.permissions[..i].iter().any(|q| q.value == p.value) {
            cx.error(p.span, format!("the permission `{}` is given twice", p.value));
        }
    }
}

/// The rules of a `#[prompt]`.
pub fn prompt(cx: &Ctxt, prompt: &Prompt) {
    signature(cx, &prompt.func, "#[prompt]");
    scopes(cx, &prompt.scopes);
    if prompt.name.is_empty() || prompt.name.len() > 128 {
        cx.error(prompt.name_span, "a prompt name has 1 to 128 characters");
    }
    arguments(cx, &prompt.params, "#[prompt]");
}

/// The rules of a `#[resource]`: one URI or template with a scheme, a known
/// cache scope, and template variables bound one to one to parameters.
pub fn resource(cx: &Ctxt, r: &Resource) {
    signature(cx, &r.func, "#[resource]");
    scopes(cx, &r.attr.scopes);
    arguments(cx, &r.params, "#[resource]");
    match (&r.attr.uri, &r.attr.uri_template) {
        (Some(u), Some(_)) => cx.error(u.span, "give either `uri` or `uri_template`, not both"),
        (None, None) => {
            let span = if r.attr_span.source_text().is_some() {
                r.attr_span
            } else {
                proc_macro2::Span::call_site()
            };
            cx.error(
                span,
                "#[resource] needs `uri = \"scheme://...\"` or `uri_template = \"scheme://{var}\"`",
            );
            return;
        }
        _ => {}
    }
    if !r.uri.contains(':') {
        cx.error(r.uri_span, "a resource URI needs a scheme, like `docs://readme`");
    }
    app(cx, r);
    if let Some(s) = &r.attr.cache_scope {
        if s.value != "public" && s.value != "private" {
            cx.error(s.span, "cache_scope is \"public\" or \"private\"");
        }
    }
    let vars: Vec<&str> = if r.is_template {
        match mcp_grammar::parse_template(&r.uri) {
            Ok(parts) => parts
                .into_iter()
                .filter_map(|p| match p {
                    mcp_grammar::TemplatePart::Variable { name, .. } => Some(name),
                    mcp_grammar::TemplatePart::Literal(_) => None,
                })
                .collect(),
            Err(why) => {
                cx.error(r.uri_span, why);
                return;
            }
        }
    } else {
        Vec::new()
    };
    for p in &r.params {
        if let ParamKind::Argument { wire, .. } = &p.kind {
            if !vars.contains(&wire.as_str()) {
                let why = if r.is_template {
                    format!("parameter `{wire}` has no `{{{wire}}}` variable in the URI template")
                } else {
                    format!("a static resource takes no parameters; use `uri_template` to bind `{wire}`")
                };
                cx.error(p.ident.span(), why);
            }
        }
    }
    for v in &vars {
        let bound = r
            .params
            .iter()
            .any(|p| matches!(&p.kind, ParamKind::Argument { wire, .. } if wire == v));
        if !bound {
            cx.error(r.uri_span, format!("template variable `{v}` has no parameter `{v}`"));
        }
    }
}
