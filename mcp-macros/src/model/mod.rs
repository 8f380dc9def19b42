//! Model: what the item *is*. Every parameter is classified as an argument
//! (part of the input schema), the whole arguments object, or an extractor
//! (filled from the request context). Problems found while reading a
//! parameter go to the [`Ctxt`]; the rules about shapes and names live in
//! [`crate::check`].

use crate::ctxt::Ctxt;
use syn::spanned::Spanned;
use syn::{Attribute, FnArg, Ident, ItemFn, Pat, ReturnType, Type};

mod prompt;
mod resource;
mod tool;

pub use prompt::Prompt;
pub use resource::Resource;
pub use tool::Tool;

/// Type names recognised as extractors without `#[extract]`, with whether
/// the framework's type takes generic arguments (`State<T>` does; the
/// others do not), so that a user's `State` without them, or `Context<T>`,
/// is not taken for one. `#[arg]` forces a parameter to be an argument.
const EXTRACTORS: &[(&str, bool)] = &[
    ("Context", false),
    ("Cancellation", false),
    ("State", true),
    ("Input", false),
    ("Task", false),
    ("Identity", false),
    ("RequestHeaders", false),
    ("RendersApps", false),
];

pub enum ParamKind {
    /// `#[arguments]`: receives the whole arguments object; its type's schema
    /// is the tool's input schema.
    Whole,
    /// A schema property: its name on the wire, whether it has a serde
    /// default, and the attributes carried onto the arguments struct field.
    Argument {
        wire: String,
        has_default: bool,
        attrs: Vec<Attribute>,
    },
    /// Filled through `FromContext`.
    Extractor,
}

pub struct Param {
    pub ident: Ident,
    pub ty: Type,
    pub kind: ParamKind,
    /// `#[complete(with = f)]` (false) or `#[complete(with_context = f)]` (true).
    pub complete: Option<(syn::Path, bool)>,
}

/// Which parameter attributes a macro accepts.
#[derive(Clone, Copy)]
pub struct ParamRules {
    /// `#[serde(...)]`, `#[schemars(...)]`, `#[header = "..."]` (tools).
    pub schema_attrs: bool,
    /// `#[complete(...)]` (prompts, resource templates).
    pub complete: bool,
    /// The macro's name, for messages.
    pub macro_name: &'static str,
}

impl ParamRules {
    pub const TOOL: ParamRules = ParamRules {
        schema_attrs: true,
        complete: false,
        macro_name: "#[tool]",
    };
    pub const PROMPT: ParamRules = ParamRules {
        schema_attrs: false,
        complete: true,
        macro_name: "#[prompt]",
    };
    pub const RESOURCE: ParamRules = ParamRules {
        schema_attrs: false,
        complete: true,
        macro_name: "#[resource]",
    };
}

fn parse_complete(attr: &Attribute) -> syn::Result<(syn::Path, bool)> {
    let mut out = None;
    attr.parse_nested_meta(|meta| {
        let ctx = if meta.path.is_ident("with") {
            false
        } else if meta.path.is_ident("with_context") {
            true
        } else {
            return Err(meta.error("expected `with = path::to::fn` or `with_context = path::to::fn`"));
        };
        out = Some((meta.value()?.parse::<syn::Path>()?, ctx));
        Ok(())
    })?;
    out.ok_or_else(|| syn::Error::new(attr.span(), "expected #[complete(with = path::to::fn)]"))
}

fn is_extractor_type(ty: &Type) -> bool {
    let Type::Path(p) = ty else { return false };
    let Some(last) = p.path.segments.last() else {
        return false;
    };
    let generic = !matches!(last.arguments, syn::PathArguments::None);
    EXTRACTORS
        .iter()
        .any(|(name, takes_generics)| last.ident == name && generic == *takes_generics)
}

/// Steps over what follows a key this crate does not read (`= value` or
/// `(...)`), for the attribute's own macro to read.
fn skip_value(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.input.parse::<proc_macro2::Group>()?;
    }
    Ok(())
}

/// Reads `rename = "..."` and `default` out of `#[serde(...)]` attributes.
fn serde_facts(cx: &Ctxt, attrs: &[Attribute]) -> (Option<String>, bool) {
    let mut rename = None;
    let mut has_default = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let read = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                rename = Some(meta.value()?.parse::<syn::LitStr>()?.value());
            } else if meta.path.is_ident("flatten") {
                return Err(meta.error(
                    "#[serde(flatten)] on a tool parameter is not supported: take the whole arguments object with #[arguments] instead",
                ));
            } else if meta.path.is_ident("default") {
                has_default = true;
                if meta.input.peek(syn::Token![=]) {
                    meta.value()?.parse::<syn::LitStr>()?;
                }
            } else {
                skip_value(&meta)?;
            }
            Ok(())
        });
        if let Err(e) = read {
            cx.syn_error(e);
        }
    }
    (rename, has_default)
}

/// What `#[schemars(..)]` accepts that changes how a value is read too:
/// written there, it changes only the schema, and the arguments would not
/// decode as the schema says.
/// (`with = "Type"` stays: it only names the type whose schema to show.)
const SERDE_ONLY: &[&str] = &[
    "rename",
    "rename_all",
    "default",
    "skip",
    "skip_serializing",
    "skip_deserializing",
    "flatten",
];

/// Refuses the keys of `#[schemars(..)]` attributes that belong in
/// `#[serde(..)]` on a parameter (see [`SERDE_ONLY`]).
fn schemars_facts(cx: &Ctxt, m: &str, attrs: &[Attribute]) {
    for attr in attrs.iter().filter(|a| a.path().is_ident("schemars")) {
        let read = attr.parse_nested_meta(|meta| {
            if let Some(key) = SERDE_ONLY.iter().find(|k| meta.path.is_ident(k)) {
                return Err(meta.error(format!(
                    "#[schemars({key})] on a {m} parameter would change its schema but not how it is read: \
                     write #[serde({key} ..)] instead"
                )));
            }
            skip_value(&meta)
        });
        if let Err(e) = read {
            cx.syn_error(e);
        }
    }
}

/// Classifies one parameter; `None` (recorded) when it cannot be read at all.
pub fn param(cx: &Ctxt, arg: &mut FnArg, rules: ParamRules) -> Option<Param> {
    let m = rules.macro_name;
    let typed = match arg {
        FnArg::Receiver(r) => {
            cx.error_spanned_by(
                r,
                format!("{m} functions cannot take `self`: write a free function, and share state with the `State<T>` extractor"),
            );
            return None;
        }
        FnArg::Typed(t) => t,
    };
    let ident = match &*typed.pat {
        Pat::Ident(p) if p.subpat.is_none() => p.ident.clone(),
        other => {
            cx.error(
                other.span(),
                format!("{m} parameters must be plain names (`name: Type`), not patterns"),
            );
            return None;
        }
    };
    let mut carried = Vec::new();
    let mut marked_extract = None;
    let mut marked_arg = None;
    let mut whole = None;
    let mut complete = None;
    for attr in std::mem::take(&mut typed.attrs) {
        let path = attr.path();
        if path.is_ident("extract") {
            marked_extract = Some(attr.span());
        } else if path.is_ident("arg") {
            marked_arg = Some(attr.span());
        } else if rules.schema_attrs && path.is_ident("arguments") {
            whole = Some(attr);
        } else if path.is_ident("doc") {
            carried.push(crate::docs::carried(attr));
        } else if rules.schema_attrs && (path.is_ident("serde") || path.is_ident("schemars")) {
            carried.push(attr);
        } else if rules.schema_attrs && path.is_ident("header") {
            if let Some(header) = header_attr(cx, &attr) {
                carried.push(header);
            }
        } else if rules.complete && path.is_ident("complete") {
            match parse_complete(&attr) {
                Ok(c) => complete = Some(c),
                Err(e) => cx.syn_error(e),
            }
        } else {
            let allowed = if rules.schema_attrs {
                "doc comments, #[serde(...)], #[schemars(...)], #[header = \"Name\"], #[arguments], #[arg], #[extract]"
            } else {
                "doc comments, #[complete(with = f)], #[arg], #[extract]"
            };
            cx.error_spanned_by(
                &attr,
                format!("unsupported attribute on a {m} parameter; allowed: {allowed}"),
            );
        }
    }
    let ty = (*typed.ty).clone();
    if let (Some(span), Some(_)) = (marked_arg, marked_extract) {
        cx.error(span, "a parameter is either #[arg] or #[extract], not both");
    }
    if let Some(marker) = whole {
        // The whole object's schema and decoding are its type's: an attribute
        // meant for one argument would be dropped without a word.
        if marked_arg.is_some() || marked_extract.is_some() {
            cx.error_spanned_by(
                &marker,
                "#[arguments] takes the whole arguments object: it is not also #[arg] or #[extract]",
            );
        }
        if let Some(attr) = carried.iter().find(|a| !a.path().is_ident("doc")) {
            cx.error_spanned_by(
                attr,
                "an #[arguments] parameter takes its schema and decoding from its type: put #[serde] and \
                 #[schemars] attributes on the type and its fields",
            );
        }
        return Some(Param {
            ident,
            ty,
            kind: ParamKind::Whole,
            complete: None,
        });
    }
    if marked_extract.is_some() || (marked_arg.is_none() && is_extractor_type(&ty)) {
        if let Some(attr) = carried.iter().find(|a| !a.path().is_ident("doc")) {
            cx.error(
                attr.span(),
                "extractor parameters take no #[serde] or #[schemars] attributes",
            );
        }
        return Some(Param {
            ident,
            ty,
            kind: ParamKind::Extractor,
            complete: None,
        });
    }
    schemars_facts(cx, m, &carried);
    let (rename, has_default) = serde_facts(cx, &carried);
    let wire = rename.unwrap_or_else(|| ident.to_string().trim_start_matches("r#").to_owned());
    Some(Param {
        ident,
        ty,
        kind: ParamKind::Argument {
            wire,
            has_default,
            attrs: carried,
        },
        complete,
    })
}

/// `#[header = "Name"]` as the schemars attribute that writes `x-mcp-header`.
fn header_attr(cx: &Ctxt, attr: &Attribute) -> Option<Attribute> {
    let syn::Meta::NameValue(nv) = &attr.meta else {
        cx.error(attr.span(), "expected #[header = \"Name\"]");
        return None;
    };
    let syn::Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Str(name),
        ..
    }) = &nv.value
    else {
        cx.error(nv.value.span(), "expected a string: #[header = \"Name\"]");
        return None;
    };
    if name.value().is_empty() || !name.value().bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        cx.error(name.span(), "a header name suffix uses A-Za-z0-9 and `-`");
        return None;
    }
    Some(syn::parse_quote!(#[schemars(extend("x-mcp-header" = #name))]))
}

/// Classifies every parameter (each problem recorded).
pub fn params(cx: &Ctxt, func: &mut ItemFn, rules: ParamRules) -> Vec<Param> {
    func.sig
        .inputs
        .iter_mut()
        .filter_map(|arg| param(cx, arg, rules))
        .collect()
}

/// The declared return type (`()` when none).
pub fn output(func: &ItemFn) -> Type {
    match &func.sig.output {
        ReturnType::Default => syn::parse_quote!(()),
        ReturnType::Type(_, ty) => (**ty).clone(),
    }
}

/// Whether a type is syntactically `Option<...>`.
pub fn is_option(ty: &Type) -> bool {
    match ty {
        Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == "Option"),
        _ => false,
    }
}
