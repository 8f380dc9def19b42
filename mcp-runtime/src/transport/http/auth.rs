//! Authorization at the HTTP level: the RFC 9728 metadata, the bearer
//! token checked before anything else, and the challenges of a 401, 400,
//! 403 or 503 (the scopes themselves are the dispatcher's, in
//! `dispatch/access.rs`).

use super::conns::Sparse;
use super::{error_response, status, McpBody};
use http::{header, HeaderMap, Method, Response, StatusCode};
use std::sync::Arc;

/// Where RFC 9728 metadata is served (followed by the resource's path).
pub(super) const WELL_KNOWN_METADATA: &str = "/.well-known/oauth-protected-resource";

/// The protected resource metadata (RFC 9728), for a GET of its root or
/// path-suffixed well-known URI.
#[cold]
#[inline(never)]
pub(super) fn metadata(auth: &crate::auth::ResourceServer, method: &Method, path: &str) -> Response<McpBody> {
    let resource_path = crate::auth::split_origin(auth.resource()).map_or("", |(_, p)| p);
    let known = path == WELL_KNOWN_METADATA || path == crate::auth::metadata_path(resource_path);
    let mut r = if !known {
        status(StatusCode::NOT_FOUND)
    } else if method != Method::GET {
        let mut r = status(StatusCode::METHOD_NOT_ALLOWED);
        r.headers_mut()
            .insert(header::ALLOW, http::HeaderValue::from_static("GET"));
        r
    } else {
        let mut r = Response::new(McpBody::full(auth.metadata().to_string().into_bytes()));
        r.headers_mut()
            .insert(header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
        r
    };
    // A cache in between keeps the answer a page of another origin (or none)
    // was given apart: only an allowed page's carries its CORS headers.
    r.headers_mut()
        .insert(header::VARY, http::HeaderValue::from_static("origin"));
    r
}

/// The request's verified token, or the 401 (400 for a malformed
/// credential, 503 when the authorization server cannot be asked) that
/// refuses it.
pub(super) async fn authorize(
    auth: &crate::auth::ResourceServer,
    headers: &HeaderMap,
    peer: Option<std::net::IpAddr>,
) -> Result<Arc<crate::auth::AccessToken>, Response<McpBody>> {
    use crate::auth::{challenge, Challenge, Rejection};
    let refuse = |which: Challenge<'_>| {
        let code = match which {
            Challenge::Malformed(_) => StatusCode::BAD_REQUEST,
            _ => StatusCode::UNAUTHORIZED,
        };
        let mut r = status(code);
        if let Ok(v) = http::HeaderValue::from_str(&challenge(auth, &which)) {
            r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        r
    };
    let token = match crate::auth::bearer_token(headers) {
        Ok(Some(token)) => token,
        Ok(None) => return Err(refuse(Challenge::Missing)),
        Err(why) => return Err(refuse(Challenge::Malformed(&why))),
    };
    match auth.verify_from(token, peer).await {
        Ok(verified) => Ok(verified),
        Err(Rejection::Unavailable(why)) => {
            say_unavailable(&why);
            let e = crate::error::McpError::internal("The authorization server is unavailable");
            let mut r = error_response(StatusCode::SERVICE_UNAVAILABLE, &e);
            r.headers_mut()
                .insert(header::RETRY_AFTER, http::HeaderValue::from_static("5"));
            Err(r)
        }
        Err(why) => match crate::auth::malformed(token) {
            Some(not_a_token) => Err(refuse(Challenge::Malformed(&not_a_token))),
            None => {
                tracing::debug!("token refused: {why}");
                Err(refuse(Challenge::Invalid(&why)))
            }
        },
    }
}

/// The `insufficient_scope` challenge of a 403 from the dispatcher (its
/// error's `data.requiredScopes` names the scopes).
pub(super) fn insufficient_scope(auth: &crate::auth::ResourceServer, body: &[u8]) -> Option<http::HeaderValue> {
    let needed: Vec<String> = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| serde_json::from_value(v.pointer("/error/data/requiredScopes")?.clone()).ok())
        .unwrap_or_default();
    let value = crate::auth::challenge(auth, &crate::auth::Challenge::InsufficientScope(&needed));
    http::HeaderValue::from_str(&value).ok()
}

/// Tokens that could not be verified, said at most once a minute: every
/// protected request says it while the authorization server is away, and
/// a client spending its introspection budget would say it at will.
static UNAVAILABLE: std::sync::Mutex<Sparse> = std::sync::Mutex::new(Sparse::new());

fn say_unavailable(why: &str) {
    let due = UNAVAILABLE.lock().ok().and_then(|mut sparse| sparse.due());
    if let Some((more, _)) = due {
        tracing::warn!("cannot verify a token: {why} ({more} more since the last line; said at most once a minute)");
    }
}
