//! Long-running tools (the Tasks extension): the fixtures the conformance
//! suite's `tasks-*` scenarios call. A `#[tool(task)]` call from a client
//! that declared `io.modelcontextprotocol/tasks` becomes a task when its
//! handler first waits; the client polls `tasks/get`, answers asks with
//! `tasks/update`, and stops it with `tasks/cancel`.

use mcp_runtime::prelude::*;
use std::time::Duration;

/// A name.
#[mcp_runtime::form]
struct Name {
    /// Your name.
    name: String,
}

/// A yes or no.
#[mcp_runtime::form]
struct Confirm {
    /// Go ahead.
    confirm: bool,
}

/// Greets someone (an ordinary, synchronous tool).
#[tool]
fn greet(
    /// Who to greet.
    name: String,
) -> String {
    compose(&name)
}

/// The greeting, in a span of its own: a handler's spans nest inside the
/// request's, and a `main!` binary exports them with it.
#[tracing::instrument]
fn compose(name: &str) -> String {
    format!("Hello, {name}!")
}

/// Sleeps `seconds`, then answers; stops when the task is cancelled. With
/// `seconds: 0` it answers at once, without a task.
#[tool(task)]
async fn slow_compute(
    /// How long to work, in seconds (at most an hour).
    seconds: u64,
    /// A label echoed in the result.
    #[serde(default)]
    label: Option<String>,
    task: Task,
) -> Result<String, String> {
    let label = label.unwrap_or_else(|| "compute".into());
    if seconds == 0 {
        return Ok(format!("{label}: done at once"));
    }
    task.status(format!("{label}: working for {seconds} s"));
    tokio::select! {
        _ = task.cancelled() => Err(format!("{label}: cancelled")),
        _ = tokio::time::sleep(Duration::from_secs(seconds.min(3600))) => Ok(format!("{label}: done after {seconds} s")),
    }
}

/// Blocks its thread for `seconds` (at most a minute) once it is a task,
/// as a synchronous library call does, then answers. Blocking a runtime
/// thread is what a handler should not do (run such work with
/// `tokio::task::spawn_blocking`), but a server must survive it: the task's
/// lease in a shared store is renewed from another task, so no replica
/// takes the task for dead meanwhile.
#[tool(task)]
async fn blocking_job(
    /// How long to block, in seconds.
    seconds: u64,
    task: Task,
) -> String {
    task.status(format!("blocking for {seconds} s"));
    // The first wait: from here the call is a task.
    tokio::task::yield_now().await;
    std::thread::sleep(Duration::from_secs(seconds.min(60)));
    format!("blocked for {seconds} s and finished")
}

/// Works for a second, then reports a tool error (the task completes with
/// `isError`). Runs only as a task.
#[tool(task = required)]
async fn failing_job(task: Task) -> Result<String, String> {
    task.status("about to fail");
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err("the job failed: the input archive is corrupt".into())
}

/// Works briefly, then fails with a protocol error (the task fails with
/// `error`).
#[tool(task)]
async fn protocol_error_job() -> Flow<String> {
    tokio::time::sleep(Duration::from_millis(300)).await;
    Err(Halt::protocol(McpError::internal("the job's backend answered garbage")))
}

/// Asks before deleting `filename`, then reports what it did.
#[tool(task)]
async fn confirm_delete(
    /// The file to delete.
    filename: String,
    task: Task,
) -> Result<String, String> {
    task.status(format!("waiting for confirmation to delete {filename}"));
    let answer = task
        .elicit::<Confirm>("confirm", &format!("Delete {filename}?"))
        .await?;
    match answer {
        Elicited::Accepted(c) if c.confirm => Ok(format!("Deleted {filename}")),
        _ => Ok(format!("Kept {filename}")),
    }
}

/// Asks two questions at once and answers when both are answered.
#[tool(task)]
async fn multi_input(task: Task) -> Result<String, String> {
    let (name, confirm) = tokio::join!(
        task.elicit::<Name>("name", "Your name?"),
        task.elicit::<Confirm>("confirm", "Go ahead?"),
    );
    let name = name?.accepted().map(|n| n.name).unwrap_or_else(|| "nobody".into());
    let confirm = confirm?.accepted().is_some_and(|c| c.confirm);
    Ok(format!("{name} said {}", if confirm { "yes" } else { "no" }))
}

/// Asks for the user's name first (an ordinary `input_required` round), then
/// runs as a task that greets them. Runs only as a task.
#[tool(task = required)]
async fn test_tool_with_task(input: Input, task: Task) -> Flow<String> {
    let name = match input.elicit::<Name>("user_name", "What is your name?")? {
        Elicited::Accepted(n) => n.name,
        Elicited::Declined | Elicited::Cancelled => "stranger".into(),
    };
    task.status(format!("greeting {name}"));
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(format!("Hello, {name}! (from a task)"))
}
