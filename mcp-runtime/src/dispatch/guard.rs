//! Middleware around the handler calls the dispatcher makes: `before` hooks
//! in order (any may refuse), the call, `after` hooks in reverse. A
//! panicking hook is a refusal (`before`) or ignored (`after`), never a dead
//! server.

use crate::error::McpError;
use crate::mrtr::Outcome;
use crate::panic::CatchUnwind;
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

/// Runs `run` inside the server's middleware; `classify` says how a
/// complete outcome ended.
pub(crate) async fn guard<T, Fut>(
    server: &Server,
    call: Call<'_>,
    run: Fut,
    classify: impl Fn(&T) -> CallOutcome,
) -> Guarded<T>
where
    Fut: Future<Output = Result<Outcome<T>, McpError>>,
{
    let hooks = &server.inner.middleware;
    let mut passed = 0;
    let mut refusal = None;
    for hook in hooks {
        match CatchUnwind::new(hook.before(&call)).await {
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
        if let Err(panic) = CatchUnwind::new(hook.after(&call, &outcome)).await {
            tracing::error!(name = call.name, "middleware panicked after the call: {panic}");
        }
    }
    result
}
