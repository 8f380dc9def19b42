//! The one error type of the protocol layer: a JSON-RPC error that knows its
//! code, its message, its optional `data`, and the HTTP status it maps to.

use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;
use std::time::Duration;

/// A JSON-RPC / MCP error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// Invalid JSON was received (-32700).
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// The message is not a valid request (-32600).
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// The method does not exist or is not available (-32601).
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// Invalid method parameters (-32602).
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// Internal error (-32603).
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// An HTTP header disagrees with the body, or is missing or malformed (-32020).
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// The request needs a client capability the client did not declare (-32021).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// The request's protocol version is not supported (-32022).
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
    /// No resource has the URI (-32002), in revisions up to 2025-11-25;
    /// 2026-07-28 answers -32602 with `data.uri` instead.
    pub(crate) const LEGACY_RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
}

/// A protocol-level error: becomes a JSON-RPC error response.
///
/// Tool failures are *not* protocol errors: a tool reports them in its result
/// with `isError: true` (return `Result<T, E>` from the tool). Use `McpError`
/// for what the spec calls protocol errors: unknown names, malformed params,
/// missing capabilities.
///
/// ```
/// use mcp_runtime::McpError;
/// let e = McpError::invalid_params("unknown tool: frobnicate");
/// assert_eq!(e.code().0, -32602);
/// assert_eq!(e.http_status(), 400);
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message} ({code})", code = .code.0)]
pub struct McpError {
    code: ErrorCode,
    message: Cow<'static, str>,
    data: Option<Box<Value>>,
    /// 403 for a token without the scopes asked for, 429 for a caller over
    /// a limit; else by the code.
    status: Status,
}

/// The HTTP status of an error that is not decided by its code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    ByCode,
    Forbidden,
    /// Over a limit: retry after this many milliseconds.
    TooMany(u64),
    /// By the code; an unknown resource, which a legacy session is told
    /// with its own code ([`McpError::for_legacy`]).
    ResourceNotFound,
}

impl McpError {
    /// An error with any code and message.
    pub fn new(code: ErrorCode, message: impl Into<Cow<'static, str>>) -> Self {
        McpError {
            code,
            message: message.into(),
            data: None,
            status: Status::ByCode,
        }
    }

    /// Attaches `data` to the error.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(Box::new(data));
        self
    }

    /// -32700: the bytes were not JSON.
    pub fn parse_error(detail: impl std::fmt::Display) -> Self {
        Self::new(ErrorCode::PARSE_ERROR, format!("Parse error: {detail}"))
    }

    /// -32600: JSON, but not a valid JSON-RPC request.
    pub fn invalid_request(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::INVALID_REQUEST, message)
    }

    /// -32600 for a request whose id a request still in flight has (ids are
    /// unique among those; a cancellation naming it could not tell them apart).
    pub(crate) fn id_in_flight(id: impl std::fmt::Display) -> Self {
        Self::invalid_request(format!("Invalid request: a request with id {id} is still in flight"))
    }

    /// -32601: the method is unknown, removed, or not offered by this server.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(ErrorCode::METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }

    /// -32602: the params are invalid.
    pub fn invalid_params(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// -32603: something failed inside the server.
    pub fn internal(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::INTERNAL_ERROR, message)
    }

    /// -32020: an HTTP header is missing, malformed or disagrees with the body.
    pub fn header_mismatch(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::HEADER_MISMATCH, message)
    }

    /// -32021: the request needs client capabilities it did not declare.
    /// `required` is a `ClientCapabilities` object naming them.
    pub fn missing_capability(required: Value) -> Self {
        let names = required
            .as_object()
            .map(|m| m.keys().cloned().collect::<Vec<_>>().join(", "))
            .unwrap_or_default();
        Self::new(
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            format!("Missing required client capability: {names}"),
        )
        .with_data(serde_json::json!({ "requiredCapabilities": required }))
    }

    /// -32022: the request's protocol version is not one the server speaks.
    pub fn unsupported_version(requested: &str, supported: &[&str]) -> Self {
        Self::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            format!("Unsupported protocol version: {requested}"),
        )
        .with_data(serde_json::json!({ "requested": requested, "supported": supported }))
    }

    /// -32602 with `data.uri`: no resource has this URI.
    pub fn resource_not_found(uri: &str) -> Self {
        let mut e =
            Self::invalid_params(format!("Resource not found: {uri}")).with_data(serde_json::json!({ "uri": uri }));
        e.status = Status::ResourceNotFound;
        e
    }

    /// The error marked as [`resource_not_found`](McpError::resource_not_found)'s:
    /// for a template's value that names no resource, and an upstream's
    /// answer of a resource it does not have.
    pub(crate) fn marked_resource_not_found(mut self) -> Self {
        self.status = Status::ResourceNotFound;
        self
    }

    /// The error as a legacy (2025-11-25 and earlier) session is told it:
    /// an unknown resource is -32002 there, with the same `data.uri`.
    pub(crate) fn for_legacy(mut self) -> Self {
        if self.status == Status::ResourceNotFound {
            self.code = ErrorCode::LEGACY_RESOURCE_NOT_FOUND;
        }
        self
    }

    /// The caller's access token lacks `scopes` (HTTP 403 with a
    /// `WWW-Authenticate` `insufficient_scope` challenge naming them; the
    /// JSON-RPC error is -32600 with `data.requiredScopes`).
    pub fn insufficient_scope(scopes: &[&str]) -> Self {
        let mut e = Self::invalid_request(format!("Forbidden: this needs the scope {}", scopes.join(" ")))
            .with_data(serde_json::json!({ "requiredScopes": scopes }));
        e.status = Status::Forbidden;
        e
    }

    /// -32603 (the spec's code for a condition that keeps the server from
    /// serving a request; MCP defines no code of its own for this) with
    /// `data.retryAfterMs`: the caller is over a rate or concurrency limit
    /// and may retry after `wait`. Over HTTP the status is 429 with a
    /// `Retry-After` header (whole seconds, rounded up).
    pub fn rate_limited(message: impl Into<Cow<'static, str>>, wait: Duration) -> Self {
        let e = Self::new(ErrorCode::INTERNAL_ERROR, message).retrying_after(wait);
        let ms = match e.status {
            Status::TooMany(ms) => ms,
            _ => 1,
        };
        e.with_data(serde_json::json!({ "retryAfterMs": ms }))
    }

    /// The same error, answered over HTTP as a 429 with `Retry-After` (an
    /// upstream's refusal that said when to retry, relayed as it was). The
    /// wait is kept in whole milliseconds, rounded up: a caller that waits as
    /// long as it is told is not refused again.
    pub(crate) fn retrying_after(mut self, wait: Duration) -> Self {
        let ms = u64::try_from(wait.as_micros().div_ceil(1000))
            .unwrap_or(u64::MAX)
            .max(1);
        self.status = Status::TooMany(ms);
        self
    }

    /// How long to wait before retrying, for a [`rate_limited`](McpError::rate_limited) error.
    pub fn retry_after(&self) -> Option<Duration> {
        match self.status {
            Status::TooMany(ms) => Some(Duration::from_millis(ms)),
            _ => None,
        }
    }

    /// The error code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The optional `data`.
    pub fn data(&self) -> Option<&Value> {
        self.data.as_deref()
    }

    /// The HTTP status a Streamable HTTP server answers this error with.
    pub fn http_status(&self) -> u16 {
        match self.status {
            Status::Forbidden => return 403,
            Status::TooMany(_) => return 429,
            Status::ByCode | Status::ResourceNotFound => {}
        }
        match self.code {
            ErrorCode::METHOD_NOT_FOUND => 404,
            ErrorCode::INTERNAL_ERROR => 500,
            _ => 400,
        }
    }
}

/// The `error` member of a JSON-RPC error response, as it goes on the wire.
#[derive(Serialize)]
pub(crate) struct WireError<'a> {
    pub code: ErrorCode,
    pub message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<&'a Value>,
}

impl<'a> From<&'a McpError> for WireError<'a> {
    fn from(e: &'a McpError) -> Self {
        WireError {
            code: e.code,
            message: &e.message,
            data: e.data.as_deref(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_is_rounded_up_in_milliseconds_and_in_seconds() {
        let e = McpError::rate_limited("slow down", Duration::from_micros(99_870));
        assert_eq!(e.data().unwrap()["retryAfterMs"], 100);
        assert_eq!(e.http_status(), 429);
        let e = McpError::rate_limited("x", Duration::from_micros(1_000_400));
        assert_eq!(e.retry_after(), Some(Duration::from_millis(1_001)));
        let e = McpError::rate_limited("x", Duration::ZERO);
        assert_eq!(e.data().unwrap()["retryAfterMs"], 1);
    }
}
