//! Roots: the directories and files a client exposes to a server (`roots/list`).

use super::Meta;
use serde::{Deserialize, Serialize};

/// A root directory or file the server may operate on (`$defs/Root`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Root {
    /// The root's URI (`file://` in this revision).
    pub uri: String,
    /// A display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of a `roots/list` input request (`$defs/ListRootsRequest`, `params`); optional on the wire.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ListRootsRequestParams {
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The client's answer to `roots/list` (`$defs/ListRootsResult`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
}
