//! Cross-origin requests from browser clients (the Fetch standard's CORS):
//! a page whose `Origin` the [`HostPolicy`](super::HostPolicy) lets in
//! (loopback pages, and the pages of the hosts the server is named by) may
//! call the endpoint and read its answers. Its preflight `OPTIONS` is
//! answered before authorization (a browser sends no token with it), and
//! every answer to it names the origin and shows the headers a client reads
//! (`Mcp-Session-Id`, `WWW-Authenticate` for discovering authorization,
//! `Retry-After`). No credentials mode: MCP clients send their token in
//! `Authorization` themselves, never as a cookie. A page of any other origin
//! is refused (403) before this, as it always was.

use super::McpBody;
use http::{header, HeaderMap, HeaderValue, Method, Response, StatusCode};

/// The headers a browser client may read besides the safelisted ones.
const EXPOSED: &str = "mcp-session-id, mcp-protocol-version, www-authenticate, retry-after";
/// The methods of the endpoint.
const METHODS: &str = "POST, GET, DELETE";
/// How long a browser may keep a preflight's answer (10 minutes).
const MAX_AGE: &str = "600";

/// Whether a request is a browser's preflight: `OPTIONS` naming the method
/// it would send.
pub(super) fn is_preflight(method: &Method, headers: &HeaderMap) -> bool {
    method == Method::OPTIONS && headers.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
}

/// The answer to a preflight the origin check let through: the endpoint's
/// methods, and the headers the page asked to send (any header may come:
/// `Mcp-Param-*` names are the tools').
#[cold]
#[inline(never)]
pub(super) fn preflight(headers: &HeaderMap) -> Response<McpBody> {
    let mut r = Response::new(McpBody::empty());
    *r.status_mut() = StatusCode::NO_CONTENT;
    let h = r.headers_mut();
    h.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static(METHODS));
    if let Some(asked) = headers.get(header::ACCESS_CONTROL_REQUEST_HEADERS) {
        h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, asked.clone());
    }
    h.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static(MAX_AGE));
    h.append(
        header::VARY,
        HeaderValue::from_static("access-control-request-method, access-control-request-headers"),
    );
    r
}

/// `response`, readable by the page of `origin` when the request came from one.
#[inline]
pub(super) fn shown(mut response: Response<McpBody>, origin: Option<HeaderValue>) -> Response<McpBody> {
    if let Some(origin) = origin {
        allow(&mut response, origin);
    }
    response
}

/// Lets the page of `origin` read `response`.
#[cold]
#[inline(never)]
fn allow(response: &mut Response<McpBody>, origin: HeaderValue) {
    let h = response.headers_mut();
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    h.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static(EXPOSED));
    if !h
        .get_all(header::VARY)
        .iter()
        .any(|v| v.as_bytes().eq_ignore_ascii_case(b"origin"))
    {
        h.append(header::VARY, HeaderValue::from_static("origin"));
    }
}
