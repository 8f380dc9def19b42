//! # mcp-runtime
//!
//! Write MCP (Model Context Protocol) servers as plain Rust functions.
//! Annotate a function with [`#[tool]`](macro@tool); its parameters become
//! the tool's JSON Schema (2020-12, derived with schemars), its doc comment
//! the description, and it is registered at link time: no router to
//! maintain. [`main!`] gives the binary a command line that serves stdio.
//!
//! ```no_run
//! use mcp_runtime::prelude::*;
//!
//! /// Adds two integers.
//! #[tool(read_only)]
//! fn add(
//!     /// The first addend.
//!     a: i64,
//!     /// The second addend.
//!     b: i64,
//! ) -> String {
//!     (a + b).to_string()
//! }
//!
//! mcp_runtime::main!();
//! ```
//!
//! ## What is here
//!
//! - The macros: [`tool`](macro@tool), [`resource`](macro@resource),
//!   [`prompt`](macro@prompt), [`form`](macro@form), [`schema`](macro@schema),
//!   [`main!`].
//! - The server: [`Server`], [`ServerBuilder`], and dynamic entries
//!   ([`ToolEntry`], [`ResourceEntry`], [`PromptEntry`]).
//! - Extractors, parameters filled from the request: [`Context`],
//!   [`Cancellation`], [`State`], [`Input`] (any [`FromContext`] type).
//! - What handlers return: [`Json`], [`Blob`], [`Flow`] and [`Outcome`],
//!   or any [`IntoToolResult`] / [`IntoResourceContents`] /
//!   [`IntoPromptResult`] type; errors are [`McpError`].
//! - Transports: [`transport::stdio`], [`transport::http`] (a server, and a
//!   tower `Service` for axum), and the shared command line [`cli`].
//! - The wire types of MCP 2026-07-28: [`protocol`].
//!
//! How it is built inside (one-way layers, one home per spec concept) is
//! described in the repository's `ARCHITECTURE.md`.
#![warn(missing_docs)]

// Layers, bottom up; each module imports only from the layers below it
// (tests/layers.rs checks it against ARCHITECTURE.md).
pub mod protocol;

mod cancel;
mod error;
mod headers;
mod jsonrpc;
mod meta;
mod method;
mod outbound;
mod panic;

mod content;
mod mrtr;
mod prompts;
mod resources;
mod schema;
mod session;
mod textarg;
mod tools;

mod server;

mod dispatch;
mod legacy;

mod connection;

pub mod transport;

pub mod cli;

pub use cancel::Cancellation;
pub use content::Json;
pub use error::{ErrorCode, McpError};
pub use mcp_macros::{form, prompt, resource, schema, tool};
pub use meta::RequestMeta;
pub use mrtr::{Ask, Asks, ElicitForm, Elicited, Flow, Halt, Input, InputRequired, Outcome, Sampled, Sampling};
pub use prompts::IntoPromptResult;
pub use resources::{Blob, IntoResourceContents};
pub use server::{
    BuildError, CacheHint, Config, Context, FromContext, PromptEntry, ResourceEntry, Server, ServerBuilder,
    ServerEvent, State, ToolEntry,
};
pub use tools::IntoToolResult;

/// Re-exported so that users need no direct dependency on them (dynamic
/// entries take `serde_json` maps; `#[schema]` types derive through these).
pub use {schemars, serde, serde_json};

/// The environment variable with the keys that seal `requestState`:
/// comma-separated base64 32-byte keys, newest first (older keys still open
/// states sealed before a rotation). Every replica needs the same keys.
pub const REQUEST_STATE_KEYS_ENV: &str = mrtr::seal::KEYS_ENV;

/// A new random `requestState` key, base64: a value for
/// [`REQUEST_STATE_KEYS_ENV`].
///
/// ```
/// let key = mcp_runtime::generate_request_state_key();
/// assert_eq!(key.len(), 44);
/// ```
pub fn generate_request_state_key() -> String {
    mrtr::seal::Sealer::generate_key()
}

/// Everything a server author usually needs: `use mcp_runtime::prelude::*;`.
pub mod prelude {
    pub use crate::mrtr::{Ask, Elicited, Flow, Halt, Input, Sampling};
    pub use crate::protocol::{
        AudioContent, ContentBlock, EmbeddedResource, ImageContent, LoggingLevel, PromptMessage, ResourceLink, Role,
        TextContent,
    };
    pub use crate::resources::Blob;
    pub use crate::{
        form, prompt, resource, schema, tool, Cancellation, Context, Json, McpError, Outcome, Server, State,
    };
}

/// The `serverInfo` of the crate this expands in: the binary's name (or the
/// package's) and the package version.
#[macro_export]
macro_rules! server_info {
    () => {
        $crate::protocol::Implementation {
            name: match ::core::option_env!("CARGO_BIN_NAME") {
                ::core::option::Option::Some(name) => name,
                ::core::option::Option::None => ::core::env!("CARGO_PKG_NAME"),
            }
            .into(),
            version: ::core::env!("CARGO_PKG_VERSION").into(),
            ..::core::default::Default::default()
        }
    };
}

/// Defines `fn main()` for a server binary: the shared command line
/// (`--stdio`, `--http ADDR`, `--help`), logging to stderr, every registered
/// handler served. Optionally takes a closure that configures the builder.
///
/// ```no_run
/// mcp_runtime::main!(|server| server.instructions("Answers questions about the weather."));
/// ```
#[macro_export]
macro_rules! main {
    () => {
        $crate::main!(|builder| builder);
    };
    ($configure:expr) => {
        fn main() -> ::std::process::ExitCode {
            $crate::cli::run($crate::server_info!(), $configure)
        }
    };
}

/// What the macros' generated code uses. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::error::McpError;
    pub use crate::mrtr::form::{assert_field, ElicitForm, FormEnum, FormField};
    pub use crate::mrtr::Outcome;
    pub use crate::prompts::IntoPromptResult;
    pub use crate::protocol::{CacheScope, CallToolResult, ClientCapability, GetPromptResult, ResourceContents};
    pub use crate::resources::IntoResourceContents;
    pub use crate::schema::input_schema_for;
    pub use crate::server::entry::{
        AnnotationHints, CompleterDef, PromptArgDef, PromptDef, PromptFuture, RegisteredPrompt, RegisteredResource,
        RegisteredTool, ResourceDef, ResourceFuture, ToolDef, ToolFuture,
    };
    pub use crate::server::registry::{PROMPTS, RESOURCES, TOOLS};
    pub use crate::server::{Context, FromContext};
    pub use crate::textarg::schema_values;
    pub use crate::tools::{decode_arguments, probe, ArgSpec, IntoToolResult};
    pub use linkme;
    pub use schemars;
    pub use serde;
    pub use serde_json;
    pub use serde_json::value::RawValue;

    /// The internals the benchmarks and fuzz targets drive directly: the
    /// framing and the dispatcher, without a transport.
    pub mod engine {
        pub use crate::dispatch::{handle_request, Reply, Scope};
        pub use crate::headers::HeaderFacts;
        pub use crate::jsonrpc::{encode_error, parse, Message, Rejected, Request};
        pub use crate::mrtr::seal::{Binding, Sealed, Sealer, REJECTED};
        pub use crate::resources::template::{percent_decode, UriTemplate};
    }

    /// Wraps a finished outcome as a tool future.
    pub fn ready(outcome: Result<Outcome<CallToolResult>, crate::McpError>) -> ToolFuture {
        Box::pin(std::future::ready(outcome))
    }

    /// Wraps a finished outcome as a resource future.
    pub fn ready_resource(outcome: Result<Outcome<Vec<ResourceContents>>, crate::McpError>) -> ResourceFuture {
        Box::pin(std::future::ready(outcome))
    }

    /// Wraps a finished outcome as a prompt future.
    pub fn ready_prompt(outcome: Result<Outcome<GetPromptResult>, crate::McpError>) -> PromptFuture {
        Box::pin(std::future::ready(outcome))
    }

    /// Parses the template variable `name` bound from `uri`.
    pub fn template_arg<T: serde::de::DeserializeOwned>(
        uri: &str,
        vars: &[(String, String)],
        name: &str,
    ) -> Result<T, crate::McpError> {
        let text = vars
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or_default();
        crate::textarg::parse_text::<T>(text).map_err(|why| {
            crate::McpError::invalid_params(format!("Resource not found: {uri} (`{name}`: {why})"))
                .with_data(serde_json::json!({ "uri": uri }))
        })
    }

    /// Parses the prompt argument `name` (absent: `null`, so `Option` is `None`).
    pub fn prompt_arg<T: serde::de::DeserializeOwned>(
        args: &serde_json::Map<String, serde_json::Value>,
        name: &str,
    ) -> Result<T, crate::McpError> {
        let parsed = match args.get(name) {
            Some(serde_json::Value::String(s)) => crate::textarg::parse_text::<T>(s),
            _ => serde_json::from_value::<T>(serde_json::Value::Null).map_err(|e| e.to_string()),
        };
        parsed.map_err(|why| crate::McpError::invalid_params(format!("Invalid params: argument `{name}`: {why}")))
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
}
