//! What a handler can learn about, and do within, the request it serves:
//! the [`Context`] extractor and the pieces it is made of.

use crate::error::McpError;
use crate::jsonrpc;
use crate::meta::RequestMeta;
use crate::protocol::{ClientCapabilities, Implementation, LoggingLevel, RequestId};
use serde::Serialize;
use std::sync::Arc;

use crate::cancel::Cancellation;
use crate::outbound::Outbound;

pub(crate) struct RequestScope {
    pub id: RequestId,
    pub meta: RequestMeta,
    pub cancel: Cancellation,
    pub outbound: Option<Outbound>,
    pub state: super::StateMap,
    pub server: super::Server,
    pub mrtr: Option<std::sync::Arc<crate::mrtr::MrtrScope>>,
    pub principal: Option<String>,
    /// The legacy session the request belongs to, if any.
    pub session: Option<Arc<crate::session::Session>>,
    /// The verified access token of an authorized HTTP request.
    pub identity: Option<Arc<crate::auth::AccessToken>>,
    /// The HTTP request's headers (without `Authorization`).
    pub headers: crate::headers::HeaderFacts,
    /// Set by `tools/call` before a `#[tool(task)]` handler runs.
    pub task: std::sync::OnceLock<Arc<crate::tasks::Shared>>,
    /// Set by `tools/call` before the handler of a tool whose upstream runs
    /// tasks: where the handler leaves the upstream's task, if it made one.
    #[cfg(feature = "client")]
    pub relayed: std::sync::OnceLock<crate::tasks::relay::Slot>,
    /// The client's address, when the transport knows it.
    pub peer: Option<std::net::IpAddr>,
}

/// The request a handler is serving: its metadata, the client's declared
/// capabilities, cancellation, progress and logging.
///
/// Add a `Context` parameter to any `#[tool]` function; it never appears in
/// the tool's input schema.
///
/// ```
/// use mcp_runtime::prelude::*;
///
/// /// Counts to `n`, reporting progress.
/// #[tool]
/// async fn count(n: u32, ctx: Context) -> String {
///     for i in 0..n {
///         ctx.progress(i as f64, Some(n as f64), None);
///     }
///     format!("counted to {n} for {:?}", ctx.client_info().map(|c| &c.name))
/// }
/// # fn main() {}
/// ```
#[derive(Clone)]
pub struct Context {
    pub(crate) scope: Arc<RequestScope>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("id", &self.scope.id)
            .field("meta", &self.scope.meta)
            .finish()
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ProgressParams<'a> {
    progress_token: &'a RequestId,
    progress: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    total: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
}

#[derive(Serialize)]
struct LogParams<'a, T: Serialize> {
    level: LoggingLevel,
    #[serde(skip_serializing_if = "Option::is_none")]
    logger: Option<&'a str>,
    data: &'a T,
}

impl Context {
    pub(crate) fn new(scope: RequestScope) -> Self {
        Context { scope: Arc::new(scope) }
    }

    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.scope.id
    }

    /// The validated `_meta` of the request.
    pub fn meta(&self) -> &RequestMeta {
        &self.scope.meta
    }

    /// The protocol revision the request speaks.
    pub fn protocol_version(&self) -> &str {
        &self.scope.meta.protocol_version
    }

    /// The capabilities the client declared for this request.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.scope.meta.client_capabilities
    }

    /// The client's self-description, if it sent one. Self-reported: do not
    /// base security decisions on it.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.scope.meta.client_info.as_deref()
    }

    /// The request's cancellation token.
    pub fn cancellation(&self) -> &Cancellation {
        &self.scope.cancel
    }

    /// Whether the client cancelled the request.
    pub fn is_cancelled(&self) -> bool {
        self.scope.cancel.is_cancelled()
    }

    /// Sends `notifications/progress` for this request, if the client asked
    /// for progress (`_meta.progressToken`); does nothing otherwise, nor once
    /// the request was cancelled or timed out (its answer may be gone, and
    /// progress must stop with it).
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let (Some(token), Some(out)) = (&self.scope.meta.progress_token, &self.scope.outbound) else {
            return;
        };
        if self.in_task() || self.is_cancelled() {
            return;
        }
        let params = ProgressParams {
            progress_token: token,
            progress,
            total,
            message,
        };
        let _ = out.send(jsonrpc::encode_notification("notifications/progress", &params));
    }

    /// Sends `notifications/message` for this request, if the client opted in
    /// to logging at `level` or a less severe level; does nothing otherwise,
    /// nor once the request was cancelled or timed out.
    pub fn log<T: Serialize>(&self, level: LoggingLevel, logger: Option<&str>, data: &T) {
        let (Some(min), Some(out)) = (self.scope.meta.log_level, &self.scope.outbound) else {
            return;
        };
        if level < min || self.in_task() || self.is_cancelled() {
            return;
        }
        let params = LogParams { level, logger, data };
        let _ = out.send(jsonrpc::encode_notification("notifications/message", &params));
    }

    /// The same request with another server's state: what a handler of a
    /// server mounted with [`ServerBuilder::mount`](crate::ServerBuilder::mount)
    /// sees (its own `State<T>`), while announcements and everything else stay
    /// the serving server's.
    pub(crate) fn with_state(&self, state: &super::StateMap) -> Context {
        let mut scope = self.copy();
        scope.state = state.clone();
        Context::new(scope)
    }

    /// The same request, with a cancellation token of its own (a child of
    /// the request's): a tool call past its timeout is cancelled without
    /// cancelling the request, whose answer says it timed out.
    pub(crate) fn with_cancel(&self, cancel: Cancellation) -> Context {
        let mut scope = self.copy();
        scope.cancel = cancel;
        Context::new(scope)
    }

    fn copy(&self) -> RequestScope {
        let s = &self.scope;
        let task = std::sync::OnceLock::new();
        if let Some(shared) = s.task.get() {
            let _ = task.set(shared.clone());
        }
        #[cfg(feature = "client")]
        let relayed = std::sync::OnceLock::new();
        #[cfg(feature = "client")]
        if let Some(slot) = s.relayed.get() {
            let _ = relayed.set(slot.clone());
        }
        RequestScope {
            id: s.id.clone(),
            meta: s.meta.clone(),
            cancel: s.cancel.clone(),
            outbound: s.outbound.clone(),
            state: s.state.clone(),
            server: s.server.clone(),
            mrtr: s.mrtr.clone(),
            principal: s.principal.clone(),
            session: s.session.clone(),
            identity: s.identity.clone(),
            headers: s.headers.clone(),
            task,
            #[cfg(feature = "client")]
            relayed,
            peer: s.peer,
        }
    }

    /// Whether the handler runs as a task: progress and log notifications
    /// are not sent for tasks (the spec has no channel for them).
    fn in_task(&self) -> bool {
        self.scope.task.get().is_some_and(|t| t.is_task())
    }

    /// Leaves an upstream's task as this call's answer; false when the
    /// request is not a `tools/call` of a tool whose upstream runs tasks.
    #[cfg(feature = "client")]
    pub(crate) fn relay_task(&self, task: crate::protocol::DetailedTask) -> bool {
        match self.scope.relayed.get() {
            Some(slot) => {
                *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(task);
                true
            }
            None => false,
        }
    }

    /// The verified access token of an authorized HTTP request.
    pub(crate) fn identity(&self) -> Option<&Arc<crate::auth::AccessToken>> {
        self.scope.identity.as_ref()
    }

    /// The authenticated principal the transport vouched for, if any.
    pub fn principal(&self) -> Option<&str> {
        self.scope.principal.as_deref()
    }

    /// The server serving this request: to change what it serves at run time
    /// ([`Server::add_tool`](crate::Server::add_tool) and friends) or to
    /// announce resource updates.
    pub fn server(&self) -> &super::Server {
        &self.scope.server
    }

    /// Shared application state registered with
    /// [`ServerBuilder::state`](crate::ServerBuilder::state).
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.scope.state.get::<T>()
    }
}

/// A handler parameter the framework fills from the request rather than from
/// the tool's arguments (in the style of axum's extractors).
///
/// Implemented for [`Context`], [`Cancellation`], [`State<T>`](crate::State),
/// [`Input`](crate::Input), [`Task`](crate::Task), [`Identity`](crate::Identity),
/// [`RequestHeaders`](crate::RequestHeaders) and [`RendersApps`](crate::RendersApps).
/// Implement it for your own types, and mark such parameters `#[extract]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an extractor",
    note = "parameters marked #[extract], or whose type is named Context, Cancellation, Input, Task, Identity, RequestHeaders, RendersApps or State<T>, are extractors and must implement `FromContext`; if this parameter is a tool argument of your own type, mark it #[arg]"
)]
pub trait FromContext: Sized {
    /// Builds the value from the request context.
    fn from_context(ctx: &Context) -> Result<Self, McpError>;
}

impl FromContext for Context {
    fn from_context(ctx: &Context) -> Result<Self, McpError> {
        Ok(ctx.clone())
    }
}

impl FromContext for Cancellation {
    /// The request's token, or, in a task, the task's (fired by `tasks/cancel`).
    fn from_context(ctx: &Context) -> Result<Self, McpError> {
        match ctx.scope.task.get() {
            Some(task) if task.is_task() => Ok(task.cancel.clone()),
            _ => Ok(ctx.scope.cancel.clone()),
        }
    }
}

impl FromContext for crate::tasks::Task {
    fn from_context(ctx: &Context) -> Result<Self, McpError> {
        let shared = ctx
            .scope
            .task
            .get()
            .cloned()
            .ok_or_else(|| McpError::internal("Task is only available in #[tool(task)] handlers"))?;
        Ok(crate::tasks::Task { shared })
    }
}

impl FromContext for crate::mrtr::Input {
    fn from_context(ctx: &Context) -> Result<Self, McpError> {
        let scope = ctx.scope.mrtr.clone().ok_or_else(|| {
            McpError::internal("Input is only available in tools/call, prompts/get and resources/read handlers")
        })?;
        Ok(crate::mrtr::Input::new(
            scope,
            ctx.scope.meta.client_capabilities.clone(),
        ))
    }
}
