//! The tasks of 2025-11-25 (experimental in that revision): a session asks
//! for one with `params.task` on `tools/call`, and follows it with
//! `tasks/get`, `tasks/result` and `tasks/cancel`. They are the same records
//! in the same store as the extension's; only their wire form differs, which
//! is written here.

use super::TaskRecord;
use crate::error::{ErrorCode, McpError};
use crate::protocol::TaskStatus;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

/// What a 2025-11-25 server declares at `initialize` when it has task tools:
/// task-augmented `tools/call` and `tasks/cancel` (not `tasks/list`).
pub(crate) fn capability() -> Map<String, Value> {
    let mut tasks = Map::new();
    tasks.insert("cancel".into(), json!({}));
    tasks.insert("requests".into(), json!({"tools": {"call": {}}}));
    tasks
}

/// The least time to live a task-augmented call is given, whatever `ttl`
/// it asks for (the tool's own, when that is less).
pub(crate) const MIN_TTL_MS: u64 = 60_000;

/// The `ttl` a task-augmented call asks for (`params.task`, `{"ttl": ms}`),
/// if any; -32602 when `task` is not such an object.
pub(crate) fn requested_ttl(raw: &RawValue) -> Result<Option<u64>, McpError> {
    #[derive(serde::Deserialize)]
    struct TaskMetadata {
        #[serde(default)]
        ttl: Option<u64>,
    }
    serde_json::from_str::<TaskMetadata>(raw.get())
        .map(|t| t.ttl)
        .map_err(|e| McpError::invalid_params(format!("Invalid params: task: {e}")))
}

/// -32601 for a task-augmented call of a tool that does not run as a task.
pub(crate) fn not_a_task_tool(tool: &str) -> McpError {
    McpError::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("Tool `{tool}` does not run as a task: call it without `task`"),
    )
}

/// -32601 for a plain call of a tool that runs only as a task.
pub(crate) fn task_required(tool: &str) -> McpError {
    McpError::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("Tool `{tool}` runs only as a task: call it with `task` in its params"),
    )
}

/// The status 2025-11-25 gives a record: a tool result with `isError` is
/// `failed` there, `completed` in the extension.
pub(crate) fn status(record: &TaskRecord) -> TaskStatus {
    let tool_error = record
        .result
        .as_ref()
        .is_some_and(|r| r.get("isError") == Some(&Value::Bool(true)));
    match record.status {
        TaskStatus::Completed if tool_error => TaskStatus::Failed,
        status => status,
    }
}

/// The record as a 2025-11-25 `Task`.
pub(crate) fn view(record: &TaskRecord) -> Value {
    let mut task = Map::new();
    task.insert("taskId".into(), Value::String(record.id.clone()));
    task.insert("status".into(), json!(status(record)));
    if let Some(message) = &record.status_message {
        task.insert("statusMessage".into(), Value::String(message.clone()));
    }
    task.insert(
        "createdAt".into(),
        Value::String(super::time::iso8601(record.created_ms)),
    );
    task.insert(
        "lastUpdatedAt".into(),
        Value::String(super::time::iso8601(record.updated_ms)),
    );
    task.insert("ttl".into(), json!(record.ttl_ms));
    if let Some(every) = record.poll_interval_ms {
        task.insert("pollInterval".into(), json!(every));
    }
    Value::Object(task)
}

/// A 2026-07-28 `CreateTaskResult` object (`taskId`, `ttlMs`,
/// `pollIntervalMs` ... at the top) in 2025-11-25's form, `{"task": {..}}`.
pub(crate) fn created(mut object: Map<String, Value>) -> Map<String, Value> {
    let mut task = Map::new();
    for (from, to) in [
        ("taskId", "taskId"),
        ("status", "status"),
        ("statusMessage", "statusMessage"),
        ("createdAt", "createdAt"),
        ("lastUpdatedAt", "lastUpdatedAt"),
        ("ttlMs", "ttl"),
        ("pollIntervalMs", "pollInterval"),
    ] {
        if let Some(value) = object.remove(from) {
            task.insert(to.into(), value);
        }
    }
    task.entry("ttl").or_insert(Value::Null);
    // Every task begins `working` there (one that asked already says so
    // at its first `tasks/get`).
    task.insert("status".into(), json!(TaskStatus::Working));
    let mut out = Map::new();
    out.insert("task".into(), Value::Object(task));
    out
}

/// A `tasks/result`'s result without the task its `_meta` names (and
/// without a `_meta` that is empty then): what the call itself returns.
#[cfg(feature = "client")]
pub(crate) fn unrelated(mut result: Value) -> Value {
    if let Some(object) = result.as_object_mut() {
        if let Some(Value::Object(meta)) = object.get_mut("_meta") {
            meta.remove(crate::protocol::META_RELATED_TASK);
            if meta.is_empty() {
                object.remove("_meta");
            }
        }
    }
    result
}

/// What `tasks/result` answers for an ended record: the tool's result with
/// the task named in its `_meta`, or the call's JSON-RPC error; `None` while
/// it runs.
pub(crate) fn result(record: &TaskRecord) -> Option<Result<Value, McpError>> {
    Some(match record.status {
        TaskStatus::Completed => {
            let mut result = record.result.clone().unwrap_or_default();
            let meta = result.entry("_meta").or_insert_with(|| json!({}));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert(
                    crate::protocol::META_RELATED_TASK.into(),
                    json!({ "taskId": record.id }),
                );
            }
            Ok(Value::Object(result))
        }
        TaskStatus::Failed => Err(match &record.error {
            Some(error) => crate::calls::error_of(&Value::Object(error.clone())),
            None => McpError::internal("Internal error"),
        }),
        TaskStatus::Cancelled => Err(McpError::internal(format!(
            "Task {:?} was cancelled: it has no result",
            record.id
        ))),
        TaskStatus::Working | TaskStatus::InputRequired => return None,
    })
}
