//! `tools/list` and `tools/call`.

use super::Head;
use crate::error::McpError;
use crate::mrtr::Outcome;
use crate::protocol::CallToolResult;
use crate::server::Catalog;
use crate::server::Context;
use crate::tasks::TaskMode;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::sync::{Arc, Mutex};

/// The params of `tools/call` this module reads.
pub(crate) struct CallParams<'a> {
    name: Cow<'a, str>,
    arguments: Option<&'a RawValue>,
    /// 2025-11-25 task augmentation (`params.task`).
    task: Option<&'a RawValue>,
}

impl<'a> CallParams<'a> {
    /// The name and arguments, from the request's one parse; a legacy
    /// session's `task` (`legacy`), read from `params` apart.
    pub(crate) fn from_head(head: &Head<'a>, params: Option<&'a RawValue>, legacy: bool) -> Result<Self, McpError> {
        Ok(CallParams {
            name: Head::required(head.name, "name")?,
            arguments: head.arguments,
            task: if legacy { Head::task(params)? } else { None },
        })
    }

    /// The tool's name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }
}

/// What a `tools/call` comes to: the tool's result, or a task. Both boxed:
/// the reply is moved through every stage of the dispatcher on its way out,
/// and a box moves as a pointer where a `CallToolResult` is 320 bytes.
pub(crate) enum ToolReply {
    /// The tool ran to its end.
    Result(Box<CallToolResult>),
    /// The call became a task (`CreateTaskResult`).
    Task(Box<crate::protocol::DetailedTask>),
}

/// `tools/call`: finds the tool, runs it (as a task when it is a task tool
/// and the client declared the extension), catches a panic. `shown`: false
/// when the tool is hidden from the caller, who is told it is unknown.
pub(crate) async fn call(
    catalog: &Catalog,
    params: &CallParams<'_>,
    check_headers: bool,
    shown: bool,
    ctx: Context,
) -> Result<Outcome<ToolReply>, McpError> {
    let Some(index) = catalog.tool_at(params.name()).filter(|_| shown) else {
        return Err(McpError::invalid_params(format!("Unknown tool: {}", params.name)));
    };
    let entry = &catalog.tools[index];
    let args = match params.arguments {
        Some(raw) if raw.get() == "null" => None,
        Some(raw) if !raw.get().starts_with('{') => {
            return Err(McpError::invalid_params("Invalid params: arguments must be an object"));
        }
        other => other,
    };
    let wire = entry.wire();
    if check_headers {
        let headers = &ctx.scope.headers;
        headers.check_params(&wire.header_params, args.map(RawValue::get))?;
    }
    check_required(&entry.requires, ctx.client_capabilities())?;
    if wire.constrained {
        let given: serde_json::Value = match args.map(|raw| serde_json::from_str(raw.get())) {
            Some(Ok(given)) => given,
            Some(Err(e)) => {
                let text = format!("Invalid arguments for tool `{}`: {e}", params.name);
                return Ok(Outcome::Complete(ToolReply::Result(Box::new(
                    crate::tools::error_result(text),
                ))));
            }
            None => serde_json::Value::Object(Default::default()),
        };
        if let Err(why) = crate::schema::validate::check(&wire.tool.input_schema, &given, "arguments") {
            let text = format!("Invalid arguments for tool `{}`: {why}", params.name);
            return Ok(Outcome::Complete(ToolReply::Result(Box::new(
                crate::tools::error_result(text),
            ))));
        }
    }
    // A 2025-11-25 session asks for a task with `params.task` (a 2026-07-28
    // request's is ignored: there the server decides).
    let augmented = params.task.is_some() && ctx.scope.session.is_some();
    let task = match entry.task.mode {
        TaskMode::Never if augmented => return Err(crate::tasks::legacy::not_a_task_tool(params.name())),
        TaskMode::Never => None,
        mode => Some(task_shared(&ctx, mode, params.name(), augmented)?),
    };
    let timeout = entry.timeout.or(ctx.server().config().tool_timeout);
    // A tool bounded in calls at once: a place, or a busy answer after the wait.
    let place = match &entry.concurrency {
        None => None,
        Some(places) => {
            let wait = ctx.server().config().busy_wait;
            match tokio::time::timeout(wait, places.clone().acquire_owned()).await {
                Ok(Ok(place)) => Some(place),
                _ => {
                    let text = format!(
                        "Tool `{}` is busy: it runs a limited number of calls at once, and none ended within {wait:?}; \
                         retry shortly",
                        params.name
                    );
                    return Ok(Outcome::Complete(ToolReply::Result(Box::new(
                        crate::tools::error_result(text),
                    ))));
                }
            }
        }
    };
    let Some(task) = task.filter(|t| t.is_task()) else {
        if entry.blocking {
            return run_holding(entry, params.name(), args, ctx, timeout, place).await;
        }
        // Held until the call ends.
        let _place = place;
        #[cfg(feature = "client")]
        if entry.relays_tasks {
            // Where the handler leaves its upstream's task, if it made one.
            let slot = crate::tasks::relay::Slot::default();
            let _ = ctx.scope.relayed.set(slot.clone());
            let reply = crate::boxed::boxed!(run_plain(entry, params.name(), args, ctx, timeout)).await;
            let task = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
            return match (task, reply) {
                (Some(task), Ok(Outcome::Complete(_))) => Ok(Outcome::Complete(ToolReply::Task(Box::new(task)))),
                (_, reply) => reply,
            };
        }
        return run_plain(entry, params.name(), args, ctx, timeout).await;
    };
    let server = ctx.server().clone();
    let owner = ctx.principal().map(str::to_owned);
    let caller = crate::tasks::caller_key(ctx.principal(), ctx.scope.peer);
    let future = match crate::panic::call_caught(|| (entry.handler)(args, ctx)) {
        Ok(future) => future,
        Err(message) => return Err(panicked(params.name(), &message)),
    };
    let runtime = &server.inner.tasks;
    let mut support = entry.task;
    let always = task.is_session_task();
    if let Some(ttl) = params
        .task
        .filter(|_| always)
        .map(crate::tasks::legacy::requested_ttl)
        .transpose()?
        .flatten()
    {
        // A 2025-11-25 requestor may ask for less time than the tool keeps
        // its tasks, down to a minute: a shorter time to live would end the
        // task's run, and lose a result it has at once, before the
        // requestor could fetch it.
        let kept = support.ttl_ms.unwrap_or(runtime.config.ttl_ms);
        support.ttl_ms = Some(ttl.max(crate::tasks::legacy::MIN_TTL_MS).min(kept));
    }
    let launch = crate::tasks::run::Launch {
        owner,
        caller: &caller,
        support,
        timeout,
        tool: params.name(),
        place,
        after: if always { None } else { entry.task_after },
        always,
    };
    // Boxed: a plain call's future stays the size of a plain call.
    match crate::boxed::boxed!(crate::tasks::run::start(runtime, task, launch, future)).await? {
        crate::tasks::run::Started::Ready(result) => complete(result),
        crate::tasks::run::Started::Created(task) => Ok(Outcome::Complete(ToolReply::Task(Box::new(task)))),
    }
}

/// Runs a tool's handler to its end (within its timeout, if it has one),
/// its panic caught.
async fn run_plain(
    entry: &crate::server::ToolEntry,
    name: &str,
    args: Option<&RawValue>,
    ctx: Context,
    timeout: Option<std::time::Duration>,
) -> Result<Outcome<ToolReply>, McpError> {
    let Some(limit) = timeout else {
        return ran(name, crate::panic::run_caught(|| (entry.handler)(args, ctx)).await);
    };
    // The handler's own token: fired at the deadline, before its future is dropped.
    let cancel = ctx.cancellation().child();
    let ctx = ctx.with_cancel(cancel.clone());
    let run = crate::panic::run_caught(|| (entry.handler)(args, ctx));
    tokio::pin!(run);
    tokio::select! {
        result = &mut run => ran(name, result),
        () = tokio::time::sleep(limit) => {
            cancel.cancel();
            tracing::warn!(tool = %name, "tool call timed out after {limit:?}");
            let text = crate::tools::timed_out(name, limit);
            Ok(Outcome::Complete(ToolReply::Result(Box::new(crate::tools::error_result(text)))))
        }
    }
}

/// A `#[tool(blocking)]` call: its handler runs in a task of its own,
/// which holds the call's place (of a tool bounded in calls at once) until
/// the function returns. A call that timed out, or that its client
/// cancelled, is answered (or dropped) at once, but its function goes on on
/// its thread, and the place stays taken until it ends, and so does a place
/// among its caller's calls in progress (`Lingering`).
/// Dropped with a blocking call (answered, timed out, or dropped): if its
/// function still runs, a place among its caller's calls in progress is
/// taken for it and left with its task, which gives it back as it ends.
struct Lingering {
    server: crate::server::Server,
    caller: String,
    held: Arc<Mutex<Option<crate::limits::Admitted>>>,
    running: tokio::task::AbortHandle,
}

impl Drop for Lingering {
    fn drop(&mut self) {
        if self.running.is_finished() {
            return;
        }
        let place = self.server.inner.limits.hold_on(std::mem::take(&mut self.caller));
        // Ended meanwhile: the place goes with the last holder, here.
        *self.held.lock().unwrap_or_else(|p| p.into_inner()) = place;
    }
}

async fn run_holding(
    entry: &crate::server::ToolEntry,
    name: &str,
    args: Option<&RawValue>,
    ctx: Context,
    timeout: Option<std::time::Duration>,
    place: Option<tokio::sync::OwnedSemaphorePermit>,
) -> Result<Outcome<ToolReply>, McpError> {
    let cancel = ctx.cancellation().child();
    let ctx = ctx.with_cancel(cancel.clone());
    let server = ctx.server().clone();
    let caller = server
        .inner
        .limits
        .counts_callers()
        .then(|| crate::tasks::caller_key(ctx.principal(), ctx.scope.peer));
    let future = match crate::panic::call_caught(|| (entry.handler)(args, ctx)) {
        Ok(future) => future,
        Err(message) => return Err(panicked(name, &message)),
    };
    let held = Arc::new(Mutex::new(None));
    let holds = held.clone();
    let mut running = tokio::spawn(async move {
        let _place = place;
        let _caller_place = holds;
        future.await
    });
    let _lingering = caller.map(|caller| Lingering {
        server,
        caller,
        held,
        running: running.abort_handle(),
    });
    let deadline = async {
        match timeout {
            Some(limit) => tokio::time::sleep(limit).await,
            None => std::future::pending().await,
        }
    };
    let joined = tokio::select! {
        joined = &mut running => joined,
        () = deadline => {
            let limit = timeout.unwrap_or_default();
            cancel.cancel();
            tracing::warn!(tool = %name, "tool call timed out after {limit:?}; its function runs on until it returns");
            let text = crate::tools::timed_out_blocking(name, limit);
            return Ok(Outcome::Complete(ToolReply::Result(Box::new(crate::tools::error_result(text)))));
        }
    };
    match joined {
        Ok(result) => complete(result),
        Err(e) => match e.try_into_panic() {
            Ok(payload) => Err(panicked(name, &crate::panic::message_of(payload))),
            Err(_) => Err(McpError::internal(
                "Internal error: the server stopped before the tool ran",
            )),
        },
    }
}

/// How a handler run with its panic caught ended: a panic is -32603.
fn ran(
    tool: &str,
    result: Result<Result<Outcome<CallToolResult>, McpError>, String>,
) -> Result<Outcome<ToolReply>, McpError> {
    complete(result.unwrap_or_else(|message| Err(panicked(tool, &message))))
}

fn complete(result: Result<Outcome<CallToolResult>, McpError>) -> Result<Outcome<ToolReply>, McpError> {
    Ok(match result? {
        Outcome::Complete(r) => Outcome::Complete(ToolReply::Result(Box::new(r))),
        Outcome::InputRequired(ir) => Outcome::InputRequired(ir),
    })
}

fn panicked(tool: &str, message: &str) -> McpError {
    tracing::error!(tool, "tool handler panicked: {message}");
    McpError::internal(format!("Internal error: tool `{tool}` panicked"))
}

/// How a task tool's call is served, set in the context before its handler
/// runs: a task (the client declared the extension, or a 2025-11-25 session
/// augmented the call: `augmented`), over a legacy session, or
/// synchronously; a required one without a task is -32021 (2026-07-28) or
/// -32601 (2025-11-25, as that revision says).
fn task_shared(
    ctx: &Context,
    mode: TaskMode,
    tool: &str,
    augmented: bool,
) -> Result<std::sync::Arc<crate::tasks::Shared>, McpError> {
    let scope = &ctx.scope;
    let caps = scope.meta.client_capabilities.clone();
    let declared = crate::tasks::declared(&caps);
    let how = match &scope.session {
        Some(_) if augmented => crate::tasks::Mode::Task { session: true },
        Some(_) if mode == TaskMode::Required => return Err(crate::tasks::legacy::task_required(tool)),
        None if mode == TaskMode::Required && !declared => return Err(crate::tasks::extension_required()),
        Some(session) => crate::tasks::Mode::Legacy {
            session: session.clone(),
            outbound: scope.outbound.clone(),
        },
        None if declared => crate::tasks::Mode::Task { session: false },
        None => crate::tasks::Mode::Detached,
    };
    let id = if matches!(how, crate::tasks::Mode::Task { .. }) {
        crate::tasks::new_id()
    } else {
        String::new()
    };
    let config = &ctx.server().inner.tasks.config;
    let asks = crate::tasks::AskBounds {
        max_inputs: config.max_inputs,
        timeout: config.input_timeout,
    };
    let shared = crate::tasks::Shared::new(id, how, caps, asks, &scope.cancel);
    // A fresh context per round: the slot is empty.
    let _ = scope.task.set(shared.clone());
    Ok(shared)
}

/// -32021 unless the client declared every capability in `required`.
pub(crate) fn check_required(
    required: &[crate::protocol::ClientCapability],
    caps: &crate::protocol::ClientCapabilities,
) -> Result<(), McpError> {
    let mut missing = serde_json::Map::new();
    for capability in required.iter().filter(|c| !c.is_declared_in(caps)) {
        capability.add_to(&mut missing);
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(McpError::missing_capability(serde_json::Value::Object(missing)))
    }
}

/// The tool's own rate limit, looked up only when some tool has one.
pub(crate) fn own_rate(server: &crate::server::Server, catalog: &Catalog, name: &str) -> Option<crate::limits::Rate> {
    if !server.inner.limits.tool_rates() {
        return None;
    }
    catalog.tool_at(name).and_then(|i| catalog.tools[i].rate_limit)
}
