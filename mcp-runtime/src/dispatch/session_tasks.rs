//! The tasks of a 2025-11-25 session (that revision's experimental tasks):
//! `tasks/get`, `tasks/result` and `tasks/cancel`, served from the same
//! store as the extension's `tasks/*` (`tasks::legacy` writes their wire
//! form). A task's input requests reach the session on the stream of a
//! `tasks/result` that waits for it, as requests that name the task.

use super::Scope;
use crate::error::McpError;
use crate::jsonrpc::parse_params;
use crate::method::Method;
use crate::protocol::{TaskIdParams, TaskStatus};
use crate::server::Server;
use crate::session::Session;
use crate::tasks::{legacy, TaskRecord};
use serde_json::value::RawValue;
use serde_json::{json, Value};

/// Serves one of the three methods for `session`'s caller.
pub(crate) async fn serve(
    server: &Server,
    method: Method,
    params: Option<&RawValue>,
    scope: &Scope,
    session: &Session,
) -> Result<Vec<u8>, McpError> {
    let params: TaskIdParams = parse_params(params)?;
    let principal = scope.principal.as_deref();
    let record = super::tasks::find(server, &params.task_id, principal).await?;
    let task = match method {
        Method::TasksResult => return result(server, record, scope, session).await,
        Method::TasksCancel => {
            let ended = |r: &TaskRecord| {
                McpError::invalid_params(format!(
                    "Cannot cancel task {:?}: it has already ended ({})",
                    r.id,
                    legacy::status(r).as_str()
                ))
            };
            if record.status.is_terminal() {
                return Err(ended(&record));
            }
            match super::tasks::cancel(server, &record).await? {
                Some(after) if after.status == TaskStatus::Cancelled => legacy::view(&after),
                // It ended meanwhile.
                Some(after) => return Err(ended(&after)),
                None => {
                    return Err(McpError::invalid_params(format!(
                        "Failed to cancel task {:?}: it has expired",
                        record.id
                    )))
                }
            }
        }
        _ => legacy::view(&record),
    };
    serde_json::to_vec(&task).map_err(|e| McpError::internal(e.to_string()))
}

/// `tasks/result`: the task's result (or its error) once it ends. Until
/// then its input requests are asked of the session on this request's
/// stream, each naming the task, and the answers handed to the task. An ask
/// waits as long as the task does (its own input timeout ends it); one the
/// client cannot answer (an error, no stream) is not put again, and the
/// request waits for the task to end all the same.
async fn result(
    server: &Server,
    mut record: TaskRecord,
    scope: &Scope,
    session: &Session,
) -> Result<Vec<u8>, McpError> {
    let principal = scope.principal.as_deref();
    // The version of the record whose asks found no answer.
    let mut unanswered = None;
    loop {
        if let Some(ended) = legacy::result(&record) {
            let result = serde_json::to_vec(&ended?).map_err(|e| McpError::internal(e.to_string()))?;
            return Ok(crate::legacy::strip("tools/call", &result, &server.catalog()));
        }
        let asks = record.status == TaskStatus::InputRequired
            && !record.input_requests.is_empty()
            && unanswered != Some(record.version);
        match scope.outbound.as_ref().filter(|_| asks) {
            Some(outbound) => {
                let mut requests = record.input_requests.clone();
                for request in requests.values_mut() {
                    name_task(request, &record.id);
                }
                let ask = session.ask_within(&requests, outbound, None);
                tokio::pin!(ask);
                // The task may end, or stop waiting for these answers, while
                // the client thinks: then the asks are withdrawn and it is
                // read again. A change that leaves them (or a store's
                // spurious wake) leaves them put.
                let asked = loop {
                    tokio::select! {
                        asked = &mut ask => break Some(asked),
                        changed = until_changed(server, &record) => {
                            changed?;
                            let now = super::tasks::find(server, &record.id, principal).await?;
                            let same = now.status == TaskStatus::InputRequired && now.input_requests == record.input_requests;
                            record = now;
                            if !same {
                                break None;
                            }
                        }
                    }
                };
                if let Some(asked) = asked {
                    let answered = match asked {
                        Ok(answers) => super::tasks::answer(server, &record, &answers).await,
                        Err(e) => Err(e),
                    };
                    if let Err(e) = answered {
                        tracing::debug!(task = %record.id, "tasks/result: the task's input was not answered: {e}");
                        unanswered = Some(record.version);
                    }
                    record = super::tasks::find(server, &record.id, principal).await?;
                }
            }
            None => {
                until_changed(server, &record).await?;
                record = super::tasks::find(server, &record.id, principal).await?;
            }
        }
    }
}

/// Waits until `record` changes, or its time to live ends (a store need not
/// say when a record expires: then it is read as gone).
async fn until_changed(server: &Server, record: &TaskRecord) -> Result<(), McpError> {
    let store = &server.inner.tasks.store;
    let changed = store.changed(&record.id, record.version);
    match record
        .expires_ms()
        .map(|at| at.saturating_sub(crate::tasks::time::now_ms()))
    {
        // Past its time by this replica's clock (a shared store's may keep
        // it a moment longer): gone, not read again at once.
        Some(0) => Err(super::tasks::not_found(&record.id)),
        Some(left) => {
            if let Ok(waited) = tokio::time::timeout(std::time::Duration::from_millis(left), changed).await {
                waited.map_err(|e| e.to_client())?;
            }
            Ok(())
        }
        None => changed.await.map_err(|e| e.to_client()),
    }
}

/// Puts the task's id in an input request's `_meta`, as 2025-11-25 asks of
/// every request about a task.
fn name_task(request: &mut Value, id: &str) {
    let Some(request) = request.as_object_mut() else {
        return;
    };
    let params = request.entry("params").or_insert_with(|| json!({}));
    let Some(params) = params.as_object_mut() else {
        return;
    };
    let meta = params.entry("_meta").or_insert_with(|| json!({}));
    if let Some(meta) = meta.as_object_mut() {
        meta.insert(crate::protocol::META_RELATED_TASK.into(), json!({ "taskId": id }));
    }
}
