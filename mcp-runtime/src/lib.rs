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
//!   [`Cancellation`], [`State`], [`Input`], [`Task`], [`Identity`],
//!   [`RequestHeaders`] (any [`FromContext`] type).
//! - Long-running tools (`#[tool(task)]`, the Tasks extension): [`Task`],
//!   [`TaskConfig`], and where tasks are kept, [`TaskStore`] ([`MemoryTaskStore`]).
//! - What handlers return: [`Json`], [`Summarized`], [`Blob`], [`Flow`] and [`Outcome`],
//!   or any [`IntoToolResult`] / [`IntoResourceContents`] /
//!   [`IntoPromptResult`] type; errors are [`McpError`].
//! - Transports: [`transport::stdio`], [`transport::http`] (a server, and a
//!   tower `Service` for axum), and the shared command line [`cli`].
//! - The wire types of MCP 2026-07-28: [`protocol`].
//! - Testing in process: [`testing::TestClient`].
//! - Protecting an HTTP endpoint (OAuth 2.1 resource server): [`auth`], and
//!   the [`Identity`] and [`RequestHeaders`] extractors.
//! - Visibility by predicate: `#[tool(visible_if = f)]`,
//!   [`ServerBuilder::visible_if`], what a predicate sees of the caller
//!   ([`Viewer`]) and of the item ([`Item`]).
//!
//! ## Cargo features
//!
//! - `redis`: many replicas sharing tasks and change events through Redis.
//! - `otel`: request spans and metrics after the OpenTelemetry MCP
//!   conventions, exported over OTLP and as Prometheus text ([`otel`]),
//!   continuing the caller's W3C trace.
//! - `auth`: the verifiers of an OAuth 2.1 resource server that ask an
//!   authorization server ([`auth::JwtVerifier`], [`auth::IntrospectionVerifier`]);
//!   the rest of [`auth`] (scopes, challenges, metadata, your own
//!   [`auth::TokenVerifier`]) is always there.
//!
//! How it is built inside (one-way layers, one home per spec concept) is
//! described in the repository's `ARCHITECTURE.md`.
#![warn(missing_docs)]

// Layers, bottom up; each module imports only from the layers below it
// (tests/layers.rs checks it against ARCHITECTURE.md).
pub mod protocol;

mod boxed;
mod cancel;
mod error;
mod headers;
mod jsonrpc;
mod meta;
mod method;
#[cfg(feature = "otel")]
pub mod otel;
mod outbound;
mod panic;
mod peer;
mod redact;
mod telemetry;
#[cfg(any(feature = "auth", feature = "otel", feature = "client"))]
mod tls;

pub mod auth;
mod calls;
mod content;
mod limits;
mod mrtr;
mod prompts;
mod resources;
mod schema;
mod session;
mod skills;
mod tasks;
mod textarg;
mod tools;

mod server;

#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "client")]
mod proxy;

#[cfg(feature = "redis")]
mod replicas;

mod dispatch;
mod legacy;

mod connection;

pub mod transport;

pub mod cli;
pub mod testing;

pub use calls::Calls;
pub use cancel::Cancellation;
pub use content::{Json, Summarized};
pub use error::{ErrorCode, McpError};
pub use limits::{Rate, RateError, RateFuture, RateStore, RateStoreError};
pub use mcp_macros::{form, prompt, resource, schema, skills, tool};
pub use meta::RequestMeta;
pub use mrtr::{Ask, Asks, ElicitForm, Elicited, Flow, Halt, Input, InputRequired, Outcome, Sampled, Sampling};
pub use prompts::IntoPromptResult;
#[cfg(feature = "client")]
pub use proxy::ProxyOptions;
pub use resources::{Blob, IntoResourceContents};
pub use server::{
    Awaiting, BuildError, CacheHint, Call, CallKind, CallOutcome, Config, Context, EventBus, FromContext, Identity,
    Item, Middleware, MiddlewareFuture, MountUris, PromptEntry, RendersApps, RequestHeaders, ResourceEntry, Server,
    ServerBuilder, ServerEvent, State, ToolEntry, Viewer, VisibleIf,
};
pub use session::SubscriptionLimits;
pub use skills::{SkillError, SkillRule, Skills};
pub use tasks::{
    MemoryTaskStore, StoreError, StoreFuture, Task, TaskChange, TaskConfig, TaskError, TaskMode, TaskRecord, TaskStore,
    TaskSupport,
};
pub use tools::IntoToolResult;

#[cfg(feature = "redis")]
pub use replicas::{RedisError, RedisShared, LEASE as REDIS_TASK_LEASE, REDIS_NAMESPACE_ENV, REDIS_URL_ENV};

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
        form, prompt, resource, schema, tool, Cancellation, Context, Identity, Json, McpError, Outcome, RendersApps,
        RequestHeaders, Server, State, Task, Viewer,
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

/// What the macros' generated code uses, and what the benchmarks and fuzz
/// targets drive directly. Not a public API.
#[doc(hidden)]
pub mod __private;
