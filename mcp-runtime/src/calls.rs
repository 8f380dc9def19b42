//! Typed calls on any MCP connection: list every page, call a tool through
//! its `input_required` rounds and its task, read, get, complete. The
//! [`client`](crate::client) and the in-process test client share them;
//! each says how one request goes and how the server's asks are answered.

use crate::error::{ErrorCode, McpError};
use crate::protocol::{CallToolResult, GetPromptResult, Prompt, ReadResourceResult, Resource, ResourceTemplate, Tool};
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};
use std::future::Future;

/// The most `input_required` rounds a call follows.
const MAX_ROUNDS: u32 = crate::mrtr::MAX_ROUNDS;

/// Typed calls on a connection that can send a request and answer the
/// server's asks. Implemented by [`Client`](crate::client::Client) (the
/// `client` feature) and [`TestClient`](crate::testing::TestClient).
pub trait Calls: Sync {
    /// One request; its result, or the server's error.
    fn send(&self, method: &str, params: Value) -> impl Future<Output = Result<Value, McpError>> + Send;

    /// Answers an `inputRequests` map (the asks of an `input_required`
    /// result or task): the `inputResponses` to send back.
    fn answer(&self, asks: &Value) -> impl Future<Output = Result<Map<String, Value>, McpError>> + Send;

    /// A request whose result may be `input_required`: answered and sent
    /// again until complete.
    fn with_rounds(&self, method: &str, params: Value) -> impl Future<Output = Result<Value, McpError>> + Send {
        let method = method.to_owned();
        async move {
            let mut params = params;
            for _ in 0..=MAX_ROUNDS {
                let result = self.send(&method, params.clone()).await?;
                if result["resultType"] != "input_required" {
                    return Ok(result);
                }
                params["inputResponses"] = Value::Object(self.answer(&result["inputRequests"]).await?);
                match result.get("requestState") {
                    Some(state) => params["requestState"] = state.clone(),
                    None => drop(params.as_object_mut().map(|p| p.remove("requestState"))),
                }
            }
            Err(McpError::internal(format!("{method}: more input rounds than allowed")))
        }
    }

    /// Calls a tool: answers its asks, follows its task to the end, and
    /// returns its result.
    fn call_tool(&self, name: &str, arguments: Value) -> impl Future<Output = Result<CallToolResult, McpError>> + Send {
        let params = json!({"name": name, "arguments": arguments});
        async move {
            let result = self.with_rounds("tools/call", params).await?;
            let result = if result["resultType"] == "task" {
                let id = result["taskId"].as_str().unwrap_or_default().to_owned();
                self.follow(&id).await?
            } else {
                result
            };
            parse(result)
        }
    }

    /// Polls a task until it ends, answering its asks; its result. Polls
    /// come no more often than the task's `pollIntervalMs` asks (from 5 ms,
    /// doubling, when it says nothing), a poll refused for its rate is
    /// retried after the wait it names, and each ask is answered once
    /// (a record that still shows it after the answer is not asked again).
    fn follow(&self, task_id: &str) -> impl Future<Output = Result<Value, McpError>> + Send {
        let task_id = task_id.to_owned();
        async move {
            let mut wait = MIN_POLL_INTERVAL;
            let mut answered: Vec<String> = Vec::new();
            let mut refused: u32 = 0;
            loop {
                let mut task = match self.send("tasks/get", json!({"taskId": task_id})).await {
                    Ok(task) => task,
                    Err(e) => match e.retry_after() {
                        Some(later) if refused < MAX_POLLS_REFUSED => {
                            refused += 1;
                            tokio::time::sleep(later.clamp(MIN_POLL_INTERVAL, MAX_POLL_INTERVAL)).await;
                            continue;
                        }
                        _ => return Err(e),
                    },
                };
                refused = 0;
                if task["status"] != "input_required" {
                    // A task that asks again later may reuse a key.
                    answered.clear();
                }
                match task["status"].as_str().unwrap_or_default() {
                    "completed" => return Ok(task.get_mut("result").map(Value::take).unwrap_or_default()),
                    "failed" => return Err(error_of(&task["error"])),
                    "cancelled" => return Err(McpError::internal(format!("task {task_id} was cancelled"))),
                    "input_required" if unanswered(&task["inputRequests"], &answered).is_some() => {
                        let asks = unanswered(&task["inputRequests"], &answered).unwrap_or_default();
                        let answers = self.answer(&Value::Object(asks)).await?;
                        answered.extend(answers.keys().cloned());
                        let params = json!({"taskId": task_id, "inputResponses": answers});
                        self.send("tasks/update", params).await?;
                    }
                    _ => {
                        let asked = task
                            .get("pollIntervalMs")
                            .or_else(|| task.get("pollInterval"))
                            .and_then(Value::as_u64)
                            .map(std::time::Duration::from_millis);
                        match asked {
                            Some(interval) => {
                                tokio::time::sleep(interval.clamp(MIN_POLL_INTERVAL, MAX_POLL_INTERVAL)).await
                            }
                            None => {
                                // From 5 ms, doubling to a quarter of a second.
                                tokio::time::sleep(wait).await;
                                wait = (wait * 2).min(std::time::Duration::from_millis(250));
                            }
                        }
                    }
                }
            }
        }
    }

    /// Reads a resource, answering its asks.
    fn read_resource(&self, uri: &str) -> impl Future<Output = Result<ReadResourceResult, McpError>> + Send {
        let params = json!({"uri": uri});
        async move { parse(self.with_rounds("resources/read", params).await?) }
    }

    /// Gets a prompt with its arguments, answering its asks.
    fn get_prompt(
        &self,
        name: &str,
        arguments: Value,
    ) -> impl Future<Output = Result<GetPromptResult, McpError>> + Send {
        let params = json!({"name": name, "arguments": arguments});
        async move { parse(self.with_rounds("prompts/get", params).await?) }
    }

    /// Completion values for an argument: `reference` is `{"type": "ref/prompt", "name": ..}`
    /// or `{"type": "ref/resource", "uri": ..}`.
    fn complete(
        &self,
        reference: Value,
        argument: &str,
        value: &str,
    ) -> impl Future<Output = Result<Vec<String>, McpError>> + Send {
        let params = json!({"ref": reference, "argument": {"name": argument, "value": value}});
        async move {
            let result = self.send("completion/complete", params).await?;
            parse(result["completion"]["values"].clone())
        }
    }

    /// Every tool, all pages.
    fn list_tools(&self) -> impl Future<Output = Result<Vec<Tool>, McpError>> + Send {
        list(self, "tools/list", "tools")
    }

    /// Every static resource, all pages.
    fn list_resources(&self) -> impl Future<Output = Result<Vec<Resource>, McpError>> + Send {
        list(self, "resources/list", "resources")
    }

    /// Every resource template, all pages.
    fn list_resource_templates(&self) -> impl Future<Output = Result<Vec<ResourceTemplate>, McpError>> + Send {
        list(self, "resources/templates/list", "resourceTemplates")
    }

    /// Every prompt, all pages.
    fn list_prompts(&self) -> impl Future<Output = Result<Vec<Prompt>, McpError>> + Send {
        list(self, "prompts/list", "prompts")
    }
}

/// Every page of a list.
pub(crate) async fn list<C: Calls + ?Sized, T: DeserializeOwned>(
    calls: &C,
    method: &str,
    field: &str,
) -> Result<Vec<T>, McpError> {
    let mut items = Vec::new();
    let mut cursor: Option<Value> = None;
    // A server whose cursors never end is cut off rather than followed forever.
    for _ in 0..10_000 {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let mut page = calls.send(method, params).await?;
        items.extend(parse::<Vec<T>>(
            page.get_mut(field).map(Value::take).unwrap_or_default(),
        )?);
        match page.get("nextCursor") {
            Some(next) if !next.is_null() => cursor = Some(next.clone()),
            _ => return Ok(items),
        }
    }
    Err(McpError::internal(format!("{method}: more than 10000 pages")))
}

/// The longest a task's `pollIntervalMs` (or a refused poll's wait) makes
/// [`Calls::follow`] wait between polls.
const MAX_POLL_INTERVAL: std::time::Duration = std::time::Duration::from_secs(30);

/// The shortest: a server that says 0 is not polled in a busy loop.
const MIN_POLL_INTERVAL: std::time::Duration = std::time::Duration::from_millis(5);

/// Polls refused one after the other for their rate before
/// [`Calls::follow`] gives up with the refusal.
const MAX_POLLS_REFUSED: u32 = 20;

/// The asks of `requests` not yet answered; `None` when there is none.
fn unanswered(requests: &Value, answered: &[String]) -> Option<Map<String, Value>> {
    let asks: Map<String, Value> = requests
        .as_object()?
        .iter()
        .filter(|(key, _)| !answered.contains(key))
        .map(|(key, ask)| (key.clone(), ask.clone()))
        .collect();
    (!asks.is_empty()).then_some(asks)
}

/// A JSON-RPC error object as an [`McpError`]: its code, message and data.
pub(crate) fn error_of(error: &Value) -> McpError {
    let code = error["code"]
        .as_i64()
        .and_then(|c| i32::try_from(c).ok())
        .unwrap_or(-32603);
    let message = error["message"].as_str().unwrap_or_default().to_owned();
    let e = McpError::new(ErrorCode(code), message);
    match error.get("data") {
        Some(data) => e.with_data(data.clone()),
        None => e,
    }
}

/// A server's answer to a request, as [`error_of`]; a refusal whose
/// `data.retryAfterMs` says when to retry (a rate limit) is answered over
/// HTTP as a 429 with `Retry-After`, as the server answered it (not a
/// stored error, such as a failed task's, which says how it ended).
#[cfg(feature = "client")]
pub(crate) fn refusal_of(error: &Value) -> McpError {
    let e = error_of(error);
    match error["data"].get("retryAfterMs").and_then(Value::as_u64) {
        Some(ms) => e.retrying_after(std::time::Duration::from_millis(ms)),
        None => e,
    }
}

/// Reads a result as `T`.
pub(crate) fn parse<T: DeserializeOwned>(value: Value) -> Result<T, McpError> {
    serde_json::from_value(value).map_err(|e| McpError::internal(format!("the server's answer does not read: {e}")))
}
