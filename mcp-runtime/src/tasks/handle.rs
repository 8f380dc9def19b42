//! The [`Task`] extractor: what a `#[tool(task)]` handler uses to report
//! status, notice cancellation, and ask the client for input mid-run.

use crate::cancel::Cancellation;
use crate::error::{ErrorCode, McpError};
use crate::mrtr::{Ask, ElicitForm, Elicited, Sampled, Sampling};
use crate::outbound::Outbound;
use crate::protocol::{ClientCapabilities, Root, TASKS_EXTENSION};
use crate::session::Session;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::oneshot;

/// A long-running tool's view of its task. Add a `task: Task` parameter to a
/// `#[tool(task)]` function.
///
/// When the client declared the tasks extension, the call becomes a task as
/// soon as the handler first waits on something: the client gets the task
/// handle at once, and the handler runs on, to the end, in the background.
/// [`status`](Task::status) sets the task's status message; an ask
/// ([`elicit`](Task::elicit), [`sample`](Task::sample), [`roots`](Task::roots))
/// puts the task in `input_required` until the client answers through
/// `tasks/update`; [`cancelled`](Task::cancelled) completes when the client
/// sends `tasks/cancel`.
///
/// A 2025-11-25 session's call with `task` is a task too (that revision's:
/// an ask reaches the client while it waits on `tasks/result`). For a
/// client without the extension the tool runs synchronously: status
/// messages are dropped, and an ask is answered over the 2025-11-25 session's
/// stream, or fails with -32021 (the client must declare the extension) on a
/// 2026-07-28 request.
///
/// ```
/// use mcp_runtime::prelude::*;
///
/// /// Whether to go on.
/// #[mcp_runtime::form]
/// struct Confirm {
///     /// Go on.
///     confirm: bool,
/// }
///
/// /// Compacts the archive; asks first.
/// #[tool(task)]
/// async fn compact(task: Task) -> Result<String, String> {
///     task.status("waiting for confirmation");
///     match task.elicit::<Confirm>("go", "Compact the archive now?").await? {
///         Elicited::Accepted(c) if c.confirm => {}
///         _ => return Ok("left as it is".into()),
///     }
///     task.status("compacting");
///     tokio::select! {
///         _ = task.cancelled() => Err("stopped".into()),
///         _ = tokio::time::sleep(std::time::Duration::from_millis(10)) => Ok("compacted".into()),
///     }
/// }
/// # fn main() {}
/// ```
#[derive(Clone)]
pub struct Task {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Task {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Task").field("id", &self.id()).finish()
    }
}

/// Why an ask inside a task gave no answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TaskError {
    /// The client cancelled the task.
    #[error("the task was cancelled")]
    Cancelled,
    /// The task asked for more inputs than the server allows.
    #[error("the task asked for more than {0} inputs")]
    TooManyInputs(u32),
    /// Nobody answered the input request in time
    /// ([`TaskConfig::input_timeout`](super::TaskConfig::input_timeout));
    /// it was withdrawn.
    #[error("nobody answered the input request within {0:?}")]
    Unanswered(std::time::Duration),
    /// A protocol error: the client lacks the capability the ask needs, its
    /// answer is malformed, or it cannot be asked at all.
    #[error(transparent)]
    Protocol(McpError),
}

impl From<TaskError> for McpError {
    fn from(e: TaskError) -> Self {
        match e {
            TaskError::Protocol(e) => e,
            TaskError::Cancelled => McpError::new(ErrorCode::INTERNAL_ERROR, "the task was cancelled"),
            other => McpError::internal(other.to_string()),
        }
    }
}

/// So that `?` works in a handler returning `Result<T, String>` (the
/// failure becomes an `isError` tool result).
impl From<TaskError> for String {
    fn from(e: TaskError) -> Self {
        e.to_string()
    }
}

/// -32021 naming the tasks extension.
pub(crate) fn extension_required() -> McpError {
    McpError::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("Missing required client capability: the {TASKS_EXTENSION} extension"),
    )
    .with_data(serde_json::json!({
        "requiredCapabilities": { "extensions": { TASKS_EXTENSION: {} } }
    }))
}

/// How the call is being served.
pub(crate) enum Mode {
    /// A 2026-07-28 client that declared the extension: a task; or
    /// (`session`) a 2025-11-25 session's call sent with `task`.
    Task {
        /// A 2025-11-25 session's task-augmented call.
        session: bool,
    },
    /// A 2025-11-25 session: synchronous, asks go over the session's stream.
    Legacy {
        session: Arc<Session>,
        outbound: Option<Outbound>,
    },
    /// A 2026-07-28 client without the extension: synchronous, no asks.
    Detached,
}

/// The state a [`Task`] shares with the runner that drives it.
pub(crate) struct Shared {
    pub(crate) id: String,
    pub(crate) mode: Mode,
    pub(crate) cancel: Cancellation,
    /// Wakes the runner when there is something to flush (the handler, or a
    /// task it spawned, set a status or made an ask).
    pub(crate) wake: tokio::sync::Notify,
    caps: Arc<ClientCapabilities>,
    asks: AskBounds,
    inner: Mutex<Inner>,
}

/// How much a task may ask, and how long an ask waits.
#[derive(Clone, Copy)]
pub(crate) struct AskBounds {
    pub max_inputs: u32,
    pub timeout: std::time::Duration,
}

#[derive(Default)]
struct Inner {
    message: Option<String>,
    dirty: bool,
    waiting: HashMap<String, oneshot::Sender<Value>>,
    new_requests: Map<String, Value>,
    /// Asks whose future was dropped before their answer came.
    withdrawn: Vec<String>,
    used: HashSet<String>,
    count: u32,
}

/// An ask waiting for its answer; withdrawn if dropped first.
struct Pending<'a> {
    shared: &'a Shared,
    key: &'a str,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        self.shared.withdraw(self.key);
    }
}

/// What the runner writes to the store after a poll.
pub(crate) struct Flush {
    pub message: Option<String>,
    pub new_requests: Map<String, Value>,
    pub withdrawn: Vec<String>,
}

impl Shared {
    /// `request_cancel` is the request's token: a synchronous call is
    /// cancelled with its request; a task gets a token of its own.
    pub(crate) fn new(
        id: String,
        mode: Mode,
        caps: Arc<ClientCapabilities>,
        asks: AskBounds,
        request_cancel: &Cancellation,
    ) -> Arc<Self> {
        let cancel = match mode {
            Mode::Task { .. } => Cancellation::new(),
            Mode::Legacy { .. } | Mode::Detached => request_cancel.clone(),
        };
        Arc::new(Shared {
            id,
            mode,
            cancel,
            wake: tokio::sync::Notify::new(),
            caps,
            asks,
            inner: Mutex::new(Inner::default()),
        })
    }

    /// Whether the call may become a task.
    pub(crate) fn is_task(&self) -> bool {
        matches!(self.mode, Mode::Task { .. })
    }

    /// Whether the call is a 2025-11-25 session's task-augmented one.
    pub(crate) fn is_session_task(&self) -> bool {
        matches!(self.mode, Mode::Task { session: true })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What changed since the last flush, if anything.
    pub(crate) fn take_flush(&self) -> Option<Flush> {
        let mut inner = self.lock();
        if !inner.dirty {
            return None;
        }
        inner.dirty = false;
        Some(Flush {
            message: inner.message.clone(),
            new_requests: std::mem::take(&mut inner.new_requests),
            withdrawn: std::mem::take(&mut inner.withdrawn),
        })
    }

    /// Puts back what a failed flush took, to be written again.
    pub(crate) fn restore(&self, flush: Flush) {
        let mut inner = self.lock();
        for (key, request) in flush.new_requests {
            if inner.waiting.contains_key(&key) {
                inner.new_requests.entry(key).or_insert(request);
            }
        }
        inner.withdrawn.extend(flush.withdrawn);
        inner.dirty = true;
    }

    /// Marks something to flush and wakes the runner.
    fn touch(&self, inner: &mut Inner) {
        inner.dirty = true;
        self.wake.notify_one();
    }

    /// Whether there is something to flush.
    pub(crate) fn is_dirty(&self) -> bool {
        self.lock().dirty
    }

    /// Whether an ask waits for the answer keyed `key`.
    pub(crate) fn is_waiting(&self, key: &str) -> bool {
        self.lock().waiting.contains_key(key)
    }

    /// Hands an answer to the ask waiting for it.
    pub(crate) fn deliver(&self, key: &str, answer: Value) {
        if let Some(tx) = self.lock().waiting.remove(key) {
            // The ask may have been dropped: nobody to tell.
            let _ = tx.send(answer);
        }
    }

    /// Registers an ask under a key never used before in this task.
    fn register(&self, key: &str, request: Value) -> Result<(String, oneshot::Receiver<Value>), TaskError> {
        let mut inner = self.lock();
        if inner.count >= self.asks.max_inputs {
            return Err(TaskError::TooManyInputs(self.asks.max_inputs));
        }
        let mut wire = key.to_owned();
        let mut n: u32 = 1;
        while inner.used.contains(&wire) {
            n = n.saturating_add(1);
            wire = format!("{key}-{n}");
        }
        let (tx, rx) = oneshot::channel();
        inner.used.insert(wire.clone());
        inner.count = inner.count.saturating_add(1);
        inner.new_requests.insert(wire.clone(), request);
        inner.waiting.insert(wire.clone(), tx);
        self.touch(&mut inner);
        Ok((wire, rx))
    }

    /// An ask given up before its answer came (its future dropped, or the
    /// task cancelled): no longer outstanding.
    fn withdraw(&self, key: &str) {
        let mut inner = self.lock();
        if inner.waiting.remove(key).is_some() {
            if inner.new_requests.remove(key).is_none() {
                inner.withdrawn.push(key.to_owned());
            }
            self.touch(&mut inner);
        }
    }
}

impl Task {
    /// The task's id, when the call is (or is about to become) a task.
    pub fn id(&self) -> Option<&str> {
        self.shared.is_task().then_some(self.shared.id.as_str())
    }

    /// Whether the call runs as a task (the client declared the extension).
    pub fn is_task(&self) -> bool {
        self.shared.is_task()
    }

    /// Sets the task's status message (shown by `tasks/get`).
    pub fn status(&self, message: impl Into<String>) {
        if self.shared.is_task() {
            let mut inner = self.shared.lock();
            inner.message = Some(message.into());
            self.shared.touch(&mut inner);
        }
    }

    /// Completes when the client cancels the task (or the request, when the
    /// call runs synchronously).
    pub async fn cancelled(&self) {
        self.shared.cancel.cancelled().await
    }

    /// Whether the client cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.shared.cancel.is_cancelled()
    }

    /// Asks the user to fill in the form `T` and waits for the answer.
    pub async fn elicit<T: ElicitForm + 'static>(&self, key: &str, message: &str) -> Result<Elicited<T>, TaskError> {
        self.ask(Ask::<Elicited<T>>::elicit(key, message)).await
    }

    /// Sends the user to a URL (URL-mode elicitation) and waits for the answer.
    pub async fn elicit_url(&self, key: &str, message: &str, url: &str) -> Result<Elicited<()>, TaskError> {
        self.ask(Ask::elicit_url(key, message, url)).await
    }

    /// Asks the client's model and waits for its answer.
    pub async fn sample(&self, key: &str, request: Sampling) -> Result<Sampled, TaskError> {
        self.ask(Ask::sample(key, request)).await
    }

    /// Asks the client for its roots.
    pub async fn roots(&self, key: &str) -> Result<Vec<Root>, TaskError> {
        self.ask(Ask::roots(key)).await
    }

    /// Makes one typed ask and waits for its answer. Asks awaited together
    /// (`tokio::join!`) are outstanding together. A key is never reused in
    /// one task: asking `"a"` again is sent as `"a-2"`, then `"a-3"`. An ask
    /// whose future is dropped before its answer (a timeout around it) is
    /// withdrawn from the task's `inputRequests`.
    pub async fn ask<T>(&self, ask: Ask<T>) -> Result<T, TaskError> {
        let request = ask
            .request_value()
            .map_err(|why| TaskError::Protocol(McpError::internal(why)))?;
        let answer = self.ask_value(ask.key(), ask.capability(), request).await?;
        ask.answer(answer).map_err(TaskError::Protocol)
    }

    /// Makes one ask, `request` as the wire carries it (`{"method", "params"}`),
    /// needing `capability`; its answer as it came.
    pub(crate) async fn ask_value(
        &self,
        key: &str,
        capability: crate::protocol::ClientCapability,
        request: Value,
    ) -> Result<Value, TaskError> {
        let shared = &self.shared;
        if matches!(shared.mode, Mode::Detached) {
            return Err(TaskError::Protocol(extension_required()));
        }
        if !capability.is_declared_in(&shared.caps) {
            let mut missing = Map::new();
            capability.add_to(&mut missing);
            return Err(TaskError::Protocol(McpError::missing_capability(Value::Object(
                missing,
            ))));
        }
        Ok(match &shared.mode {
            Mode::Detached => return Err(TaskError::Protocol(extension_required())),
            Mode::Legacy { session, outbound } => {
                let outbound = outbound
                    .as_ref()
                    .ok_or_else(|| TaskError::Protocol(McpError::internal("no stream to ask the client on")))?;
                let mut requests = Map::new();
                requests.insert(key.to_owned(), request);
                let mut answers = tokio::select! {
                    answers = session.ask(&requests, outbound) => answers.map_err(TaskError::Protocol)?,
                    _ = shared.cancel.cancelled() => return Err(TaskError::Cancelled),
                };
                answers.remove(key).unwrap_or(Value::Null)
            }
            Mode::Task { .. } => {
                let (wire, rx) = shared.register(key, request)?;
                // Dropped before the answer (a timeout around the ask, say):
                // the request is withdrawn from the task.
                // (Once answered, the key is no longer waiting: withdrawing is a no-op.)
                let _pending = Pending { shared, key: &wire };
                let timeout = shared.asks.timeout;
                tokio::select! {
                    answer = rx => answer.map_err(|_| TaskError::Cancelled)?,
                    _ = shared.cancel.cancelled() => return Err(TaskError::Cancelled),
                    () = tokio::time::sleep(timeout) => return Err(TaskError::Unanswered(timeout)),
                }
            }
        })
    }
}
