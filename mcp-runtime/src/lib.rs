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
//! The layers, bottom up (each imports only from those below it):
//! [`protocol`] (wire types) → [`error`], [`jsonrpc`], [`meta`] →
//! [`context`], [`tools`], [`registry`] → [`server`] → [`dispatch`] →
//! [`connection`] → [`transport`] → [`cli`].
#![warn(missing_docs)]

pub mod cli;
pub mod completion;
pub mod connection;
mod content;
pub mod context;
pub mod discover;
pub mod dispatch;
pub mod error;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod headers;
pub mod jsonrpc;
pub mod legacy;
pub mod meta;
pub mod mrtr;
pub mod outbound;
mod panic;
pub mod prompts;
pub mod protocol;
pub mod registry;
pub mod resources;
pub mod server;
mod state;
pub mod subscriptions;
pub mod textarg;
pub mod tools;
pub mod transport;

pub use context::{Cancellation, Context, FromContext};
pub use error::{ErrorCode, McpError};
pub use mcp_macros::{form, prompt, resource, schema, tool};
pub use mrtr::{Ask, Elicited, Flow, Halt, Input, Outcome, Sampled, Sampling};
pub use server::{BuildError, Server, ServerBuilder};
pub use state::State;
pub use tools::{IntoToolResult, Json};

/// Re-exported so that users need no direct dependency on them.
pub use {linkme, schemars, serde, serde_json};

/// Everything a server author usually needs: `use mcp_runtime::prelude::*;`.
pub mod prelude {
    pub use crate::context::{Cancellation, Context};
    pub use crate::mrtr::{Ask, Elicited, Flow, Halt, Input, Sampling};
    pub use crate::protocol::{
        AudioContent, ContentBlock, EmbeddedResource, ImageContent, LoggingLevel, PromptMessage, ResourceLink, Role,
        TextContent,
    };
    pub use crate::resources::Blob;
    pub use crate::{form, prompt, resource, schema, tool, Json, McpError, Outcome, Server, State};
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
    pub use crate::context::{Context, FromContext};
    pub use crate::mrtr::form::{assert_field, ElicitForm, FormEnum, FormField};
    pub use crate::mrtr::Outcome;
    pub use crate::prompts::{IntoPromptResult, PromptArgDef, PromptDef, PromptFuture, RegisteredPrompt};
    pub use crate::protocol::{CacheScope, CallToolResult, GetPromptResult, ResourceContents};
    pub use crate::registry::{PROMPTS, RESOURCES, TOOLS};
    pub use crate::resources::{CompleterDef, IntoResourceContents, RegisteredResource, ResourceDef, ResourceFuture};
    pub use crate::textarg::schema_values;
    pub use crate::tools::{
        decode_arguments, input_schema_for, probe, AnnotationHints, ArgSpec, IntoToolResult, RegisteredTool, ToolDef,
        ToolFuture,
    };
    pub use linkme;
    pub use schemars;
    pub use serde;
    pub use serde_json;
    pub use serde_json::value::RawValue;

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
