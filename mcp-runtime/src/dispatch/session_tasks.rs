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
use serde_json::{json, Map, Value};
use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

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
/// then each of its input requests is asked of the session on this
/// request's stream, once, naming the task, and its answer handed to the
/// task as it comes. An ask waits as long as the task waits for it (its own
/// input timeout ends that), and is withdrawn when the task no longer does;
/// one the client answers with an error is not put again. When the client
/// can no longer be asked (its input ended) while the task waits for input,
/// the request ends.
async fn result(
    server: &Server,
    mut record: TaskRecord,
    scope: &Scope,
    session: &Session,
) -> Result<Vec<u8>, McpError> {
    let principal = scope.principal.as_deref();
    // The asks waiting for the client, each with its key.
    let mut asking: Asking<'_> = Vec::new();
    // The keys put to the client by this request.
    let mut put: HashSet<String> = HashSet::new();
    loop {
        if let Some(ended) = legacy::result(&record) {
            let result = serde_json::to_vec(&ended?).map_err(|e| McpError::internal(e.to_string()))?;
            return Ok(crate::legacy::strip("tools/call", &result, &server.catalog()));
        }
        let waiting = record.status == TaskStatus::InputRequired;
        asking.retain(|(key, _)| waiting && record.input_requests.contains_key(key));
        if waiting && !session.can_ask() {
            return Err(McpError::internal(
                "the client can no longer answer (its input ended, or its session)",
            ));
        }
        if let Some(outbound) = scope.outbound.as_ref().filter(|_| waiting) {
            for (key, request) in &record.input_requests {
                if !put.insert(key.clone()) {
                    continue;
                }
                let mut request = request.clone();
                name_task(&mut request, &record.id);
                let requests: Map<String, Value> = [(key.clone(), request)].into_iter().collect();
                let ask = async move { session.ask_within(&requests, outbound, None).await };
                asking.push((key.clone(), Box::pin(ask)));
            }
        }
        tokio::select! {
            (key, asked) = next_answer(&mut asking), if !asking.is_empty() => {
                let answered = match asked {
                    Ok(answers) => super::tasks::answer(server, &record, &answers).await.map(drop),
                    Err(e) if !session.can_ask() => return Err(e),
                    Err(e) => Err(e),
                };
                if let Err(e) = answered {
                    tracing::debug!(task = %record.id, key, "tasks/result: an input request was not answered: {e}");
                }
            }
            changed = until_changed(server, &record) => changed?,
        }
        record = super::tasks::find(server, &record.id, principal).await?;
    }
}

/// The asks a `tasks/result` waits on, each with its key.
type Asking<'a> = Vec<(
    String,
    Pin<Box<dyn Future<Output = Result<Map<String, Value>, McpError>> + Send + 'a>>,
)>;

/// The first ask of `asking` answered (taken out of it), with its key.
fn next_answer<'a, 'b>(
    asking: &'a mut Asking<'b>,
) -> impl Future<Output = (String, Result<Map<String, Value>, McpError>)> + use<'a, 'b> {
    std::future::poll_fn(move |cx| {
        for at in 0..asking.len() {
            if let Some((_, ask)) = asking.get_mut(at) {
                if let Poll::Ready(answered) = ask.as_mut().poll(cx) {
                    let (key, _) = asking.swap_remove(at);
                    return Poll::Ready((key, answered));
                }
            }
        }
        Poll::Pending
    })
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
