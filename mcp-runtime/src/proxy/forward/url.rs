//! A 2025-11-25 upstream's "URL elicitation required" error (-32042),
//! which 2026-07-28 does not have: to a 2026-07-28 caller, a round asking
//! each URL elicitation (in a call that runs as the caller's task, asks of
//! the task); once the caller accepted them all, the call is made again.

use super::{check_capabilities, Resume};
use crate::error::McpError;
use crate::mrtr::{Flow, Halt, Input, InputRequired};
use crate::protocol::ClientCapability;
use serde_json::{json, Map, Value};

/// A 2025-11-25 server's "URL elicitation required" error.
pub(super) const URL_ELICITATION_REQUIRED: crate::error::ErrorCode = crate::error::ErrorCode(-32042);

/// A 2025-11-25 upstream's -32042 to a 2026-07-28 caller: a round asking
/// each of the error's URL elicitations (`elicitation/create` in URL mode,
/// under `url-<elicitationId>`). Without a URL elicitation in it, the error
/// as it is.
pub(super) fn url_round(e: McpError, input: &Input) -> Flow<Value> {
    let requests = url_elicitations(&e);
    if requests.is_empty() {
        return Err(Halt::Protocol(e));
    }
    check_capabilities(requests.values(), input.capabilities())?;
    input.save(&Resume {
        url: requests.keys().cloned().collect(),
        ..Resume::default()
    })?;
    Err(Halt::Ask(InputRequired {
        input_requests: requests,
        request_state: None,
    }))
}

/// The URL elicitations of a -32042 as `elicitation/create` requests, by
/// key (`url-<elicitationId>`).
fn url_elicitations(e: &McpError) -> Map<String, Value> {
    let mut requests = Map::new();
    let elicitations = e.data().and_then(|d| d.get("elicitations")).and_then(Value::as_array);
    for (i, elicitation) in elicitations.into_iter().flatten().enumerate() {
        if elicitation["mode"] != "url" || !elicitation["url"].is_string() {
            continue;
        }
        let key = match elicitation["elicitationId"].as_str() {
            Some(id) => format!("url-{id}"),
            None => format!("url-{i}"),
        };
        requests.insert(key, json!({"method": "elicitation/create", "params": elicitation}));
    }
    requests
}

/// A 2025-11-25 upstream's -32042 in a call that runs as the caller's
/// task: each URL elicitation is asked through the task (the caller
/// answers with `tasks/update`); `Ok` when every one was accepted, and the
/// call is then made again. Without a URL elicitation in it, the error as
/// it is.
pub(super) async fn url_in_task(e: McpError, task: &crate::tasks::Task, upstream: &str) -> Result<(), Halt> {
    let requests = url_elicitations(&e);
    if requests.is_empty() {
        return Err(Halt::Protocol(e));
    }
    for (key, request) in requests {
        let answer = task
            .ask_value(&key, ClientCapability::ElicitationUrl, request)
            .await
            .map_err(|e| Halt::Protocol(McpError::from(e)))?;
        if answer["action"] != "accept" {
            return Err(not_accepted(upstream, &key));
        }
    }
    Ok(())
}

/// After a [`url_round`]: `Ok` when the caller accepted every URL
/// elicitation asked, else the error that ends the call.
pub(super) fn url_accepted(keys: &[String], input: &Input, upstream: &str) -> Result<(), Halt> {
    let declined = keys
        .iter()
        .find(|k| input.answers().get(k.as_str()).and_then(|a| a["action"].as_str()) != Some("accept"));
    match declined {
        None => Ok(()),
        Some(key) => Err(not_accepted(upstream, key)),
    }
}

/// The error that ends a call whose URL elicitation `key` was not accepted.
fn not_accepted(upstream: &str, key: &str) -> Halt {
    Halt::Protocol(
        McpError::internal(format!(
            "upstream `{upstream}` needs the user to open a URL first ({key}), which was not accepted"
        ))
        .with_data(json!({"upstream": upstream})),
    )
}
