//! Authorization of a `main!` binary's HTTP endpoint, from the environment:
//! `MCP_AUTH_ISSUER` (the authorization server's issuer URL) and
//! `MCP_AUTH_RESOURCE` (this server's canonical URL, the audience its
//! tokens carry); with `MCP_AUTH_CLIENT_ID` and `MCP_AUTH_CLIENT_SECRET`
//! too, tokens that are not JWTs are introspected as that client.

use crate::auth::ResourceServer;
use crate::server::Server;

/// The issuer variable.
pub const ISSUER_ENV: &str = "MCP_AUTH_ISSUER";
/// The canonical URL variable.
pub const RESOURCE_ENV: &str = "MCP_AUTH_RESOURCE";

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The protection the environment asks for: `Ok(None)` when it asks for
/// none, an error (the binary does not start) when it is incomplete or the
/// authorization server cannot be found.
pub(super) async fn from_env(server: &Server) -> Result<Option<ResourceServer>, String> {
    let (issuer, resource) = match (var(ISSUER_ENV), var(RESOURCE_ENV)) {
        (None, None) => return Ok(None),
        (Some(i), Some(r)) => (i, r),
        _ => return Err(format!("set both {ISSUER_ENV} and {RESOURCE_ENV}, or neither")),
    };
    let canonical = (resource.starts_with("https://") || resource.starts_with("http://")) && !resource.contains('#');
    if !canonical {
        return Err(format!(
            "{RESOURCE_ENV}={resource:?}: give this server's absolute http(s) URL, without a fragment"
        ));
    }
    protect(server, &issuer, &resource).await.map(Some)
}

#[cfg(feature = "auth")]
async fn protect(server: &Server, issuer: &str, resource: &str) -> Result<ResourceServer, String> {
    use crate::auth::{IntrospectionVerifier, JwtVerifier, TokenVerifier, VerifyFuture};
    /// JWTs checked by signature, other tokens by introspection.
    struct Either(JwtVerifier, Option<IntrospectionVerifier>);
    impl TokenVerifier for Either {
        fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
            match &self.1 {
                Some(introspect) if token.split('.').count() != 3 => introspect.verify(token),
                _ => self.0.verify(token),
            }
        }
    }
    let jwt = JwtVerifier::discover(issuer, resource)
        .await
        .map_err(|e| format!("{ISSUER_ENV}={issuer}: {e}"))?;
    let introspect = match (var("MCP_AUTH_CLIENT_ID"), var("MCP_AUTH_CLIENT_SECRET")) {
        (Some(id), Some(secret)) => Some(
            IntrospectionVerifier::discover(issuer, id, secret, resource)
                .await
                .map_err(|e| format!("introspection at {issuer}: {e}"))?,
        ),
        _ => None,
    };
    Ok(ResourceServer::new(resource, issuer, Either(jwt, introspect)).scopes(server.declared_scopes()))
}

#[cfg(not(feature = "auth"))]
async fn protect(_server: &Server, _issuer: &str, _resource: &str) -> Result<ResourceServer, String> {
    Err(format!(
        "{ISSUER_ENV} is set, but this binary was built without the `auth` feature of mcp-runtime"
    ))
}
