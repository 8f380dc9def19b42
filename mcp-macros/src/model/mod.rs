//! Model: what the tool *is*, checked. Every parameter is classified as an
//! argument (part of the input schema) or an extractor (filled from the
//! request context); names are validated; unsupported shapes are rejected
//! with a span on the user's code.

use syn::spanned::Spanned;
use syn::{Attribute, FnArg, Ident, ItemFn, Pat, ReturnType, Type};

mod prompt;
mod resource;
mod tool;

pub use prompt::Prompt;
pub use resource::Resource;
pub use tool::Tool;

/// Type names recognised as extractors without `#[extract]`.
const EXTRACTORS: &[&str] = &["Context", "Cancellation", "State", "Input"];

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

/// Whether `name` is a valid tool name: 1 to 128 characters of `A-Za-z0-9_.-`.
pub fn valid_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

fn is_extractor_type(ty: &Type) -> bool {
    match ty {
        Type::Path(p) => p
            .path
            .segments
            .last()
            .is_some_and(|s| EXTRACTORS.contains(&s.ident.to_string().as_str())),
        _ => false,
    }
}

/// Reads `rename = "..."` and `default` out of `#[serde(...)]` attributes.
fn serde_facts(attrs: &[Attribute]) -> syn::Result<(Option<String>, bool)> {
    let mut rename = None;
    let mut has_default = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
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
            } else if meta.input.peek(syn::Token![=]) {
                meta.value()?.parse::<syn::Expr>()?;
            } else if meta.input.peek(syn::token::Paren) {
                meta.input.parse::<proc_macro2::Group>()?;
            }
            Ok(())
        })?;
    }
    Ok((rename, has_default))
}

pub fn param(arg: &mut FnArg, rules: ParamRules) -> syn::Result<Param> {
    let m = rules.macro_name;
    let typed = match arg {
        FnArg::Receiver(r) => {
            return Err(syn::Error::new_spanned(
                r,
                format!("{m} functions cannot take `self`: write a free function, and share state with the `State<T>` extractor"),
            ))
        }
        FnArg::Typed(t) => t,
    };
    let ident = match &*typed.pat {
        Pat::Ident(p) if p.subpat.is_none() => p.ident.clone(),
        other => {
            return Err(syn::Error::new(
                other.span(),
                format!("{m} parameters must be plain names (`name: Type`), not patterns"),
            ))
        }
    };
    let mut carried = Vec::new();
    let mut marked_extract = false;
    let mut whole = false;
    let mut complete = None;
    for attr in std::mem::take(&mut typed.attrs) {
        let path = attr.path();
        if path.is_ident("extract") {
            marked_extract = true;
        } else if rules.schema_attrs && path.is_ident("arguments") {
            whole = true;
        } else if path.is_ident("doc") || (rules.schema_attrs && (path.is_ident("serde") || path.is_ident("schemars")))
        {
            carried.push(attr);
        } else if rules.schema_attrs && path.is_ident("header") {
            let syn::Meta::NameValue(nv) = &attr.meta else {
                return Err(syn::Error::new(attr.span(), "expected #[header = \"Name\"]"));
            };
            let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(name),
                ..
            }) = &nv.value
            else {
                return Err(syn::Error::new(
                    nv.value.span(),
                    "expected a string: #[header = \"Name\"]",
                ));
            };
            if name.value().is_empty() || !name.value().bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
                return Err(syn::Error::new(
                    name.span(),
                    "a header name suffix uses A-Za-z0-9 and `-`",
                ));
            }
            carried.push(syn::parse_quote!(#[schemars(extend("x-mcp-header" = #name))]));
        } else if rules.complete && path.is_ident("complete") {
            complete = Some(parse_complete(&attr)?);
        } else {
            let allowed = if rules.schema_attrs {
                "doc comments, #[serde(...)], #[schemars(...)], #[header = \"Name\"], #[arguments], #[extract]"
            } else {
                "doc comments, #[complete(with = f)], #[extract]"
            };
            return Err(syn::Error::new_spanned(
                &attr,
                format!("unsupported attribute on a {m} parameter; allowed: {allowed}"),
            ));
        }
    }
    let ty = (*typed.ty).clone();
    if marked_extract || is_extractor_type(&ty) {
        if let Some(attr) = carried.iter().find(|a| !a.path().is_ident("doc")) {
            return Err(syn::Error::new(
                attr.span(),
                "extractor parameters take no #[serde] or #[schemars] attributes",
            ));
        }
        return Ok(Param {
            ident,
            ty,
            kind: ParamKind::Extractor,
            complete: None,
        });
    }
    if let Type::Reference(r) = &ty {
        return Err(syn::Error::new_spanned(
            r,
            format!("{m} arguments must be owned types (for example `String`, not `&str`)"),
        ));
    }
    if let Type::ImplTrait(i) = &ty {
        return Err(syn::Error::new(
            i.span(),
            format!("{m} arguments cannot be `impl Trait`"),
        ));
    }
    if whole {
        return Ok(Param {
            ident,
            ty,
            kind: ParamKind::Whole,
            complete: None,
        });
    }
    let (rename, has_default) = serde_facts(&carried)?;
    let wire = rename.unwrap_or_else(|| ident.to_string().trim_start_matches("r#").to_owned());
    Ok(Param {
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

/// Rejects signatures no macro supports: generics, `const`, variadics.
pub fn check_signature(func: &ItemFn, m: &str) -> syn::Result<()> {
    let sig = &func.sig;
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return Err(syn::Error::new_spanned(
            &sig.generics,
            format!("{m} functions cannot be generic"),
        ));
    }
    if let Some(c) = &sig.constness {
        return Err(syn::Error::new(c.span(), format!("{m} functions cannot be `const`")));
    }
    if let Some(v) = &sig.variadic {
        return Err(syn::Error::new(v.span(), format!("{m} functions cannot be variadic")));
    }
    Ok(())
}

/// Classifies every parameter, gathering all errors at once.
pub fn params(func: &mut ItemFn, rules: ParamRules) -> syn::Result<Vec<Param>> {
    let mut params = Vec::new();
    let mut errors: Option<syn::Error> = None;
    for arg in func.sig.inputs.iter_mut() {
        match param(arg, rules) {
            Ok(p) => params.push(p),
            Err(e) => match &mut errors {
                Some(all) => all.combine(e),
                None => errors = Some(e),
            },
        }
    }
    match errors {
        Some(e) => Err(e),
        None => Ok(params),
    }
}

/// The declared return type (`()` when none), rejecting `impl Trait`.
pub fn output(func: &ItemFn, m: &str) -> syn::Result<Type> {
    match &func.sig.output {
        ReturnType::Default => Ok(syn::parse_quote!(())),
        ReturnType::Type(_, ty) => {
            if let Type::ImplTrait(i) = &**ty {
                return Err(syn::Error::new(
                    i.span(),
                    format!("{m} functions must name their return type, not `impl Trait`"),
                ));
            }
            Ok((**ty).clone())
        }
    }
}

/// Whether a type is syntactically `Option<...>`.
pub fn is_option(ty: &Type) -> bool {
    match ty {
        Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == "Option"),
        _ => false,
    }
}
