//! Sampling: a server asks the client's model for a message (`sampling/createMessage`).

use super::{AudioContent, ContentBlock, ImageContent, JsonObject, Meta, Role, TextContent, Tool};
use serde::{Deserialize, Serialize};

/// Params of a `sampling/createMessage` input request (`$defs/CreateMessageRequestParams`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageRequestParams {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// Which model the server would like; the client may ignore it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt; the client may modify or omit it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Context from MCP servers to attach (default `none`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(
        serialize_with = "super::notifications::number::option_f64",
        skip_serializing_if = "Option::is_none"
    )]
    pub temperature: Option<f64>,
    /// The most tokens to sample.
    pub max_tokens: u64,
    /// Sequences that stop sampling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata passed to the LLM provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tools the model may use (needs the client's `sampling.tools` capability).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model uses the tools (default `auto`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
}

/// Which servers' context to include in a sampling request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IncludeContext {
    /// No context.
    None,
    /// Context from the requesting server (deprecated).
    ThisServer,
    /// Context from every connected server (deprecated).
    AllServers,
}

/// How the model uses tools during sampling (`$defs/ToolChoice`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolChoice {
    /// The mode (default `auto`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
}

/// A tool-choice mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoiceMode {
    /// The model decides.
    Auto,
    /// The model must use at least one tool.
    Required,
    /// The model must not use tools.
    None,
}

/// A message in a sampling conversation (`$defs/SamplingMessage`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// One content block or several.
    pub content: SamplingContent,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The `content` of a sampling message or result: one block, or an array of blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SamplingContent {
    /// A single block.
    One(SamplingMessageContentBlock),
    /// Several blocks.
    Many(Vec<SamplingMessageContentBlock>),
}

/// One block of sampling content (`$defs/SamplingMessageContentBlock`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SamplingMessageContentBlock {
    /// Plain text.
    Text(TextContent),
    /// A base64-encoded image.
    Image(ImageContent),
    /// Base64-encoded audio.
    Audio(AudioContent),
    /// The model calls a tool.
    ToolUse(ToolUseContent),
    /// The result of a tool call.
    ToolResult(ToolResultContent),
}

/// A tool call made by the model (`$defs/ToolUseContent`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUseContent {
    /// Id of this call, matched by the [`ToolResultContent`].
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments.
    pub input: JsonObject,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The result of a tool call, sent back to the model (`$defs/ToolResultContent`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultContent {
    /// The `id` of the [`ToolUseContent`] this answers.
    pub tool_use_id: String,
    /// Unstructured result content.
    pub content: Vec<ContentBlock>,
    /// Structured result content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<serde_json::Value>,
    /// The call ended in a tool error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The client's answer to `sampling/createMessage` (`$defs/CreateMessageResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Who wrote it (normally `assistant`).
    pub role: Role,
    /// One content block or several.
    pub content: SamplingContent,
    /// The model that generated it.
    pub model: String,
    /// Why sampling stopped: `endTurn`, `stopSequence`, `maxTokens`, `toolUse`, or another reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The server's model preferences for sampling (`$defs/ModelPreferences`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Model name hints, in order of preference.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much cost matters, from 0 to 1.
    #[serde(
        serialize_with = "super::notifications::number::option_f64",
        skip_serializing_if = "Option::is_none"
    )]
    pub cost_priority: Option<f64>,
    /// How much speed matters, from 0 to 1.
    #[serde(
        serialize_with = "super::notifications::number::option_f64",
        skip_serializing_if = "Option::is_none"
    )]
    pub speed_priority: Option<f64>,
    /// How much capability matters, from 0 to 1.
    #[serde(
        serialize_with = "super::notifications::number::option_f64",
        skip_serializing_if = "Option::is_none"
    )]
    pub intelligence_priority: Option<f64>,
}

/// A hint for model selection (`$defs/ModelHint`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelHint {
    /// A full or partial model name, such as `claude-3-5-sonnet` or `sonnet`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}
