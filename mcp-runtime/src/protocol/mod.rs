//! Wire types of MCP 2026-07-28: plain serde data, no behaviour.
//!
//! Every type mirrors one definition of the official JSON Schema
//! (`schema.json`, `$defs/<Name>`), with the same field names on the wire.
//! Optional fields are skipped when absent, so a value serializes to exactly
//! the JSON it was parsed from. These types are the bottom layer of the crate:
//! they import nothing from the rest of it.

mod apps;
mod capabilities;
mod completion;
mod content;
mod discover;
mod elicitation;
mod logging;
mod mrtr;
mod notifications;
mod prompts;
mod resources;
mod roots;
mod sampling;
mod skills;
mod subscriptions;
mod tasks;
mod tools;

pub use apps::*;
pub use capabilities::*;
pub use completion::*;
pub use content::*;
pub use discover::*;
pub use elicitation::*;
pub use logging::*;
pub use mrtr::*;
pub use notifications::*;
pub use prompts::*;
pub use resources::*;
pub use roots::*;
pub use sampling::*;
pub use skills::*;
pub use subscriptions::*;
pub use tasks::*;
pub use tools::*;

use serde::{Deserialize, Serialize};

/// A `_meta` object: free-form metadata keyed by (optionally prefixed) names.
pub type Meta = serde_json::Map<String, serde_json::Value>;

/// A JSON object (`$defs/JSONObject`).
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

/// An opaque pagination cursor (`$defs/Cursor`).
pub type Cursor = String;

/// 2^53: every integer within it either side is a double of its own, so a
/// JSON number read as `f64` there is the integer written.
pub(crate) const EXACT_INTEGER: i64 = 1 << 53;

/// The protocol revision this crate implements natively.
pub const LATEST_PROTOCOL_VERSION: &str = "2026-07-28";

/// `_meta` key of the protocol version a request speaks.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the capabilities a client declares for one request.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the client's self-description.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the log level a request opts in to.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of the server's self-description on every result.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key tagging notifications of a `subscriptions/listen` stream.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// How a client should read a result (`$defs/ResultType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultType {
    /// The request is answered.
    #[default]
    Complete,
    /// The server needs more input first (MRTR).
    InputRequired,
    /// The request became a task (tasks extension).
    Task,
}

/// Who may cache a cacheable result (`cacheScope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Holds no user-specific data: any cache may share it.
    #[default]
    Public,
    /// Reusable only within the same authorization context.
    Private,
}

/// Names and describes an MCP implementation (`$defs/Implementation`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Human-readable display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the implementation does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons a client may show.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Home page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

/// An icon a client may display (`$defs/Icon`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// URI of the image (`https:` or `data:`).
    pub src: String,
    /// MIME type of the image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes, such as `"48x48"` or `"any"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The theme the icon is designed for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
}

/// The UI theme an icon suits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IconTheme {
    /// For light backgrounds.
    Light,
    /// For dark backgrounds.
    Dark,
}

/// The sender or recipient of a message (`$defs/Role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human side.
    User,
    /// The model side.
    Assistant,
}

/// A JSON-RPC request id (`$defs/RequestId`): a string or an integer, never null.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(String),
}

// Written by hand rather than `#[serde(untagged)]`, which buffers the value
// before trying each variant: ids are read on every message.
impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = RequestId;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<RequestId, E> {
                Ok(RequestId::Number(n))
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<RequestId, E> {
                i64::try_from(n)
                    .map(RequestId::Number)
                    .map_err(|_| E::custom("integer id out of range"))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<RequestId, E> {
                Ok(RequestId::String(s.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<RequestId, E> {
                Ok(RequestId::String(s))
            }
        }
        d.deserialize_any(Visitor)
    }
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

/// A progress token (`$defs/ProgressToken`): a string or an integer.
pub type ProgressToken = RequestId;

/// The per-request metadata every 2026-07-28 request carries (`$defs/RequestMetaObject`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RequestMeta {
    /// The protocol revision of this request.
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    pub protocol_version: String,
    /// What the client can do for this request.
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    pub client_capabilities: ClientCapabilities,
    /// Who the client says it is.
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        skip_serializing_if = "Option::is_none"
    )]
    pub client_info: Option<Implementation>,
    /// The log level the client opts in to for this request.
    #[serde(rename = "io.modelcontextprotocol/logLevel", skip_serializing_if = "Option::is_none")]
    pub log_level: Option<LoggingLevel>,
    /// Token for progress notifications about this request.
    #[serde(rename = "progressToken", skip_serializing_if = "Option::is_none")]
    pub progress_token: Option<ProgressToken>,
}

/// The `_meta` of a result (`$defs/ResultMetaObject`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ResultMeta {
    /// The server's self-description.
    #[serde(
        rename = "io.modelcontextprotocol/serverInfo",
        skip_serializing_if = "Option::is_none"
    )]
    pub server_info: Option<Implementation>,
    /// Any other metadata.
    #[serde(flatten)]
    pub other: Meta,
}

/// Params of a paginated list request (`$defs/PaginatedRequestParams`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PaginatedRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta")]
    pub meta: RequestMeta,
    /// Where the previous page ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
}

/// A result with nothing in it but `resultType` and `_meta` (`$defs/EmptyResult`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmptyResult {
    /// Always `complete`.
    pub result_type: ResultType,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}
