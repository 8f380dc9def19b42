//! Middleware at the MCP level: hooks around every tool call, resource read
//! and prompt get, in the order they were added ([`ServerBuilder::middleware`](super::ServerBuilder::middleware)).
//! `before` runs first to last and may refuse the call; `after` runs last
//! to first and sees how it ended. For audit logs, per-principal rate
//! limits, metrics.

use crate::error::McpError;
use serde_json::value::RawValue;
use std::future::Future;
use std::pin::Pin;

/// The future a [`Middleware`] hook returns.
pub type MiddlewareFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Which kind of handler a call reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    /// `tools/call`.
    Tool,
    /// `resources/read`.
    Resource,
    /// `prompts/get`.
    Prompt,
}

/// One handler call as middleware sees it. With MRTR, each round of a call
/// is a call of its own.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// Which kind of handler.
    pub kind: CallKind,
    /// The tool or prompt name, or the resource URI.
    pub name: &'a str,
    /// The authenticated principal, when the transport knows one.
    pub principal: Option<&'a str>,
    /// The arguments, as the client sent them (tools and prompts).
    pub arguments: Option<&'a RawValue>,
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq)]
pub enum CallOutcome {
    /// It answered; for a tool, whether its result is an `isError` one.
    Answered {
        /// A tool reported an error in its result.
        is_error: bool,
    },
    /// It asked the client for input (MRTR): another round will follow.
    InputRequired,
    /// It became a task.
    Task {
        /// The task's id.
        task_id: String,
    },
    /// It failed with a protocol error (a refusal by middleware included).
    Error {
        /// The JSON-RPC error code.
        code: i32,
        /// The message.
        message: String,
    },
}

/// A hook around handler calls. Both methods have defaults that do
/// nothing, so implement only what you need.
///
/// ```
/// use mcp_runtime::{Call, CallOutcome, Middleware, MiddlewareFuture};
///
/// /// Logs every call and how it ended.
/// struct Audit;
///
/// impl Middleware for Audit {
///     fn after<'a>(&'a self, call: &'a Call<'a>, outcome: &'a CallOutcome) -> MiddlewareFuture<'a, ()> {
///         Box::pin(async move {
///             tracing::info!(name = call.name, principal = ?call.principal, ?outcome, "audit");
///         })
///     }
/// }
/// # let _ = mcp_runtime::Server::builder().middleware(Audit);
/// ```
pub trait Middleware: Send + Sync + 'static {
    /// Before the handler runs: `Err` refuses the call. A refused tool call
    /// is answered with an `isError` result carrying the error's message
    /// (the model reads it: "rate limited, retry in 3 s"); a refused read or
    /// get is answered with the error itself.
    fn before<'a>(&'a self, call: &'a Call<'a>) -> MiddlewareFuture<'a, Result<(), McpError>> {
        let _ = call;
        Box::pin(std::future::ready(Ok(())))
    }

    /// After the call (also after a refusal by a later middleware).
    fn after<'a>(&'a self, call: &'a Call<'a>, outcome: &'a CallOutcome) -> MiddlewareFuture<'a, ()> {
        let _ = (call, outcome);
        Box::pin(std::future::ready(()))
    }
}
