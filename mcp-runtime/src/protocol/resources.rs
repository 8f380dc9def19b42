//! Resources: listing, templates and reading (`resources/*`).

use super::{
    Annotations, CacheScope, Cursor, Icon, InputResponses, Meta, RequestMeta, ResourceContents, ResultMeta, ResultType,
};
use serde::{Deserialize, Serialize};

/// A resource the server can read (`$defs/Resource`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The resource's URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size in bytes of the raw content, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Icons a client may show.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Display hints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A family of resources addressed by an RFC 6570 URI template (`$defs/ResourceTemplate`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// The URI template.
    pub uri_template: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resources are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type of every matching resource, if they share one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Icons a client may show.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Display hints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `resources/read` (`$defs/ReadResourceRequestParams`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta")]
    pub meta: RequestMeta,
    /// The resource to read.
    pub uri: String,
    /// Answers to an earlier `input_required` result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// State echoed from an earlier `input_required` result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

/// The result of `resources/read` (`$defs/ReadResourceResult`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceResult {
    /// Always `complete` for this type.
    pub result_type: ResultType,
    /// The contents: one resource, or several (its sub-resources).
    pub contents: Vec<ResourceContents>,
    /// How long the result may be cached, in milliseconds.
    pub ttl_ms: u64,
    /// Who may cache it.
    pub cache_scope: CacheScope,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

/// The result of `resources/list` (`$defs/ListResourcesResult`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourcesResult {
    /// Always `complete`.
    pub result_type: ResultType,
    /// One page of resources.
    pub resources: Vec<Resource>,
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

/// The result of `resources/templates/list` (`$defs/ListResourceTemplatesResult`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourceTemplatesResult {
    /// Always `complete`.
    pub result_type: ResultType,
    /// One page of resource templates.
    pub resource_templates: Vec<ResourceTemplate>,
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
