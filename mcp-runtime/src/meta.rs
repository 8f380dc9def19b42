//! Per-request metadata and protocol versions (`basic/versioning`).
//!
//! A 2026-07-28 request carries everything the server needs in its own
//! `params._meta`: there is no handshake. This module reads and validates
//! that object, in the order the spec implies: missing fields (-32602) first,
//! then a transport's header facts disagreeing with it (-32020), then an
//! unsupported version (-32022).

use crate::error::McpError;
use crate::headers::HeaderFacts;
use crate::protocol::{
    ClientCapabilities, Implementation, LoggingLevel, ProgressToken, META_CLIENT_CAPABILITIES, META_CLIENT_INFO,
    META_LOG_LEVEL, META_PROTOCOL_VERSION,
};
use serde::Deserialize;
use serde_json::value::RawValue;

/// The protocol revisions served statelessly, newest first.
pub const SUPPORTED_VERSIONS: &[&str] = &["2026-07-28"];

/// The validated metadata of one request.
#[derive(Debug, Clone, Default)]
pub struct RequestMeta {
    /// The protocol revision the request speaks.
    pub protocol_version: String,
    /// The capabilities the client declared for this request.
    pub client_capabilities: ClientCapabilities,
    /// The client's self-description, if given.
    pub client_info: Option<Implementation>,
    /// The log level the client opted in to, if any.
    pub log_level: Option<LoggingLevel>,
    /// The progress token, if the client wants progress notifications.
    pub progress_token: Option<ProgressToken>,
}

#[derive(Deserialize)]
struct ParamsHead<'a> {
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct MetaHead<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow, default)]
    protocol_version: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", borrow, default)]
    client_capabilities: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo", borrow, default)]
    client_info: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/logLevel", borrow, default)]
    log_level: Option<&'a RawValue>,
    #[serde(rename = "progressToken", borrow, default)]
    progress_token: Option<&'a RawValue>,
}

fn field_error(key: &str, what: &str) -> McpError {
    McpError::invalid_params(format!("Invalid params: _meta[\"{key}\"] {what}"))
}

/// Reads and validates the `_meta` object of a request's params (`None`
/// when absent). `check_routing` compares the transport's header facts with
/// the body; it runs after the missing-field checks and before the version
/// check, as the spec orders them.
pub fn validate(
    meta: Option<&RawValue>,
    headers: &HeaderFacts,
    check_routing: impl FnOnce() -> Result<(), McpError>,
) -> Result<RequestMeta, McpError> {
    let meta = meta.ok_or_else(|| {
        McpError::invalid_params(
            "Invalid params: missing _meta (protocol version and client capabilities are required on every request)",
        )
    })?;
    let meta: MetaHead<'_> = serde_json::from_str(meta.get())
        .map_err(|_| McpError::invalid_params("Invalid params: _meta must be an object"))?;

    let version = match meta.protocol_version {
        None => return Err(field_error(META_PROTOCOL_VERSION, "is required")),
        Some(raw) => {
            crate::jsonrpc::raw_str(raw).ok_or_else(|| field_error(META_PROTOCOL_VERSION, "must be a string"))?
        }
    };
    let client_capabilities: ClientCapabilities = match meta.client_capabilities {
        None => return Err(field_error(META_CLIENT_CAPABILITIES, "is required")),
        Some(raw) if raw.get() == "{}" => ClientCapabilities::default(),
        Some(raw) if raw.get().starts_with('{') => serde_json::from_str(raw.get())
            .map_err(|e| field_error(META_CLIENT_CAPABILITIES, &format!("is malformed: {e}")))?,
        Some(_) => return Err(field_error(META_CLIENT_CAPABILITIES, "must be an object")),
    };
    if headers.is_http() {
        let header = headers.get(&crate::headers::PROTOCOL_VERSION);
        let header = header.as_deref().map(str::trim);
        if header != Some(version.as_ref()) {
            let header = header.unwrap_or("(missing)");
            return Err(McpError::header_mismatch(format!(
                "Header mismatch: MCP-Protocol-Version header {header:?} does not match _meta protocol version {version:?}"
            )));
        }
        check_routing()?;
    }
    if !SUPPORTED_VERSIONS.contains(&version.as_ref()) {
        return Err(McpError::unsupported_version(&version, SUPPORTED_VERSIONS));
    }
    let client_info = parse_opt(meta.client_info, META_CLIENT_INFO)?;
    let log_level = parse_opt(meta.log_level, META_LOG_LEVEL)?;
    let progress_token = parse_opt(meta.progress_token, "progressToken")?;
    Ok(RequestMeta {
        protocol_version: version.into_owned(),
        client_capabilities,
        client_info,
        log_level,
        progress_token,
    })
}

fn parse_opt<T: serde::de::DeserializeOwned>(raw: Option<&RawValue>, key: &str) -> Result<Option<T>, McpError> {
    match raw {
        None => Ok(None),
        Some(raw) if raw.get() == "null" => Ok(None),
        Some(raw) => serde_json::from_str(raw.get())
            .map(Some)
            .map_err(|e| field_error(key, &format!("is malformed: {e}"))),
    }
}

/// Whether a request's params carry a modern `_meta` protocol version (so
/// that it is served statelessly even inside a legacy session).
pub fn has_protocol_version(params: Option<&RawValue>) -> bool {
    let Some(params) = params else { return false };
    let Ok(head) = serde_json::from_str::<ParamsHead<'_>>(params.get()) else {
        return false;
    };
    meta_has_version(head.meta)
}

/// Whether a `_meta` object (as [`validate`] takes it) carries a protocol version.
pub fn meta_has_version(meta: Option<&RawValue>) -> bool {
    let Some(meta) = meta else { return false };
    serde_json::from_str::<MetaHead<'_>>(meta.get()).is_ok_and(|m| m.protocol_version.is_some())
}
