//! Running a task: the first poll decides whether the call becomes one; the
//! runner then drives the handler in the background, writes what it reports
//! to the store, hands it the answers `tasks/update` delivered, and stops it
//! when `tasks/cancel` arrives or its time to live ends.

use super::{Shared, Slot, TaskRecord, TaskRuntime, TaskSupport};
use crate::error::McpError;
use crate::mrtr::Outcome;
use crate::panic::CatchUnwind;
use crate::protocol::{CallToolResult, DetailedTask, JsonObject, TaskStatus};
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use tokio::time::Instant;

type ToolOutput = Result<Outcome<CallToolResult>, McpError>;

/// How a task-eligible call went on its first poll.
pub(crate) enum Started {
    /// It finished (or halted on an MRTR ask) at once: an ordinary answer.
    Ready(ToolOutput),
    /// It became a task: the `CreateTaskResult` body.
    Created(DetailedTask),
}

/// What a task-eligible call is: who made it, how the tool runs as a task.
pub(crate) struct Launch<'a> {
    /// The principal that will own the task, if any.
    pub owner: Option<String>,
    /// Who it is counted for (`tasks::caller_key`).
    pub caller: &'a str,
    /// The tool's task settings.
    pub support: TaskSupport,
    /// The tool's timeout, which bounds the task's run.
    pub timeout: Option<std::time::Duration>,
    /// The tool's name.
    pub tool: &'a str,
    /// The call's place among the tool's calls at once, if they are bounded:
    /// a task holds it until it ends.
    pub place: Option<tokio::sync::OwnedSemaphorePermit>,
    /// It becomes a task only if the handler has not answered within this
    /// time; `None`: if it waits at all.
    pub after: Option<std::time::Duration>,
    /// A task even if the handler answers in its first poll (a 2025-11-25
    /// task-augmented call, answered with a task): the task is created,
    /// then ended with the answer. An MRTR ask or an error is still
    /// answered directly, and so is the answer when the store cannot keep
    /// the task (the tool has run: its result is not thrown away).
    pub always: bool,
}

/// Polls the handler once; if it must wait, creates the task (durably) and
/// leaves the handler running in the background.
pub(crate) async fn start<F>(
    runtime: &Arc<TaskRuntime>,
    shared: Arc<Shared>,
    call: Launch<'_>,
    future: F,
) -> Result<Started, McpError>
where
    F: Future<Output = ToolOutput> + Send + Unpin + 'static,
{
    let Launch {
        owner,
        caller,
        support,
        timeout,
        tool,
        place,
        after,
        always,
    } = call;
    let slot = runtime.reserve(caller)?;
    let started = Instant::now();
    let mut future = CatchUnwind::new(future);
    let first = match after {
        None => {
            poll_fn(|cx| match Pin::new(&mut future).poll(cx) {
                Poll::Ready(out) => Poll::Ready(Some(out)),
                Poll::Pending => Poll::Ready(None),
            })
            .await
        }
        Some(wait) => tokio::time::timeout(wait, &mut future).await.ok(),
    };
    // Boxed, as is its ending below: the common path's future stays small.
    let answered = match first.map(|out| caught(out, tool)) {
        Some(out @ Ok(Outcome::Complete(_))) if always => Some(Box::new(out)),
        Some(out) => return Ok(Started::Ready(out)),
        None => None,
    };
    let config = &runtime.config;
    let now = super::time::now_ms();
    let ttl_ms = support.ttl_ms.unwrap_or(config.ttl_ms);
    let mut record = TaskRecord {
        id: shared.id.clone(),
        owner,
        status: TaskStatus::Working,
        status_message: None,
        created_ms: now,
        updated_ms: now,
        ttl_ms: Some(ttl_ms),
        poll_interval_ms: Some(support.poll_interval_ms.unwrap_or(config.poll_interval_ms)),
        input_requests: JsonObject::new(),
        input_responses: JsonObject::new(),
        input_count: 0,
        result: None,
        error: None,
        version: 0,
        trace: crate::telemetry::current_link(),
    };
    if let Some(flush) = shared.take_flush() {
        record.status_message = flush.message;
        if !flush.new_requests.is_empty() {
            record.input_count = u32::try_from(flush.new_requests.len()).unwrap_or(u32::MAX);
            record.input_requests = flush.new_requests;
            record.status = TaskStatus::InputRequired;
        }
    }
    if let Err(e) = runtime.store.create(record.clone()).await {
        // A call that has already finished keeps its result: answered as
        // a plain call, rather than lost with the task that could not be kept.
        if let Some(out) = answered {
            tracing::warn!(
                tool,
                "task store: cannot create a task ({e}); the finished call is answered without one"
            );
            return Ok(Started::Ready(*out));
        }
        return Err(e.to_client());
    }
    slot.created(&record.id, record.expires_ms().unwrap_or(u64::MAX));
    tracing::debug!(task = %record.id, tool, "task created");
    // A time to live too long for the clock is as good as none.
    let deadline = Instant::now()
        .checked_add(std::time::Duration::from_millis(ttl_ms))
        .unwrap_or_else(|| Instant::now() + std::time::Duration::from_secs(100 * 365 * 86_400));
    let span = crate::telemetry::task_span(tool, &record.id, record.trace.as_deref());
    let runner = Runner {
        runtime: runtime.clone(),
        shared,
        tool: tool.to_owned(),
        slot,
        created_expiry: record.expires_ms().unwrap_or(u64::MAX),
        _running: crate::telemetry::Held::new(crate::telemetry::Gauge::Tasks),
        _lease: Lease::keep(runtime.store.clone(), &record.id),
        timeout,
        _place: place,
    };
    if let Some(out) = answered {
        // Created working, as every task is, then ended at once.
        let left = tracing::Instrument::instrument(Box::pin(runner.finish(*out)), span).await;
        runner.slot.ended(&runner.shared.id, left);
        return Ok(Started::Created(record.summary()));
    }
    // The tool's timeout bounds the task's run (from its first poll).
    let limit = timeout.and_then(|t| started.checked_add(t));
    tokio::spawn(tracing::Instrument::instrument(
        runner.drive(future, record.version, deadline, limit),
        span,
    ));
    Ok(Started::Created(record.summary()))
}

/// A handler's output, a panic made -32603.
fn caught(out: Result<ToolOutput, String>, tool: &str) -> ToolOutput {
    out.unwrap_or_else(|message| {
        tracing::error!(tool, "tool handler panicked: {message}");
        Err(McpError::internal(format!("Internal error: tool `{tool}` panicked")))
    })
}

struct Runner {
    runtime: Arc<TaskRuntime>,
    shared: Arc<Shared>,
    tool: String,
    slot: Slot,
    /// When the record written at the start expires (`u64::MAX`: never).
    created_expiry: u64,
    _running: crate::telemetry::Held,
    _lease: Option<Lease>,
    /// The tool's timeout, if any.
    timeout: Option<std::time::Duration>,
    _place: Option<tokio::sync::OwnedSemaphorePermit>,
}

/// The renewal of a running task's lease, on a store that needs one: a
/// task of its own, so that a handler that blocks its thread between
/// awaits (a synchronous library call, say) does not stop it; on a store
/// error it tries again sooner, and a lease outlives two missed beats.
/// Ends when the runner does.
struct Lease(tokio::task::AbortHandle);

impl Lease {
    fn keep(store: Arc<dyn super::TaskStore>, id: &str) -> Option<Lease> {
        let every = store.heartbeat_interval()?;
        let id = id.to_owned();
        let renewing = tokio::spawn(async move {
            let mut next = every;
            loop {
                tokio::time::sleep(next).await;
                next = match store.heartbeat(&id).await {
                    Ok(()) => every,
                    Err(e) => {
                        tracing::warn!(task = %id, "task store: cannot renew the lease: {e}; trying again");
                        RETRY.min(every)
                    }
                };
            }
        });
        Some(Lease(renewing.abort_handle()))
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.0.abort();
    }
}

enum Step {
    Done(Box<ToolOutput>),
    Flush,
    Changed,
    Expired,
    /// The tool's timeout passed.
    TimedOut,
    /// The server stopped and its grace is over.
    Halted,
}

/// Why the runner stops watching before the handler ends.
enum Stop {
    /// `tasks/cancel`: give the handler its grace, then drop it. The
    /// record's expiry.
    Cancelled(Option<u64>),
    /// The record ended otherwise (its expiry), expired, or is gone (`None`).
    Gone(Option<u64>),
}

/// What a flush of the handler's status and asks came to.
enum Flushed {
    /// The record as written.
    Record(Box<TaskRecord>),
    /// Nothing to write, or the store failed (written again later).
    Nothing,
    /// The record expired or was removed.
    Gone,
}

/// What is left of a task once its runner ends: its record kept until
/// then (milliseconds since the epoch) with a result of so many bytes, or
/// nothing.
type Left = Option<(u64, usize)>;

impl Runner {
    async fn drive<F>(self, future: CatchUnwind<F>, seen: u64, deadline: Instant, limit: Option<Instant>)
    where
        F: Future<Output = ToolOutput> + Send + Unpin + 'static,
    {
        let left = self.run(future, seen, deadline, limit).await;
        self.slot.ended(&self.shared.id, left);
    }

    async fn run<F>(&self, mut future: CatchUnwind<F>, mut seen: u64, deadline: Instant, limit: Option<Instant>) -> Left
    where
        F: Future<Output = ToolOutput> + Send + Unpin + 'static,
    {
        let store = self.runtime.store.clone();
        let id = self.shared.id.clone();
        let mut changed = store.changed(&id, seen);
        let mut expiry = Box::pin(tokio::time::sleep_until(deadline));
        let mut timeout = limit.map(|at| Box::pin(tokio::time::sleep_until(at)));
        let mut woken = Box::pin(self.shared.wake.notified());
        let halt = self.runtime.halt.clone();
        let mut halted = Box::pin(halt.cancelled());
        loop {
            // A handler that has something to write at every poll, to a
            // store that answers at once, would keep this loop from ever
            // yielding: now and then other tasks (and the timers) run.
            tokio::task::consume_budget().await;
            let step = poll_fn(|cx| {
                if let Poll::Ready(out) = Pin::new(&mut future).poll(cx) {
                    return Poll::Ready(Step::Done(Box::new(caught(out, &self.tool))));
                }
                // What ends the task comes before what it says: a handler
                // that sets a status at every poll must not outrun its
                // timeout, its record's expiry or the server's stop.
                if halted.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Step::Halted);
                }
                if timeout.as_mut().is_some_and(|t| t.as_mut().poll(cx).is_ready()) {
                    return Poll::Ready(Step::TimedOut);
                }
                if expiry.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Step::Expired);
                }
                if changed.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Step::Changed);
                }
                // A status or an ask from the handler, or from a task it spawned.
                let _ = woken.as_mut().poll(cx);
                if self.shared.is_dirty() {
                    return Poll::Ready(Step::Flush);
                }
                Poll::Pending
            })
            .await;
            woken = Box::pin(self.shared.wake.notified());
            let record = match step {
                Step::Done(out) => return self.finish(*out).await,
                Step::Flush => match self.flush().await {
                    Flushed::Record(record) => Some(*record),
                    Flushed::Nothing => None,
                    // Expired or removed meanwhile: as for a change that says so.
                    Flushed::Gone => {
                        self.shared.cancel.cancel();
                        return None;
                    }
                },
                Step::Changed => {
                    match store.get(&id).await {
                        Ok(Some(record)) => Some(record),
                        // Expired or removed: nobody can see it any more, and
                        // what the handler spawned is told to stop.
                        Ok(None) => {
                            self.shared.cancel.cancel();
                            return None;
                        }
                        Err(e) => {
                            tracing::warn!(task = %id, "task store: {e}; retrying");
                            tokio::time::sleep(RETRY).await;
                            None
                        }
                    }
                }
                Step::Expired => {
                    // The handler is dropped with the runner; its token fires
                    // first, for what it spawned.
                    self.shared.cancel.cancel();
                    tracing::debug!(task = %id, "task expired while running");
                    return None;
                }
                Step::TimedOut => {
                    // The handler's token fires first; its future is dropped with the runner.
                    self.shared.cancel.cancel();
                    tracing::warn!(task = %id, tool = %self.tool, "task timed out");
                    return self
                        .finish(Err(McpError::internal(crate::tools::timed_out(
                            &self.tool,
                            self.timeout.unwrap_or_default(),
                        ))))
                        .await;
                }
                Step::Halted => {
                    // The handler is dropped with the runner; its token fires first.
                    self.shared.cancel.cancel();
                    tracing::info!(task = %id, "task stopped with the server");
                    return self
                        .finish(Err(McpError::internal(
                            "the server stopped before the task finished; start it again",
                        )))
                        .await;
                }
            };
            if let Some(record) = record {
                match self.settle(record).await {
                    Ok(version) => seen = version,
                    Err(Stop::Cancelled(expires)) => {
                        self.shared.cancel.cancel();
                        // Cooperative: the handler may clean up for a while.
                        let grace = self.runtime.config.cancel_grace;
                        let _ = tokio::time::timeout(grace, &mut future).await;
                        tracing::debug!(task = %id, "task cancelled");
                        return expires.map(|at| (at, 0));
                    }
                    Err(Stop::Gone(expires)) => {
                        self.shared.cancel.cancel();
                        return expires.map(|at| (at, 0));
                    }
                }
            }
            changed = store.changed(&id, seen);
        }
    }

    /// Looks at every record the runner reads or writes: a cancelled or
    /// ended task stops the runner; answers its asks wait for are taken and
    /// handed over, until none is left. Returns the version fully seen.
    async fn settle(&self, mut record: TaskRecord) -> Result<u64, Stop> {
        loop {
            let expires = || Some(record.expires_ms().unwrap_or(u64::MAX));
            if record.status == TaskStatus::Cancelled {
                return Err(Stop::Cancelled(expires()));
            }
            if record.status.is_terminal() {
                return Err(Stop::Gone(expires()));
            }
            let keys: Vec<String> = record
                .input_responses
                .keys()
                .filter(|k| self.shared.is_waiting(k))
                .cloned()
                .collect();
            if keys.is_empty() {
                return Ok(record.version);
            }
            let taken = std::sync::Mutex::new(JsonObject::new());
            let after = self
                .runtime
                .store
                .update(&self.shared.id, &|r| {
                    let mut got = taken.lock().unwrap_or_else(|p| p.into_inner());
                    got.clear();
                    for key in &keys {
                        if let Some(answer) = r.input_responses.remove(key) {
                            got.insert(key.clone(), answer);
                        }
                    }
                    !got.is_empty()
                })
                .await;
            match after {
                Ok(Some(after)) => {
                    let taken = taken.into_inner().unwrap_or_else(|p| p.into_inner());
                    for (key, answer) in taken {
                        self.shared.deliver(&key, answer);
                    }
                    record = after;
                }
                Ok(None) => return Err(Stop::Gone(None)),
                Err(e) => {
                    tracing::warn!(task = %self.shared.id, "task store: cannot take answers: {e}");
                    tokio::time::sleep(RETRY).await;
                    return Ok(record.version.saturating_sub(1));
                }
            }
        }
    }

    /// Writes the status message, new input requests and withdrawn ones to
    /// the store; on a store error puts them back to be written again.
    async fn flush(&self) -> Flushed {
        let Some(flush) = self.shared.take_flush() else {
            return Flushed::Nothing;
        };
        let changed = std::sync::atomic::AtomicBool::new(false);
        let record = self
            .runtime
            .store
            .update(&self.shared.id, &|r| {
                changed.store(false, std::sync::atomic::Ordering::Relaxed);
                if r.status.is_terminal() {
                    return false;
                }
                let mut any = false;
                if flush.message.is_some() && r.status_message != flush.message {
                    r.status_message = flush.message.clone();
                    any = true;
                }
                for (key, request) in &flush.new_requests {
                    r.input_requests.insert(key.clone(), request.clone());
                    r.input_count = r.input_count.saturating_add(1);
                    r.status = TaskStatus::InputRequired;
                    any = true;
                }
                for key in &flush.withdrawn {
                    any |= r.input_requests.remove(key).is_some();
                    any |= r.input_responses.remove(key).is_some();
                }
                if r.status == TaskStatus::InputRequired && r.input_requests.is_empty() {
                    r.status = TaskStatus::Working;
                    any = true;
                }
                changed.store(any, std::sync::atomic::Ordering::Relaxed);
                any
            })
            .await;
        match record {
            Ok(Some(record)) => {
                if changed.load(std::sync::atomic::Ordering::Relaxed) {
                    (self.runtime.notify)(&record);
                }
                Flushed::Record(Box::new(record))
            }
            Ok(None) => Flushed::Gone,
            Err(e) => {
                tracing::warn!(task = %self.shared.id, "task store: {e}; writing again shortly");
                self.shared.restore(flush);
                tokio::time::sleep(RETRY).await;
                Flushed::Nothing
            }
        }
    }

    /// Records how the handler ended: `completed` with its result (an
    /// `isError` one too), or `failed` with the JSON-RPC error. Retries a
    /// store that is away for a while.
    async fn finish(&self, out: ToolOutput) -> Left {
        let limit = self.runtime.config.max_result_bytes;
        let mut bytes = 0;
        // The task's span (`telemetry::task_span`, entered by its caller)
        // says how it ended, as a request's does.
        let span = tracing::Span::current();
        let tool_error = matches!(&out, Ok(Outcome::Complete(result)) if result.is_error == Some(true));
        let (status, result, error) = match out {
            Ok(Outcome::Complete(result)) => match result_object(&result, limit) {
                Ok((object, size)) => {
                    bytes = size;
                    (TaskStatus::Completed, Some(object), None)
                }
                Err(e) => (TaskStatus::Failed, None, Some(e)),
            },
            Ok(Outcome::InputRequired(_)) => (
                TaskStatus::Failed,
                None,
                Some(McpError::internal(
                    "the tool asked with Input after its task started: inside a task, ask with Task::elicit, \
                     Task::sample or Task::roots (Input asks must come before the handler's first await)",
                )),
            ),
            Err(e) => (TaskStatus::Failed, None, Some(e)),
        };
        // Marked once: a failure (a result too large too) over a tool error.
        match &error {
            Some(e) => crate::telemetry::record_error(&span, &e.code().0, e.message()),
            None if tool_error => {
                let message = "the tool's result is an error (isError)";
                crate::telemetry::record_error(&span, &crate::telemetry::keys::TOOL_ERROR, message);
            }
            None => {}
        }
        let message = error.as_ref().map(|e| e.message().to_owned());
        let error = error.map(|e| error_object(&e));
        let changed = std::sync::atomic::AtomicBool::new(false);
        let finished_ttl_ms = self.runtime.config.finished_ttl_ms;
        for attempt in 1..=FINISH_ATTEMPTS {
            let record = self
                .runtime
                .store
                .update(&self.shared.id, &|r| {
                    let ends = !r.status.is_terminal();
                    changed.store(ends, std::sync::atomic::Ordering::Relaxed);
                    if !ends {
                        return false;
                    }
                    r.status = status;
                    r.ttl_ms = super::finished_ttl(r, finished_ttl_ms, super::time::now_ms());
                    r.result = result.clone();
                    r.error = error.clone();
                    if message.is_some() {
                        r.status_message = message.clone();
                    }
                    r.input_requests.clear();
                    r.input_responses.clear();
                    true
                })
                .await;
            match record {
                Ok(Some(record)) => {
                    if changed.load(std::sync::atomic::Ordering::Relaxed) {
                        tracing::debug!(task = %record.id, status = record.status.as_str(), "task finished");
                        (self.runtime.notify)(&record);
                        return Some((record.expires_ms().unwrap_or(u64::MAX), bytes));
                    } else if record.status != TaskStatus::Cancelled {
                        // Its work is done (side effects included) but nobody will see how it ended.
                        tracing::warn!(
                            task = %record.id,
                            tool = %self.tool,
                            "the task's {} was lost: its record was already {} ({})",
                            status.as_str(),
                            record.status.as_str(),
                            record.status_message.as_deref().unwrap_or("no message"),
                        );
                    }
                    return Some((record.expires_ms().unwrap_or(u64::MAX), 0));
                }
                Ok(None) => {
                    tracing::warn!(task = %self.shared.id, tool = %self.tool, "the task's {} was lost: its record expired", status.as_str());
                    return None;
                }
                Err(e) if attempt < FINISH_ATTEMPTS => {
                    tracing::warn!(task = %self.shared.id, "task store: cannot record the end yet: {e}");
                    tokio::time::sleep(RETRY * attempt).await;
                }
                Err(e) => tracing::error!(task = %self.shared.id, "task store: cannot record the end: {e}"),
            }
        }
        // Unknown: counted as kept for as long as the record written at the
        // start may be.
        Some((self.created_expiry, 0))
    }
}

/// How long the runner waits before trying an unavailable store again.
const RETRY: std::time::Duration = std::time::Duration::from_millis(500);

/// How often the runner tries to record a task's end (backing off 0.5 s, 1 s, ...).
const FINISH_ATTEMPTS: u32 = 8;

/// A tool result as the task keeps it, within the size limit, and its size.
fn result_object(result: &CallToolResult, limit: usize) -> Result<(JsonObject, usize), McpError> {
    let mut bytes = Vec::with_capacity(256);
    crate::tools::write_call_result(result, &mut bytes).map_err(|e| McpError::internal(e.to_string()))?;
    if bytes.len() > limit {
        return Err(McpError::internal(format!(
            "the task's result is {} bytes, more than the {limit} bytes a task may keep",
            bytes.len()
        )));
    }
    let object = serde_json::from_slice(&bytes).map_err(|e| McpError::internal(e.to_string()))?;
    Ok((object, bytes.len()))
}

/// A JSON-RPC error as an object (`code`, `message`, `data`).
pub(crate) fn error_object(e: &McpError) -> JsonObject {
    let mut object = JsonObject::new();
    object.insert("code".into(), e.code().0.into());
    object.insert("message".into(), e.message().into());
    if let Some(data) = e.data() {
        object.insert("data".into(), data.clone());
    }
    object
}
