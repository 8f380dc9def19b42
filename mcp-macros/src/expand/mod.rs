//! Expand: the code `#[tool]` and `#[schema]` generate.
//!
//! For a tool function `f`, next to the unchanged function:
//! - a type-namespace twin `struct f {}` implementing `RegisteredTool`, so
//!   `ServerBuilder::tool::<f>()` can name it;
//! - inside `const _: () = { ... }`: the hidden arguments struct (serde +
//!   schemars derives through the runtime's re-exports), the erased handler,
//!   the schema builders, and the static `ToolDef` in the link-time slice.

mod items;

pub use items::{prompt, resource};

use crate::model::{ParamKind, Tool};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

pub(crate) fn opt_str(value: &Option<String>) -> TokenStream {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

pub(crate) fn opt_bool(value: Option<bool>) -> TokenStream {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

/// `visible_if = f` as the descriptor's field: `f` checked where it was
/// written to be a `fn(&Viewer<'_>) -> bool`.
pub(crate) fn visible_if(path: Option<&syn::Path>) -> TokenStream {
    match path {
        Some(path) => quote_spanned! {path.span()=>
            {
                const __MCP_VISIBLE_IF: ::mcp_runtime::__private::VisibleIf = #path;
                ::core::option::Option::Some(__MCP_VISIBLE_IF)
            }
        },
        None => quote!(::core::option::Option::None),
    }
}

/// `ui: Option<&'static ToolUiDef>` of a tool's `ui` and `visibility` keys.
fn tool_ui(tool: &Tool) -> TokenStream {
    if tool.attr.ui.is_none() && tool.attr.visibility.is_none() {
        return quote!(::core::option::Option::None);
    }
    let uri = opt_str(&tool.attr.ui.as_ref().map(|u| u.value.clone()));
    let who = tool
        .attr
        .visibility
        .iter()
        .flat_map(|v| &v.value)
        .map(|w| match w.value.as_str() {
            "app" => quote!(::mcp_runtime::__private::Visibility::App),
            _ => quote!(::mcp_runtime::__private::Visibility::Model),
        });
    quote! {
        ::core::option::Option::Some(&::mcp_runtime::__private::ToolUiDef {
            resource_uri: #uri,
            visibility: &[#(#who),*],
        })
    }
}

fn opt_u64(value: Option<u64>) -> TokenStream {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

pub fn tool(tool: &Tool) -> TokenStream {
    let func = &tool.func;
    let fn_ident = &func.sig.ident;
    let vis = &func.vis;
    let name = &tool.name;
    let fn_name = fn_ident.to_string();
    let title = opt_str(&tool.title);
    let description = crate::docs::Doc::tokens(&tool.description);
    let (ro, de, id, ow) = (
        opt_bool(tool.attr.read_only),
        opt_bool(tool.attr.destructive),
        opt_bool(tool.attr.idempotent),
        opt_bool(tool.attr.open_world),
    );
    let keep_defs = tool.attr.keep_defs;
    let output = &tool.output;
    // A schema that may declare header parameters is checked at start-up:
    // one with a parameter's schemars attribute (`#[header]` is one), the
    // whole arguments object, or an argument whose type's own schema may
    // carry an extension (anything but the standard scalars and strings).
    let check_schema = tool.params.iter().any(|p| match &p.kind {
        ParamKind::Whole => true,
        ParamKind::Argument { attrs, .. } => {
            attrs.iter().any(|a| a.path().is_ident("schemars")) || !is_plain_type(&p.ty)
        }
        ParamKind::Extractor => false,
    });

    let mut fields = Vec::new();
    let mut specs = Vec::new();
    let mut checks = Vec::new();
    let mut arg_idents = Vec::new();
    for (p, wire, has_default, attrs) in tool.arguments() {
        let (ident, ty) = (&p.ident, &p.ty);
        fields.push(quote!(#(#attrs)* #ident: #ty));
        specs.push(quote! {
            ::mcp_runtime::__private::ArgSpec {
                name: #wire,
                probe: ::mcp_runtime::__private::probe::<#ty>,
                has_default: #has_default,
            }
        });
        checks.push(quote_spanned! {ty.span()=>
            const _: () = ::mcp_runtime::__private::assert_argument::<#ty>();
        });
        arg_idents.push(ident);
    }
    let extract = tool.params.iter().filter(|p| matches!(p.kind, ParamKind::Extractor)).map(|p| {
        let (ident, ty) = (&p.ident, &p.ty);
        quote_spanned! {ty.span()=>
            let #ident = match <#ty as ::mcp_runtime::__private::FromContext>::from_context(&__mcp_ctx) {
                ::core::result::Result::Ok(v) => v,
                ::core::result::Result::Err(e) => return ::mcp_runtime::__private::ready(::core::result::Result::Err(e)),
            };
        }
    });
    let call_args = tool.params.iter().map(|p| &p.ident);
    let blocking = tool.attr.blocking.as_ref().is_some_and(|b| b.value);
    // Called as `__mcp_fn`, bound before the arguments: an argument named
    // like the function (`fn query(query: String)`) would hide it.
    let convert = if tool.is_async {
        quote!(__mcp_convert(__mcp_fn(#(#call_args),*).await))
    } else if blocking {
        quote!(::mcp_runtime::__private::call_blocking(move || __mcp_convert(__mcp_fn(#(#call_args),*))).await)
    } else {
        quote!(__mcp_convert(__mcp_fn(#(#call_args),*)))
    };
    let output_check = quote_spanned! {output.span()=>
        fn __mcp_output_schema() -> ::core::option::Option<::mcp_runtime::__private::serde_json::Value> {
            <#output as ::mcp_runtime::__private::IntoToolResult>::output_schema(#keep_defs)
        }
        fn __mcp_convert(v: #output) -> ::core::result::Result<
            ::mcp_runtime::__private::Outcome<::mcp_runtime::__private::CallToolResult>,
            ::mcp_runtime::__private::McpError,
        > {
            ::mcp_runtime::__private::IntoToolResult::into_tool_result(v)
        }
    };
    let twin_doc = format!("The registered MCP tool `{name}` (see the function `{fn_name}`).");
    let scopes: Vec<&str> = tool.attr.scopes.iter().map(|s| s.value.as_str()).collect();
    let requires: Vec<TokenStream> = tool
        .attr
        .requires
        .iter()
        .map(|name| {
            let variant = match name.as_str() {
                "sampling" => quote!(Sampling),
                "roots" => quote!(Roots),
                _ => quote!(Elicitation),
            };
            quote!(::mcp_runtime::__private::ClientCapability::#variant)
        })
        .collect();
    let timeout = opt_u64(tool.attr.timeout_ms);
    let max_concurrency = opt_u64(tool.attr.max_concurrency);
    let rate_limit = match tool.attr.rate_limit {
        Some((count, period_ms, burst)) => quote!(::core::option::Option::Some(
            ::mcp_runtime::Rate::__from_parts(#count, #period_ms, #burst)
        )),
        None => quote!(::core::option::Option::None),
    };
    let visible_if = visible_if(tool.attr.visible_if.as_ref());
    let ui = tool_ui(tool);
    let task = match &tool.attr.task {
        None => quote!(::mcp_runtime::__private::TaskSupport::NEVER),
        Some(t) => {
            let mode = if t.required { quote!(Required) } else { quote!(Optional) };
            let ttl = opt_u64(t.ttl_ms);
            let poll = opt_u64(t.poll_interval_ms);
            quote! {
                ::mcp_runtime::__private::TaskSupport {
                    mode: ::mcp_runtime::__private::TaskMode::#mode,
                    ttl_ms: #ttl,
                    poll_interval_ms: #poll,
                }
            }
        }
    };
    let (args_struct, destructure) = match tool.whole() {
        Some(w) => {
            let (ident, ty) = (&w.ident, &w.ty);
            checks.push(quote_spanned! {ty.span()=>
                const _: () = ::mcp_runtime::__private::assert_argument::<#ty>();
            });
            (quote!(type __McpArgs = #ty;), quote!(let #ident))
        }
        None => (
            quote! {
                #[derive(::mcp_runtime::__private::serde::Deserialize, ::mcp_runtime::__private::schemars::JsonSchema)]
                #[serde(crate = "::mcp_runtime::__private::serde", deny_unknown_fields)]
                #[schemars(crate = "::mcp_runtime::__private::schemars")]
                #[allow(non_camel_case_types, non_snake_case)]
                struct __McpArgs {
                    #(#fields,)*
                }
            },
            quote!(let __McpArgs { #(#arg_idents,)* }),
        ),
    };

    quote! {
        // A tool's parameters are its schema: many of them is normal.
        #[allow(clippy::too_many_arguments)]
        #func

        #[allow(non_camel_case_types)]
        #[doc = #twin_doc]
        #vis struct #fn_ident {}

        const _: () = {
            #(#checks)*

            #args_struct

            #[allow(non_snake_case)]
            fn __mcp_call(
                __mcp_args: ::core::option::Option<&::mcp_runtime::__private::RawValue>,
                __mcp_ctx: ::mcp_runtime::__private::Context,
            ) -> ::mcp_runtime::__private::ToolFuture {
                let __mcp_fn = #fn_ident;
                #destructure = match ::mcp_runtime::__private::decode_arguments::<__McpArgs>(
                    #name,
                    __mcp_args,
                    &[#(#specs),*],
                ) {
                    ::core::result::Result::Ok(v) => v,
                    ::core::result::Result::Err(e) => {
                        return ::mcp_runtime::__private::ready(::core::result::Result::Ok(
                            ::mcp_runtime::__private::Outcome::Complete(*e),
                        ))
                    }
                };
                #(#extract)*
                let _ = &__mcp_ctx;
                ::std::boxed::Box::pin(async move {
                    #convert
                })
            }

            fn __mcp_input_schema() -> ::mcp_runtime::__private::serde_json::Value {
                ::mcp_runtime::__private::input_schema_for::<__McpArgs>(#keep_defs)
            }

            #output_check

            #[::mcp_runtime::__private::linkme::distributed_slice(::mcp_runtime::__private::TOOLS)]
            #[linkme(crate = ::mcp_runtime::__private::linkme)]
            static __MCP_TOOL: ::mcp_runtime::__private::ToolDef = ::mcp_runtime::__private::ToolDef {
                name: #name,
                title: #title,
                description: #description,
                hints: ::mcp_runtime::__private::AnnotationHints {
                    read_only: #ro,
                    destructive: #de,
                    idempotent: #id,
                    open_world: #ow,
                },
                input_schema: __mcp_input_schema,
                check_schema: #check_schema,
                output_schema: __mcp_output_schema,
                call: __mcp_call,
                requires: &[#(#requires),*],
                task: #task,
                scopes: &[#(#scopes),*],
                timeout_ms: #timeout,
                max_concurrency: #max_concurrency,
                blocking: #blocking,
                rate_limit: #rate_limit,
                visible_if: #visible_if,
                ui: #ui,
                location: ::core::concat!(::core::module_path!(), "::", #fn_name, " (", ::core::file!(), ":", ::core::line!(), ")"),
            };

            impl ::mcp_runtime::__private::RegisteredTool for #fn_ident {
                const DEF: &'static ::mcp_runtime::__private::ToolDef = &__MCP_TOOL;
            }
        };
    }
}

pub fn schema(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    if !attr.is_empty() {
        return Err(syn::Error::new(attr.span(), "#[schema] takes no arguments"));
    }
    let item: syn::DeriveInput =
        syn::parse2(item).map_err(|e| syn::Error::new(e.span(), "#[schema] applies to a struct or an enum"))?;
    Ok(quote! {
        #[derive(
            ::mcp_runtime::__private::serde::Serialize,
            ::mcp_runtime::__private::serde::Deserialize,
            ::mcp_runtime::__private::schemars::JsonSchema
        )]
        #[serde(crate = "::mcp_runtime::__private::serde")]
        #[schemars(crate = "::mcp_runtime::__private::schemars")]
        #item
    })
}

pub fn form(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    if !attr.is_empty() {
        return Err(syn::Error::new(attr.span(), "#[form] takes no arguments"));
    }
    let input: syn::DeriveInput = syn::parse2(item).map_err(|e| {
        syn::Error::new(
            e.span(),
            "#[form] applies to a struct with named fields or a unit-only enum",
        )
    })?;
    let ident = &input.ident;
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new(
            input.generics.span(),
            "#[form] types cannot be generic",
        ));
    }
    let derives = quote! {
        #[derive(
            ::mcp_runtime::__private::serde::Serialize,
            ::mcp_runtime::__private::serde::Deserialize,
            ::mcp_runtime::__private::schemars::JsonSchema
        )]
        #[serde(crate = "::mcp_runtime::__private::serde")]
        #[schemars(crate = "::mcp_runtime::__private::schemars")]
    };
    let impls = match &input.data {
        syn::Data::Struct(s) => {
            let syn::Fields::Named(fields) = &s.fields else {
                return Err(syn::Error::new(s.fields.span(), "#[form] structs need named fields"));
            };
            let checks = fields.named.iter().map(|f| {
                let ty = &f.ty;
                quote_spanned! {ty.span()=> const _: () = ::mcp_runtime::__private::assert_field::<#ty>(); }
            });
            quote! {
                const _: () = { #(#checks)* };
                impl ::mcp_runtime::__private::ElicitForm for #ident {}
            }
        }
        syn::Data::Enum(e) => {
            if let Some(v) = e.variants.iter().find(|v| !matches!(v.fields, syn::Fields::Unit)) {
                return Err(syn::Error::new(
                    v.span(),
                    "#[form] enums are selects: every variant must be a unit variant",
                ));
            }
            quote! {
                impl ::mcp_runtime::__private::FormField for #ident {}
                impl ::mcp_runtime::__private::FormEnum for #ident {}
            }
        }
        syn::Data::Union(u) => {
            return Err(syn::Error::new(
                u.union_token.span(),
                "#[form] does not apply to unions",
            ))
        }
    };
    Ok(quote! {
        #derives
        #input
        #impls
    })
}

/// Whether `ty` is a standard scalar or string, or an `Option`, `Vec` or
/// reference of one: a type whose schema no user attribute can extend.
fn is_plain_type(ty: &syn::Type) -> bool {
    const SCALARS: &[&str] = &[
        "String", "str", "bool", "char", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128",
        "isize", "f32", "f64",
    ];
    match ty {
        syn::Type::Reference(r) => is_plain_type(&r.elem),
        syn::Type::Path(p) if p.qself.is_none() => {
            let Some(last) = p.path.segments.last() else {
                return false;
            };
            match &last.arguments {
                syn::PathArguments::None => SCALARS.iter().any(|s| last.ident == s),
                syn::PathArguments::AngleBracketed(args) if last.ident == "Option" || last.ident == "Vec" => args
                    .args
                    .iter()
                    .all(|a| matches!(a, syn::GenericArgument::Type(t) if is_plain_type(t))),
                _ => false,
            }
        }
        _ => false,
    }
}
