//! What the macros' generated code uses (one path, `::mcp_runtime::__private`),
//! and `engine`: the framing and the dispatcher without a transport, for the
//! benchmarks and the fuzz targets. Hidden from the documentation; not an API.

pub use crate::error::McpError;
pub use crate::mrtr::form::{assert_field, ElicitForm, FormEnum, FormField};
pub use crate::mrtr::Outcome;
pub use crate::prompts::IntoPromptResult;
pub use crate::protocol::Visibility;
pub use crate::protocol::{CacheScope, CallToolResult, ClientCapability, GetPromptResult, ResourceContents};
pub use crate::resources::IntoResourceContents;
pub use crate::schema::input_schema_for;
pub use crate::server::entry::{
    AnnotationHints, CompleterDef, PromptArgDef, PromptDef, PromptFuture, RegisteredPrompt, RegisteredResource,
    RegisteredTool, ResourceDef, ResourceFuture, ToolDef, ToolFuture,
};
pub use crate::server::registry::{PROMPTS, RESOURCES, TOOLS};
pub use crate::server::{AppDef, Context, FromContext, Permission, ToolUiDef, VisibleIf};
pub use crate::skills::embedded::{skills as embedded_skills, EmbeddedFile, EmbeddedSkill};
pub use crate::tasks::{TaskMode, TaskSupport};
pub use crate::textarg::schema_values;
pub use crate::tools::{decode_arguments, probe, ArgSpec, IntoToolResult};
pub use linkme;
pub use schemars;
pub use serde;
pub use serde_json;
pub use serde_json::value::RawValue;

/// A description joined by `concat!` from doc attributes, one of them an
/// expression (`#[doc = include_str!("tool.md")]`): without the blank lines
/// and spaces at its ends, and none when nothing else is left, as a
/// description of doc comments is.
pub const fn doc_text(text: &'static str) -> Option<&'static str> {
    let text = text.trim_ascii();
    if text.is_empty() {
        None
    } else {
        Some(text)
    }
}

/// Wraps a finished outcome as a tool future.
pub fn ready(outcome: Result<Outcome<CallToolResult>, crate::error::McpError>) -> ToolFuture {
    Box::pin(std::future::ready(outcome))
}

/// Runs a `#[tool(blocking)]` function on tokio's blocking pool, so that it
/// never holds the thread that serves the stream. Its panic is raised again
/// here, where the dispatcher catches it (the caller gets -32603); a
/// runtime that stops before it ran answers -32603 too.
pub async fn call_blocking<F>(f: F) -> Result<Outcome<CallToolResult>, crate::error::McpError>
where
    F: FnOnce() -> Result<Outcome<CallToolResult>, crate::error::McpError> + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(outcome) => outcome,
        Err(e) => match e.try_into_panic() {
            Ok(payload) => std::panic::resume_unwind(payload),
            Err(_) => Err(crate::error::McpError::internal(
                "Internal error: the server stopped before the tool ran",
            )),
        },
    }
}

/// Wraps a finished outcome as a resource future.
pub fn ready_resource(outcome: Result<Outcome<Vec<ResourceContents>>, crate::error::McpError>) -> ResourceFuture {
    Box::pin(std::future::ready(outcome))
}

/// Wraps a finished outcome as a prompt future.
pub fn ready_prompt(outcome: Result<Outcome<GetPromptResult>, crate::error::McpError>) -> PromptFuture {
    Box::pin(std::future::ready(outcome))
}

/// Parses the template variable `name` bound from `uri`.
pub fn template_arg<T: serde::de::DeserializeOwned>(
    uri: &str,
    vars: &[(String, String)],
    name: &str,
) -> Result<T, crate::error::McpError> {
    let text = vars
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_default();
    crate::textarg::parse_text::<T>(text).map_err(|why| {
        crate::error::McpError::invalid_params(format!("Resource not found: {uri} (`{name}`: {why})"))
            .with_data(serde_json::json!({ "uri": uri }))
            .marked_resource_not_found()
    })
}

/// Parses the prompt argument `name` (absent: `null`, so `Option` is `None`).
pub fn prompt_arg<T: serde::de::DeserializeOwned>(
    args: &serde_json::Map<String, serde_json::Value>,
    name: &str,
) -> Result<T, crate::error::McpError> {
    let parsed = match args.get(name) {
        Some(serde_json::Value::String(s)) => crate::textarg::parse_text::<T>(s),
        _ => serde_json::from_value::<T>(serde_json::Value::Null).map_err(|e| e.to_string()),
    };
    parsed.map_err(|why| crate::error::McpError::invalid_params(format!("Invalid params: argument `{name}`: {why}")))
}

/// Asserts at compile time that a parameter type can be a tool argument.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a #[tool] argument",
    label = "this parameter's type must implement `JsonSchema` and `Deserialize`",
    note = "derive both with #[mcp_runtime::schema] on the type, or mark the parameter #[extract] if it is an extractor"
)]
pub trait ToolArgument {}
impl<T: schemars::JsonSchema + serde::de::DeserializeOwned> ToolArgument for T {}

/// Compile-time check helper for [`ToolArgument`].
pub const fn assert_argument<T: ToolArgument + ?Sized>() {}

/// The internals the benchmarks and fuzz targets drive directly: the
/// framing and the dispatcher, without a transport.
pub mod engine {
    pub use crate::dispatch::{handle_request, Reply, Scope};
    pub use crate::jsonrpc::{parse, Message};
    pub use crate::mrtr::seal::REJECTED;

    /// JSON-RPC framing.
    pub mod jsonrpc {
        pub use crate::jsonrpc::{
            encode_error, encode_notification, encode_request, encode_result_raw, parse, Message, Rejected, Request,
        };
    }

    /// `_meta` validation.
    pub mod meta {
        pub use crate::meta::{has_protocol_version, meta_has_version, validate, MetaSlot, SUPPORTED_VERSIONS};
    }

    /// Header facts against the body.
    pub mod headers {
        pub use crate::headers::{decode_value, text, HeaderFacts};
    }

    /// Sealing `requestState`.
    pub mod seal {
        pub use crate::mrtr::seal::{Binding, Sealed, Sealer, REJECTED};
    }

    /// URI templates.
    pub mod template {
        pub use crate::resources::template::{percent_decode, UriTemplate};
    }

    /// The dispatcher.
    pub mod dispatch {
        pub use crate::dispatch::{handle_request, Reply, Scope};

        /// Whether a method keeps its response stream open (`subscriptions/listen`).
        pub fn is_long_lived(method: &str) -> bool {
            crate::method::Method::parse(method).is_some_and(|m| m.is_long_lived())
        }
    }

    /// The dispatcher's one pass over a request's params.
    pub mod head {
        use crate::dispatch::Head;
        use crate::error::McpError;
        use crate::meta::MetaSlot;
        use serde_json::value::RawValue;
        use std::borrow::Cow;

        /// The fields the one pass reads, as it read them.
        #[derive(Debug, Clone, Copy)]
        pub struct HeadView<'a> {
            /// `_meta`.
            pub meta: Option<MetaSlot<'a>>,
            /// `name`.
            pub name: Option<&'a RawValue>,
            /// `uri`.
            pub uri: Option<&'a RawValue>,
            /// `arguments`.
            pub arguments: Option<&'a RawValue>,
            /// `inputResponses`.
            pub input_responses: Option<&'a RawValue>,
            /// `requestState`.
            pub request_state: Option<&'a RawValue>,
            /// `taskId`.
            pub task_id: Option<&'a RawValue>,
        }

        impl<'a> HeadView<'a> {
            /// The name `Mcp-Name` must repeat for the method named `method`.
            pub fn routing_name(&self, method: &str) -> Option<Cow<'a, str>> {
                let head = Head {
                    meta: self.meta,
                    name: self.name,
                    uri: self.uri,
                    arguments: self.arguments,
                    input_responses: self.input_responses,
                    request_state: self.request_state,
                    task_id: self.task_id,
                };
                head.routing_name(crate::method::Method::parse(method).filter(|m| m.is_modern_request()))
            }
        }

        /// The one pass over params.
        pub fn read_head(params: Option<&RawValue>) -> Result<HeadView<'_>, McpError> {
            let h = Head::parse(params)?;
            Ok(HeadView {
                meta: h.meta,
                name: h.name,
                uri: h.uri,
                arguments: h.arguments,
                input_responses: h.input_responses,
                request_state: h.request_state,
                task_id: h.task_id,
            })
        }

        /// An optional string field, -32602 naming it otherwise.
        pub fn head_string<'a>(raw: Option<&'a RawValue>, field: &str) -> Result<Option<Cow<'a, str>>, McpError> {
            Head::string(raw, field)
        }

        /// A required string field.
        pub fn head_required<'a>(raw: Option<&'a RawValue>, field: &str) -> Result<Cow<'a, str>, McpError> {
            Head::required(raw, field)
        }
    }
}
