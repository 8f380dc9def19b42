//! Prompts: templates listed with `prompts/list` and rendered with `prompts/get`.

use super::{CacheScope, ContentBlock, Cursor, Icon, InputResponses, Meta, RequestMeta, ResultMeta, ResultType, Role};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A prompt template the server offers (`$defs/Prompt`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the prompt provides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Arguments for templating the prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<PromptArgument>>,
    /// Icons a client may show.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// An argument a prompt accepts (`$defs/PromptArgument`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgument {
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the argument is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the argument must be given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

/// One message of a rendered prompt (`$defs/PromptMessage`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: ContentBlock,
}

/// Params of `prompts/get` (`$defs/GetPromptRequestParams`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta")]
    pub meta: RequestMeta,
    /// The prompt to render.
    pub name: String,
    /// Template arguments, all strings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
    /// Answers to an earlier `input_required` result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// State echoed from an earlier `input_required` result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

/// The result of `prompts/get` (`$defs/GetPromptResult`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptResult {
    /// Always `complete` for this type.
    pub result_type: ResultType,
    /// A description of the rendered prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The rendered messages.
    pub messages: Vec<PromptMessage>,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

/// The result of `prompts/list` (`$defs/ListPromptsResult`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPromptsResult {
    /// Always `complete`.
    pub result_type: ResultType,
    /// One page of prompts.
    pub prompts: Vec<Prompt>,
    /// Where the next page starts, if there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// How long the result may be cached, in milliseconds.
    pub ttl_ms: u64,
    /// Who may cache it.
    pub cache_scope: CacheScope,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}
