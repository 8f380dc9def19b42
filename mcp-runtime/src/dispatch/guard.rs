//! The chain around the handler calls the dispatcher makes: first the
//! server's limits per caller (`limits`: rates, calls in progress), then the
//! middleware's `before` hooks in order (any may refuse), the call, `after`
//! hooks in reverse. A panicking hook is a refusal (`before`) or ignored
//! (`after`), never a dead server. A server with neither limits nor
//! middleware does not come here.

use crate::error::McpError;
use crate::mrtr::Outcome;
use crate::panic::run_caught;
use crate::server::{Call, CallOutcome, Server};
use std::future::Future;

/// How a guarded call went.
pub(crate) enum Guarded<T> {
    /// The handler ran: its outcome.
    Ran(Result<Outcome<T>, McpError>),
    /// A middleware refused it.
    Refused(McpError),
}

fn error_outcome(e: &McpError) -> CallOutcome {
    CallOutcome::Error {
        code: e.code().0,
        message: e.message().to_owned(),
    }
}

/// Who calls, for the limits: the caller's key (`tasks::caller_key`) and
/// the tool's own rate, if it has one.
pub(crate) struct Caller<'a> {
    pub key: String,
    pub tool: Option<(&'a str, crate::limits::Rate)>,
}

/// Whether a call goes through [`guard`]: the server has limits or middleware.
pub(crate) fn needed(server: &Server) -> bool {
    !server.inner.middleware.is_empty() || server.inner.limits.any()
}

/// The caller's key and (for a tool call) its tool's rate, when the server
/// has limits to check them against.
pub(crate) fn caller<'a>(
    server: &Server,
    scope: &crate::dispatch::Scope,
    tool: Option<(&'a str, Option<crate::limits::Rate>)>,
) -> Option<Caller<'a>> {
    let limits = &server.inner.limits;
    if !limits.any() {
        return None;
    }
    Some(Caller {
        key: crate::tasks::caller_key(scope.principal.as_deref(), scope.peer),
        tool: tool.and_then(|(name, rate)| rate.map(|r| (name, r))),
    })
}

/// Runs `run` inside the server's limits and middleware; `classify` says
/// how a complete outcome ended. A call past a limit is refused with a
/// `rate_limited` error before any hook sees it.
pub(crate) async fn guard<T, Fut>(
    server: &Server,
    call: Call<'_>,
    caller: Option<Caller<'_>>,
    run: Fut,
    classify: impl Fn(&T) -> CallOutcome,
) -> Guarded<T>
where
    Fut: Future<Output = Result<Outcome<T>, McpError>>,
{
    // Held until the call ends (or is dropped): a place in progress.
    let _admitted = match caller {
        None => None,
        Some(caller) => {
            let wait = server.config().busy_wait;
            match server.inner.limits.admit(caller.key, caller.tool, wait).await {
                Ok(admitted) => Some(admitted),
                Err(e) => return Guarded::Refused(e),
            }
        }
    };
    let hooks = &server.inner.middleware;
    let mut passed = 0;
    let mut refusal = None;
    for hook in hooks {
        // Caught in the hook's own code as in its future's: a panic before
        // it returns its future is a refusal too, not a request unanswered.
        match run_caught(|| hook.before(&call)).await {
            Ok(Ok(())) => passed += 1,
            Ok(Err(e)) => {
                refusal = Some(e);
                break;
            }
            Err(panic) => {
                tracing::error!(name = call.name, "middleware panicked: {panic}");
                refusal = Some(McpError::internal("Internal error: a middleware panicked"));
                break;
            }
        }
    }
    let (result, outcome) = match refusal {
        Some(e) => {
            let outcome = error_outcome(&e);
            (Guarded::Refused(e), outcome)
        }
        None => {
            let result = run.await;
            let outcome = match &result {
                Ok(Outcome::Complete(value)) => classify(value),
                Ok(Outcome::InputRequired(_)) => CallOutcome::InputRequired,
                Err(e) => error_outcome(e),
            };
            (Guarded::Ran(result), outcome)
        }
    };
    for hook in hooks[..passed.min(hooks.len())].iter().rev() {
        if let Err(panic) = run_caught(|| hook.after(&call, &outcome)).await {
            tracing::error!(name = call.name, "middleware panicked after the call: {panic}");
        }
    }
    result
}
