//! `tasks/get`, `tasks/update`, `tasks/cancel` (tasks extension), and the
//! `CreateTaskResult` a task tool's call answers with.
//!
//! Each reads or changes the task's record in the store, so any replica
//! sharing the store serves them. A task is visible only to the principal
//! that created it: another one gets the same -32602 as an unknown id.

use crate::error::McpError;
use crate::jsonrpc::parse_params;
use crate::method::Method;
use crate::protocol::{DetailedTask, TaskIdParams, TaskStatus, UpdateTaskParams};
use crate::server::{Context, Server};
use crate::tasks::TaskRecord;
use serde::Serialize;
use serde_json::value::RawValue;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WithType<'a> {
    result_type: &'static str,
    #[serde(flatten)]
    task: &'a DetailedTask,
}

/// The `CreateTaskResult` of a call that became a task.
pub(crate) fn created(server: &Server, task: &DetailedTask) -> Vec<u8> {
    super::finish(
        server,
        &WithType {
            result_type: "task",
            task,
        },
    )
}

/// Serves one of the three methods.
pub(crate) async fn serve(
    server: &Server,
    method: Method,
    params: Option<&RawValue>,
    ctx: &Context,
) -> Result<Vec<u8>, McpError> {
    if !crate::tasks::declared(ctx.client_capabilities()) {
        return Err(crate::tasks::extension_required());
    }
    #[cfg(feature = "client")]
    if !server.inner.tasks.relays.is_empty() {
        if let Some(reply) = relayed(server, method, params, ctx).await {
            return reply;
        }
    }
    match method {
        Method::TasksUpdate => {
            let params: UpdateTaskParams = parse_params(params)?;
            let record = find(server, &params.task_id, ctx.principal()).await?;
            answer(server, &record, &params.input_responses).await?;
            Ok(ack(server))
        }
        Method::TasksCancel => {
            let params: TaskIdParams = parse_params(params)?;
            let record = find(server, &params.task_id, ctx.principal()).await?;
            // A finished task stays as it ended: the ack is the same.
            cancel(server, &record).await?;
            Ok(ack(server))
        }
        _ => {
            let params: TaskIdParams = parse_params(params)?;
            let record = find(server, &params.task_id, ctx.principal()).await?;
            let task = record.detailed();
            Ok(super::finish(
                server,
                &WithType {
                    result_type: "complete",
                    task: &task,
                },
            ))
        }
    }
}

/// Hands `record`'s outstanding input requests their answers (unknown and
/// answered keys are ignored); the task is `working` again when none is left.
pub(crate) async fn answer(
    server: &Server,
    record: &TaskRecord,
    responses: &crate::protocol::JsonObject,
) -> Result<(), McpError> {
    let changed = update(server, &record.id, &|r| {
        if r.status.is_terminal() {
            return false;
        }
        let mut changed = false;
        for (key, answer) in responses {
            if r.input_requests.remove(key).is_some() {
                r.input_responses.insert(key.clone(), answer.clone());
                changed = true;
            }
        }
        if changed && r.input_requests.is_empty() && r.status == TaskStatus::InputRequired {
            r.status = TaskStatus::Working;
        }
        changed
    })
    .await?;
    if let Some(changed) = changed.filter(|r| r.version != record.version) {
        (server.inner.tasks.notify)(&changed);
    }
    Ok(())
}

/// Cancels `record` unless it has ended; the record after.
pub(crate) async fn cancel(server: &Server, record: &TaskRecord) -> Result<Option<TaskRecord>, McpError> {
    let finished_ttl_ms = server.inner.tasks.config.finished_ttl_ms;
    let changed = update(server, &record.id, &|r| {
        if r.status.is_terminal() {
            return false;
        }
        r.status = TaskStatus::Cancelled;
        r.ttl_ms = crate::tasks::finished_ttl(r, finished_ttl_ms, crate::tasks::time::now_ms());
        r.status_message = Some("Cancelled at the client's request".into());
        r.input_requests.clear();
        r.input_responses.clear();
        true
    })
    .await?;
    if let Some(changed) = changed.as_ref().filter(|r| r.version != record.version) {
        (server.inner.tasks.notify)(changed);
    }
    Ok(changed)
}

/// The task, if it exists and belongs to `principal`; a store error is
/// logged and taken as none (a listen stream reading a task it follows).
pub(crate) async fn read_own(server: &Server, id: &str, principal: Option<&str>) -> Option<TaskRecord> {
    match server.inner.tasks.store.get(id).await {
        Ok(record) => record.filter(|r| r.owner.as_deref() == principal),
        Err(e) => {
            tracing::warn!(task = %id, "task store: {e}");
            None
        }
    }
}

/// The task, if it exists and belongs to `principal`.
pub(crate) async fn find(server: &Server, id: &str, principal: Option<&str>) -> Result<TaskRecord, McpError> {
    let record = server.inner.tasks.store.get(id).await.map_err(|e| e.to_client())?;
    match record {
        Some(record) if record.owner.as_deref() == principal => {
            // This request's span links to the call that created the task.
            crate::telemetry::link_current(record.trace.as_deref());
            Ok(record)
        }
        _ => Err(not_found(id)),
    }
}

/// -32602 for a task this caller cannot see: the same for an unknown id, an
/// expired task and another principal's.
pub(crate) fn not_found(id: &str) -> McpError {
    McpError::invalid_params(format!(
        "Failed to retrieve task: task {id:?} not found (unknown, expired, or not yours)"
    ))
}

async fn update(
    server: &Server,
    id: &str,
    change: crate::tasks::TaskChange<'_>,
) -> Result<Option<TaskRecord>, McpError> {
    server
        .inner
        .tasks
        .store
        .update(id, change)
        .await
        .map_err(|e| e.to_client())
}

/// The empty acknowledgement of `tasks/update` and `tasks/cancel`.
fn ack(server: &Server) -> Vec<u8> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Ack {
        result_type: &'static str,
    }
    super::finish(
        server,
        &Ack {
            result_type: "complete",
        },
    )
}

/// A task an upstream runs (its id a relayed one, `tasks::relay`): the
/// request goes there with the upstream's own id, and the answer comes
/// back with the caller's. `None` when the id is not one.
#[cfg(feature = "client")]
async fn relayed(
    server: &Server,
    method: Method,
    params: Option<&RawValue>,
    ctx: &Context,
) -> Option<Result<Vec<u8>, McpError>> {
    let mut params: serde_json::Map<String, serde_json::Value> = match parse_params(params) {
        Ok(params) => params,
        Err(e) => return Some(Err(e)),
    };
    let id = params.get("taskId")?.as_str()?.to_owned();
    let (relay, upstream_id) = server
        .inner
        .tasks
        .relays
        .open(&server.inner.sealer, &id, ctx.principal())?;
    params.remove("_meta");
    params.insert("taskId".into(), serde_json::Value::String(upstream_id));
    let caps = serde_json::to_value(ctx.client_capabilities()).unwrap_or_default();
    let mut result = match relay
        .relay(method.as_str(), serde_json::Value::Object(params), caps)
        .await
    {
        Ok(result) => result,
        Err(e) => return Some(Err(e)),
    };
    let Some(object) = result.as_object_mut() else {
        return Some(Err(McpError::internal("the upstream's task answer is not an object")));
    };
    if object.contains_key("taskId") {
        object.insert("taskId".into(), serde_json::Value::String(id));
    }
    // The answer is this server's: its `_meta` names this server.
    let meta = object.remove("_meta");
    let mut out = super::finish(server, &result);
    if let Some(serde_json::Value::Object(mut meta)) = meta {
        meta.remove(crate::protocol::META_SERVER_INFO);
        if !meta.is_empty() {
            // The upstream's other `_meta` keys, beside this server's.
            let mut value: serde_json::Value = serde_json::from_slice(&out).unwrap_or_default();
            if let Some(ours) = value.get_mut("_meta").and_then(serde_json::Value::as_object_mut) {
                for (k, v) in meta {
                    ours.entry(k).or_insert(v);
                }
            }
            out = serde_json::to_vec(&value).unwrap_or(out);
        }
    }
    Some(Ok(out))
}
