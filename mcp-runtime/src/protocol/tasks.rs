//! The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663): a
//! `tools/call` answered with a task handle that the client polls.
//! Definitions from the extension's own schema (`schema/draft/schema.json`).

use super::{JsonObject, Meta};
use serde::{Deserialize, Serialize};

/// The extension's identifier, in `capabilities.extensions` of both sides.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// 2025-11-25: the `_meta` key that ties a message to the task it is about
/// (`{"taskId": ..}`), on a task's requests to the client and on the result
/// of `tasks/result`.
pub const META_RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// Where a task is (`$defs/TaskStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The request is being processed.
    Working,
    /// The server waits for the client's answers to `inputRequests`.
    InputRequired,
    /// Done: `result` holds what the request returned (an `isError` tool result included).
    Completed,
    /// A JSON-RPC error ended it: `error` holds it.
    Failed,
    /// Cancelled before it completed.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task can change no more.
    pub fn is_terminal(self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
    }

    /// The status as the wire spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}

/// A task with the payload its status carries (`$defs/DetailedTask`): the
/// body of `tasks/get`, of `notifications/tasks`, and (without payload) of
/// `CreateTaskResult`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DetailedTask {
    /// The task's identifier.
    pub task_id: String,
    /// Its status.
    pub status: TaskStatus,
    /// What it is doing, for people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601 creation time.
    pub created_at: String,
    /// ISO 8601 time of the last change.
    pub last_updated_at: String,
    /// Milliseconds from creation the task is kept; `null` for unlimited.
    pub ttl_ms: Option<u64>,
    /// Suggested milliseconds between polls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// `input_required`: the outstanding requests, keyed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<JsonObject>,
    /// `completed`: what the request returned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<JsonObject>,
    /// `failed`: the JSON-RPC error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<JsonObject>,
}

/// Params of `tasks/get` and `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task.
    pub task_id: String,
    /// Request metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `tasks/update`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTaskParams {
    /// The task.
    pub task_id: String,
    /// Answers to outstanding `inputRequests`, by key.
    pub input_responses: JsonObject,
    /// Request metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}
