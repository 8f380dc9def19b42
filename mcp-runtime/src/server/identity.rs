//! Who is calling, for handlers that need it: the verified access token of
//! an authorized HTTP request ([`Identity`]) and the HTTP request's headers
//! ([`RequestHeaders`]). On stdio, or on an endpoint without authorization,
//! they are there and empty, never a panic.

use super::context::{Context, FromContext};
use crate::auth::AccessToken;
use crate::error::McpError;
use std::sync::Arc;

/// The caller's verified access token: subject, client id, scopes, claims.
/// Empty ([`token`](Self::token) is `None`) where requests are not
/// authorized (stdio, or HTTP without a
/// [`ResourceServer`](crate::auth::ResourceServer)).
///
/// ```
/// use mcp_runtime::prelude::*;
///
/// /// Says who is asking.
/// #[tool]
/// fn whoami(identity: Identity) -> String {
///     match identity.token() {
///         Some(token) => format!("{} ({})", token.subject, token.scopes.join(" ")),
///         None => "anonymous (stdio)".into(),
///     }
/// }
/// ```
#[derive(Debug, Clone, Default)]
pub struct Identity(Option<Arc<AccessToken>>);

impl Identity {
    /// The verified token, if the request was authorized.
    pub fn token(&self) -> Option<&AccessToken> {
        self.0.as_deref()
    }

    /// The token's subject (the principal), if the request was authorized.
    pub fn subject(&self) -> Option<&str> {
        self.token().map(|t| t.subject.as_str())
    }

    /// Whether the request was authorized with `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.token().is_some_and(|t| t.has_scope(scope))
    }
}

impl FromContext for Identity {
    fn from_context(ctx: &Context) -> Result<Self, McpError> {
        Ok(Identity(ctx.scope.identity.clone()))
    }
}

/// The headers of the HTTP request being served, without `Authorization`
/// (a token is for this server only: it is never handed on). Empty on
/// stdio.
#[derive(Debug, Clone, Default)]
pub struct RequestHeaders(Option<Context>);

impl RequestHeaders {
    /// The headers, if the request came over HTTP.
    pub fn map(&self) -> Option<&http::HeaderMap> {
        self.0.as_ref()?.scope.headers.map()
    }

    /// One header's value as text, if it was sent and is visible ASCII.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.map()?.get(name)?.to_str().ok()
    }
}

impl FromContext for RequestHeaders {
    fn from_context(ctx: &Context) -> Result<Self, McpError> {
        Ok(RequestHeaders(Some(ctx.clone())))
    }
}
