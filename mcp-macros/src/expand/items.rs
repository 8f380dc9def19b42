//! The code `#[resource]` and `#[prompt]` generate: like `#[tool]`, the
//! unchanged function, a type-namespace twin, and inside a `const _` block
//! the erased handler, the completers and the static descriptor in its
//! link-time slice.

use super::opt_str;
use crate::model::{is_option, Param, ParamKind, Prompt, Resource};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

fn checks(params: &[Param]) -> Vec<TokenStream> {
    params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Argument { .. }))
        .map(|p| {
            let ty = &p.ty;
            quote_spanned! {ty.span()=> const _: () = ::mcp_runtime::__private::assert_argument::<#ty>(); }
        })
        .collect()
}

fn extractors(params: &[Param], ready: &TokenStream) -> Vec<TokenStream> {
    params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Extractor))
        .map(|p| {
            let (ident, ty) = (&p.ident, &p.ty);
            quote_spanned! {ty.span()=>
                let #ident = match <#ty as ::mcp_runtime::__private::FromContext>::from_context(&__mcp_ctx) {
                    ::core::result::Result::Ok(v) => v,
                    ::core::result::Result::Err(e) => return #ready(::core::result::Result::Err(e)),
                };
            }
        })
        .collect()
}

fn completers(params: &[Param]) -> Vec<TokenStream> {
    params
        .iter()
        .filter_map(|p| match &p.kind {
            ParamKind::Argument { wire, .. } => Some((p, wire)),
            ParamKind::Extractor | ParamKind::Whole => None,
        })
        .map(|(p, wire)| {
            let ty = &p.ty;
            let custom = match &p.complete {
                None => quote!(::core::option::Option::None),
                Some((path, true)) => quote!(::core::option::Option::Some(#path)),
                Some((path, false)) => quote! {
                    ::core::option::Option::Some(|value: &str, _: &::mcp_runtime::__private::serde_json::Map<
                        ::std::string::String,
                        ::mcp_runtime::__private::serde_json::Value,
                    >| #path(value))
                },
            };
            quote! {
                ::mcp_runtime::__private::CompleterDef {
                    name: #wire,
                    custom: #custom,
                    values: ::mcp_runtime::__private::schema_values::<#ty>,
                }
            }
        })
        .collect()
}

/// The handler's call, as `__mcp_fn` (bound to the function before the
/// arguments are: an argument named like the function would hide it).
fn invoke(params: &[Param], is_async: bool) -> TokenStream {
    let args = params.iter().map(|p| &p.ident);
    if is_async {
        quote!(__mcp_fn(#(#args),*).await)
    } else {
        quote!(__mcp_fn(#(#args),*))
    }
}

fn location(fn_name: &str) -> TokenStream {
    quote!(::core::concat!(::core::module_path!(), "::", #fn_name, " (", ::core::file!(), ":", ::core::line!(), ")"))
}

/// `app: Option<&'static AppDef>` of `#[resource(app(..))]`.
fn app(app: Option<&crate::parse::AppAttr>) -> TokenStream {
    let Some(app) = app else {
        return quote!(::core::option::Option::None);
    };
    let list = |l: &Option<Vec<String>>| match l {
        Some(l) => quote!(::core::option::Option::Some(&[#(#l),*])),
        None => quote!(::core::option::Option::None),
    };
    let (connect, resource, frame, base_uri) = (
        list(&app.connect),
        list(&app.resource),
        list(&app.frame),
        list(&app.base_uri),
    );
    let permissions = app.permissions.iter().map(|p| {
        let variant = match p.value.as_str() {
            "camera" => quote!(Camera),
            "microphone" => quote!(Microphone),
            "geolocation" => quote!(Geolocation),
            _ => quote!(ClipboardWrite),
        };
        quote!(::mcp_runtime::__private::Permission::#variant)
    });
    let domain = super::opt_str(&app.domain);
    let prefers_border = super::opt_bool(app.prefers_border);
    quote! {
        ::core::option::Option::Some(&::mcp_runtime::__private::AppDef {
            connect_domains: #connect,
            resource_domains: #resource,
            frame_domains: #frame,
            base_uri_domains: #base_uri,
            permissions: &[#(#permissions),*],
            domain: #domain,
            prefers_border: #prefers_border,
        })
    }
}

pub fn resource(r: &Resource) -> TokenStream {
    let scopes: Vec<&str> = r.attr.scopes.iter().map(|s| s.value.as_str()).collect();
    let visible_if = super::visible_if(r.attr.visible_if.as_ref());
    let app = app(r.attr.app.as_ref());
    let func = &r.func;
    let (ident, vis) = (&func.sig.ident, &func.vis);
    let fn_name = ident.to_string();
    let (uri, name, is_template, ttl_ms) = (&r.uri, &r.name, r.is_template, r.ttl_ms);
    let (title, description, mime) = (
        opt_str(&r.title),
        crate::docs::Doc::tokens(&r.description),
        opt_str(&r.mime_type),
    );
    let scope = if r.public { quote!(Public) } else { quote!(Private) };
    let checks = checks(&r.params);
    let ready = quote!(::mcp_runtime::__private::ready_resource);
    let extract = extractors(&r.params, &ready);
    let completers = completers(&r.params);
    let n = completers.len();
    let bind = r.params.iter().filter_map(|p| match &p.kind {
        ParamKind::Argument { wire, .. } => {
            let (ident, ty) = (&p.ident, &p.ty);
            Some(quote! {
                let #ident: #ty = match ::mcp_runtime::__private::template_arg::<#ty>(__mcp_uri, __mcp_vars, #wire) {
                    ::core::result::Result::Ok(v) => v,
                    ::core::result::Result::Err(e) => return #ready(::core::result::Result::Err(e)),
                };
            })
        }
        ParamKind::Extractor | ParamKind::Whole => None,
    });
    let call = invoke(&r.params, r.is_async);
    let output = &r.output;
    let output_check = quote_spanned! {output.span()=>
        fn __mcp_convert(v: #output, uri: &str) -> ::core::result::Result<
            ::mcp_runtime::__private::Outcome<::std::vec::Vec<::mcp_runtime::__private::ResourceContents>>,
            ::mcp_runtime::__private::McpError,
        > {
            ::mcp_runtime::__private::IntoResourceContents::into_contents(v, uri, #mime)
        }
    };
    let location = location(&fn_name);
    let twin_doc = format!("The registered MCP resource `{uri}` (see the function `{fn_name}`).");
    quote! {
        #[allow(clippy::too_many_arguments)]
        #func

        #[allow(non_camel_case_types)]
        #[doc = #twin_doc]
        #vis struct #ident {}

        const _: () = {
            #(#checks)*
            #output_check

            #[allow(non_snake_case)]
            fn __mcp_read(
                __mcp_uri: &str,
                __mcp_vars: &[(::std::string::String, ::std::string::String)],
                __mcp_ctx: ::mcp_runtime::__private::Context,
            ) -> ::mcp_runtime::__private::ResourceFuture {
                let __mcp_fn = #ident;
                #(#bind)*
                #(#extract)*
                let _ = (&__mcp_ctx, __mcp_vars);
                let __mcp_uri = ::std::string::ToString::to_string(__mcp_uri);
                ::std::boxed::Box::pin(async move { __mcp_convert(#call, &__mcp_uri) })
            }

            static __MCP_COMPLETERS: [::mcp_runtime::__private::CompleterDef; #n] = [#(#completers),*];

            #[::mcp_runtime::__private::linkme::distributed_slice(::mcp_runtime::__private::RESOURCES)]
            #[linkme(crate = ::mcp_runtime::__private::linkme)]
            static __MCP_RESOURCE: ::mcp_runtime::__private::ResourceDef = ::mcp_runtime::__private::ResourceDef {
                uri: #uri,
                is_template: #is_template,
                name: #name,
                title: #title,
                description: #description,
                mime_type: #mime,
                ttl_ms: #ttl_ms,
                cache_scope: ::mcp_runtime::__private::CacheScope::#scope,
                read: __mcp_read,
                completers: &__MCP_COMPLETERS,
                scopes: &[#(#scopes),*],
                visible_if: #visible_if,
                app: #app,
                location: #location,
            };

            impl ::mcp_runtime::__private::RegisteredResource for #ident {
                const DEF: &'static ::mcp_runtime::__private::ResourceDef = &__MCP_RESOURCE;
            }
        };
    }
}

pub fn prompt(p: &Prompt) -> TokenStream {
    let scopes: Vec<&str> = p.scopes.iter().map(|s| s.value.as_str()).collect();
    let visible_if = super::visible_if(p.visible_if.as_ref());
    let func = &p.func;
    let (ident, vis) = (&func.sig.ident, &func.vis);
    let fn_name = ident.to_string();
    let name = &p.name;
    let (title, description) = (opt_str(&p.title), crate::docs::Doc::tokens(&p.description));
    let checks = checks(&p.params);
    let ready = quote!(::mcp_runtime::__private::ready_prompt);
    let extract = extractors(&p.params, &ready);
    let completers = completers(&p.params);
    let n = completers.len();
    let mut args = Vec::new();
    let mut bind = Vec::new();
    for param in &p.params {
        if let ParamKind::Argument { wire, attrs, .. } = &param.kind {
            let (ident, ty) = (&param.ident, &param.ty);
            let doc = crate::docs::Doc::tokens(&crate::docs::collect(attrs));
            let required = !is_option(ty);
            args.push(quote! {
                ::mcp_runtime::__private::PromptArgDef { name: #wire, description: #doc, required: #required }
            });
            bind.push(quote! {
                let #ident: #ty = match ::mcp_runtime::__private::prompt_arg::<#ty>(&__mcp_args, #wire) {
                    ::core::result::Result::Ok(v) => v,
                    ::core::result::Result::Err(e) => return #ready(::core::result::Result::Err(e)),
                };
            });
        }
    }
    let n_args = args.len();
    let call = invoke(&p.params, p.is_async);
    let output = &p.output;
    let output_check = quote_spanned! {output.span()=>
        fn __mcp_convert(v: #output) -> ::core::result::Result<
            ::mcp_runtime::__private::Outcome<::mcp_runtime::__private::GetPromptResult>,
            ::mcp_runtime::__private::McpError,
        > {
            ::mcp_runtime::__private::IntoPromptResult::into_prompt_result(v)
        }
    };
    let location = location(&fn_name);
    let twin_doc = format!("The registered MCP prompt `{name}` (see the function `{fn_name}`).");
    quote! {
        #[allow(clippy::too_many_arguments)]
        #func

        #[allow(non_camel_case_types)]
        #[doc = #twin_doc]
        #vis struct #ident {}

        const _: () = {
            #(#checks)*
            #output_check

            #[allow(non_snake_case)]
            fn __mcp_get(
                __mcp_args: ::mcp_runtime::__private::serde_json::Map<
                    ::std::string::String,
                    ::mcp_runtime::__private::serde_json::Value,
                >,
                __mcp_ctx: ::mcp_runtime::__private::Context,
            ) -> ::mcp_runtime::__private::PromptFuture {
                let __mcp_fn = #ident;
                #(#bind)*
                #(#extract)*
                let _ = (&__mcp_ctx, &__mcp_args);
                ::std::boxed::Box::pin(async move { __mcp_convert(#call) })
            }

            static __MCP_ARGS: [::mcp_runtime::__private::PromptArgDef; #n_args] = [#(#args),*];
            static __MCP_COMPLETERS: [::mcp_runtime::__private::CompleterDef; #n] = [#(#completers),*];

            #[::mcp_runtime::__private::linkme::distributed_slice(::mcp_runtime::__private::PROMPTS)]
            #[linkme(crate = ::mcp_runtime::__private::linkme)]
            static __MCP_PROMPT: ::mcp_runtime::__private::PromptDef = ::mcp_runtime::__private::PromptDef {
                name: #name,
                title: #title,
                description: #description,
                arguments: &__MCP_ARGS,
                get: __mcp_get,
                completers: &__MCP_COMPLETERS,
                scopes: &[#(#scopes),*],
                visible_if: #visible_if,
                location: #location,
            };

            impl ::mcp_runtime::__private::RegisteredPrompt for #ident {
                const DEF: &'static ::mcp_runtime::__private::PromptDef = &__MCP_PROMPT;
            }
        };
    }
}
