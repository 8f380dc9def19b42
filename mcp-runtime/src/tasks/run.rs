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

/// Polls the handler once; if it must wait, creates the task (durably) and
/// leaves the handler running in the background.
pub(crate) async fn start<F>(
    runtime: &Arc<TaskRuntime>,
    shared: Arc<Shared>,
    owner: Option<String>,
    support: TaskSupport,
    tool: &str,
    future: F,
) -> Result<Started, McpError>
where
    F: Future<Output = ToolOutput> + Send + Unpin + 'static,
{
    let slot = runtime.reserve(owner.as_deref())?;
    let mut future = CatchUnwind::new(future);
    let first = poll_fn(|cx| match Pin::new(&mut future).poll(cx) {
        Poll::Ready(out) => Poll::Ready(Some(out)),
        Poll::Pending => Poll::Ready(None),
    })
    .await;
    if let Some(out) = first {
        return Ok(Started::Ready(caught(out, tool)));
    }
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
    };
    if let Some(flush) = shared.take_flush() {
        record.status_message = flush.message;
        if !flush.new_requests.is_empty() {
            record.input_count = u32::try_from(flush.new_requests.len()).unwrap_or(u32::MAX);
            record.input_requests = flush.new_requests;
            record.status = TaskStatus::InputRequired;
        }
    }
    runtime
        .store
        .create(record.clone())
        .await
        .map_err(|e| McpError::internal(e.to_string()))?;
    tracing::debug!(task = %record.id, tool, "task created");
    let deadline = Instant::now() + std::time::Duration::from_millis(ttl_ms);
    let runner = Runner {
        runtime: runtime.clone(),
        shared,
        tool: tool.to_owned(),
        _slot: slot,
    };
    tokio::spawn(runner.drive(future, record.version, deadline));
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
    _slot: Slot,
}

enum Step {
    Done(Box<ToolOutput>),
    Flush,
    Changed,
    Heartbeat,
    Expired,
}

impl Runner {
    async fn drive<F>(self, mut future: CatchUnwind<F>, mut seen: u64, deadline: Instant)
    where
        F: Future<Output = ToolOutput> + Send + Unpin + 'static,
    {
        let store = self.runtime.store.clone();
        let id = self.shared.id.clone();
        let mut changed = store.changed(&id, seen);
        let mut expiry = Box::pin(tokio::time::sleep_until(deadline));
        let mut heartbeat = store.heartbeat_interval().map(|every| {
            let mut interval = tokio::time::interval_at(Instant::now() + every, every);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            interval
        });
        loop {
            let step = poll_fn(|cx| {
                if let Poll::Ready(out) = Pin::new(&mut future).poll(cx) {
                    return Poll::Ready(Step::Done(Box::new(caught(out, &self.tool))));
                }
                if self.shared.is_dirty() {
                    return Poll::Ready(Step::Flush);
                }
                if changed.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Step::Changed);
                }
                if expiry.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Step::Expired);
                }
                if let Some(interval) = heartbeat.as_mut() {
                    if interval.poll_tick(cx).is_ready() {
                        return Poll::Ready(Step::Heartbeat);
                    }
                }
                Poll::Pending
            })
            .await;
            match step {
                Step::Done(out) => {
                    self.finish(*out).await;
                    return;
                }
                Step::Flush => {
                    if let Some(record) = self.flush().await {
                        seen = record.version;
                        changed = store.changed(&id, seen);
                    }
                }
                Step::Changed => match store.get(&id).await {
                    Ok(Some(record)) if record.status == TaskStatus::Cancelled => {
                        self.shared.cancel.cancel();
                        // Cooperative: the handler may clean up for a while.
                        let grace = self.runtime.config.cancel_grace;
                        let _ = tokio::time::timeout(grace, &mut future).await;
                        tracing::debug!(task = %id, "task cancelled");
                        return;
                    }
                    Ok(Some(record)) if record.status.is_terminal() => return,
                    Ok(Some(record)) => {
                        seen = self.take_answers(record).await;
                        changed = store.changed(&id, seen);
                    }
                    // Expired or removed: nobody can see it any more.
                    Ok(None) => return,
                    Err(e) => {
                        tracing::warn!(task = %id, "task store: {e}; retrying");
                        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                        changed = store.changed(&id, seen);
                    }
                },
                Step::Heartbeat => {
                    if let Err(e) = store.heartbeat(&id).await {
                        tracing::warn!(task = %id, "task store: cannot renew the lease: {e}");
                    }
                }
                Step::Expired => {
                    tracing::debug!(task = %id, "task expired while running");
                    return;
                }
            }
        }
    }

    /// Writes the status message and new input requests to the store.
    async fn flush(&self) -> Option<TaskRecord> {
        let flush = self.shared.take_flush()?;
        let record = self
            .runtime
            .store
            .update(&self.shared.id, &|r| {
                if r.status.is_terminal() {
                    return false;
                }
                let mut changed = false;
                if flush.message.is_some() && r.status_message != flush.message {
                    r.status_message = flush.message.clone();
                    changed = true;
                }
                for (key, request) in &flush.new_requests {
                    r.input_requests.insert(key.clone(), request.clone());
                    r.input_count = r.input_count.saturating_add(1);
                    r.status = TaskStatus::InputRequired;
                    changed = true;
                }
                changed
            })
            .await;
        match record {
            Ok(Some(record)) => {
                (self.runtime.notify)(&record);
                Some(record)
            }
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(task = %self.shared.id, "task store: {e}");
                None
            }
        }
    }

    /// Takes the delivered answers this task's asks wait for and hands them
    /// over; returns the version seen.
    async fn take_answers(&self, record: TaskRecord) -> u64 {
        let keys: Vec<String> = record
            .input_responses
            .keys()
            .filter(|k| self.shared.is_waiting(k))
            .cloned()
            .collect();
        if keys.is_empty() {
            return record.version;
        }
        let taken = self
            .runtime
            .store
            .update(&self.shared.id, &|r| {
                let mut any = false;
                for key in &keys {
                    any |= r.input_responses.remove(key).is_some();
                }
                any
            })
            .await;
        for key in &keys {
            if let Some(answer) = record.input_responses.get(key) {
                self.shared.deliver(key, answer.clone());
            }
        }
        match taken {
            Ok(Some(after)) => after.version,
            _ => record.version,
        }
    }

    /// Records how the handler ended: `completed` with its result (an
    /// `isError` one too), or `failed` with the JSON-RPC error.
    async fn finish(&self, out: ToolOutput) {
        let limit = self.runtime.config.max_result_bytes;
        let (status, result, error) = match out {
            Ok(Outcome::Complete(result)) => match result_object(&result, limit) {
                Ok(object) => (TaskStatus::Completed, Some(object), None),
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
        let message = error.as_ref().map(|e| e.message().to_owned());
        let error = error.map(|e| error_object(&e));
        let record = self
            .runtime
            .store
            .update(&self.shared.id, &|r| {
                if r.status.is_terminal() {
                    return false;
                }
                r.status = status;
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
                tracing::debug!(task = %record.id, status = record.status.as_str(), "task finished");
                (self.runtime.notify)(&record);
            }
            Ok(None) => {}
            Err(e) => tracing::error!(task = %self.shared.id, "task store: cannot record the end: {e}"),
        }
    }
}

/// A tool result as the task keeps it, within the size limit.
fn result_object(result: &CallToolResult, limit: usize) -> Result<JsonObject, McpError> {
    let mut bytes = Vec::with_capacity(256);
    crate::tools::write_call_result(result, &mut bytes).map_err(|e| McpError::internal(e.to_string()))?;
    if bytes.len() > limit {
        return Err(McpError::internal(format!(
            "the task's result is {} bytes, more than the {limit} bytes a task may keep",
            bytes.len()
        )));
    }
    serde_json::from_slice(&bytes).map_err(|e| McpError::internal(e.to_string()))
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
