//! Argument completion (`completion/complete`).

use super::{RequestMeta, ResultMeta, ResultType};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Params of `completion/complete` (`$defs/CompleteRequestParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompleteRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta")]
    pub meta: RequestMeta,
    /// The prompt or resource template whose argument is completed.
    pub r#ref: CompletionReference,
    /// The argument being completed.
    pub argument: CompleteArgument,
    /// Values of arguments already filled in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<CompleteContext>,
}

/// What a completion is for, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum CompletionReference {
    /// A prompt's argument (`ref/prompt`).
    #[serde(rename = "ref/prompt")]
    Prompt(PromptReference),
    /// A resource template's variable (`ref/resource`).
    #[serde(rename = "ref/resource")]
    ResourceTemplate(ResourceTemplateReference),
}

/// Identifies a prompt (`$defs/PromptReference`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PromptReference {
    /// The prompt's name.
    pub name: String,
    /// Display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// Identifies a resource template (`$defs/ResourceTemplateReference`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ResourceTemplateReference {
    /// The URI template.
    pub uri: String,
}

/// The argument being completed and its partial value.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CompleteArgument {
    /// The argument's name.
    pub name: String,
    /// What the user has typed so far.
    pub value: String,
}

/// Context for a completion: arguments already resolved.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CompleteContext {
    /// Already-resolved argument values, by name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

/// The result of `completion/complete` (`$defs/CompleteResult`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteResult {
    /// Always `complete`.
    pub result_type: ResultType,
    /// The suggestions.
    pub completion: Completion,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

/// Completion suggestions (`CompleteResult.completion`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// Suggested values, at most 100.
    pub values: Vec<String>,
    /// How many suggestions exist in all, which may exceed `values.len()`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more suggestions exist than were returned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}
