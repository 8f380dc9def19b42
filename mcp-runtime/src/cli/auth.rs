//! Authorization of a `main!` binary's HTTP endpoint, from the environment:
//! `MCP_AUTH_ISSUER` (the authorization server's issuer URL) and
//! `MCP_AUTH_RESOURCE` (this server's canonical URL, the audience its
//! tokens carry); with `MCP_AUTH_CLIENT_ID` and `MCP_AUTH_CLIENT_SECRET`
//! too, tokens that are not JWTs (all tokens, when the authorization server
//! publishes no keys) are introspected as that client; with
//! `MCP_AUTH_CHALLENGE_SCOPES`, a 401 asks for those scopes rather than
//! all the catalog declares.

use crate::auth::ResourceServer;
use crate::server::Server;

/// The issuer variable.
pub const ISSUER_ENV: &str = "MCP_AUTH_ISSUER";
/// The canonical URL variable.
pub const RESOURCE_ENV: &str = "MCP_AUTH_RESOURCE";
/// The variable of the scopes a 401 asks for (separated by spaces or
/// commas; [`ResourceServer::challenge_scopes`]).
#[cfg(feature = "auth")]
pub const CHALLENGE_SCOPES_ENV: &str = "MCP_AUTH_CHALLENGE_SCOPES";

/// A variable's value without the whitespace around it (a secret's file
/// often ends with a newline); empty is unset.
fn var(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// The protection the environment asks for: `Ok(None)` when it asks for
/// none, an error (the binary does not start) when it is incomplete. An
/// authorization server that cannot be reached does not stop the binary:
/// it serves, awaiting it (`/readyz` names it; protected requests get 503),
/// and retries with backoff.
pub(super) async fn from_env(server: &Server) -> Result<Option<ResourceServer>, String> {
    let (issuer, resource) = match (var(ISSUER_ENV), var(RESOURCE_ENV)) {
        (None, None) => return Ok(None),
        (Some(i), Some(r)) => (i, r),
        _ => return Err(format!("set both {ISSUER_ENV} and {RESOURCE_ENV}, or neither")),
    };
    if !absolute_http_url(&resource) {
        return Err(format!(
            "{RESOURCE_ENV}={resource:?}: give this server's absolute http(s) URL, without a fragment"
        ));
    }
    // A mistake is refused at start; only an outage is waited out.
    if !absolute_http_url(&issuer) || issuer.contains('?') {
        return Err(format!(
            "{ISSUER_ENV}={issuer:?}: give the authorization server's issuer, an absolute http(s) URL \
             without a query or fragment"
        ));
    }
    if var("MCP_AUTH_CLIENT_ID").is_some() != var("MCP_AUTH_CLIENT_SECRET").is_some() {
        return Err("set both MCP_AUTH_CLIENT_ID and MCP_AUTH_CLIENT_SECRET (introspection), or neither".into());
    }
    protect(server, &issuer, &resource).await.map(Some)
}

/// Whether `url` is an absolute http(s) URL naming a host (and a port of
/// 16 bits, if any), without credentials, a fragment or whitespace.
fn absolute_http_url(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://")) else {
        return false;
    };
    if url.contains('#') || url.contains(char::is_whitespace) {
        return false;
    }
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    // Credentials (`user:pw@host`); an `@` in the path or query is data.
    if authority.contains('@') {
        return false;
    }
    // `[v6]:port`, `host:port`, or either without the port.
    let (host, port) = match authority.strip_prefix('[') {
        Some(bracketed) => match bracketed.split_once(']') {
            Some((v6, "")) => (v6, None),
            Some((v6, after)) => match after.strip_prefix(':') {
                Some(port) => (v6, Some(port)),
                None => return false,
            },
            None => return false,
        },
        None => match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    let port_ok =
        port.is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok());
    !host.is_empty() && port_ok
}

#[cfg(feature = "auth")]
mod verifiers {
    use super::{var, ISSUER_ENV};
    use crate::auth::{AuthServerMetadata, IntrospectionVerifier, JwtVerifier, Rejection, TokenVerifier, VerifyFuture};
    use std::net::IpAddr;
    use std::sync::{Arc, Mutex, OnceLock};
    use std::time::Duration;

    /// JWTs checked by signature, other tokens by introspection; an
    /// authorization server may offer either or both.
    pub(super) struct Either(Option<JwtVerifier>, Option<IntrospectionVerifier>);

    impl TokenVerifier for Either {
        fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
            self.verify_from(token, None)
        }

        fn verify_from<'a>(&'a self, token: &'a str, peer: Option<IpAddr>) -> VerifyFuture<'a> {
            // A JWT is told by its JOSE header, not by its two dots: an
            // opaque token may have dots too.
            match (&self.0, &self.1) {
                (Some(jwt), None) => jwt.verify_from(token, peer),
                (Some(jwt), Some(_)) if jsonwebtoken::decode_header(token).is_ok() => jwt.verify_from(token, peer),
                (_, Some(introspect)) => introspect.verify_from(token, peer),
                (None, None) => Box::pin(std::future::ready(Err(Rejection::Unavailable(
                    "no way to verify tokens".into(),
                )))),
            }
        }

        /// An introspected token's: a JWT (verified by its signature) is
        /// good until its `exp`.
        fn recheck_every(&self, token: &str) -> Option<Duration> {
            match (&self.0, &self.1) {
                (Some(_), _) if jsonwebtoken::decode_header(token).is_ok() => None,
                (_, Some(introspect)) => introspect.recheck_every(token),
                _ => None,
            }
        }
    }

    /// Why [`discover`] found no verifier.
    pub(super) enum Failure {
        /// The authorization server could not be asked: waited out.
        Unreachable(String),
        /// It answered, but offers nothing this configuration can use: a
        /// mistake, refused at start.
        Unusable(String),
    }

    impl std::fmt::Display for Failure {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            match self {
                Failure::Unreachable(why) | Failure::Unusable(why) => f.write_str(why),
            }
        }
    }

    /// The verifiers of `issuer`, found through its metadata, and the issuer
    /// as its metadata writes it (the one clients must find: RFC 8414
    /// compares issuers exactly, and `MCP_AUTH_ISSUER` may differ from it by
    /// a trailing slash).
    pub(super) async fn discover(issuer: &str, resource: &str) -> Result<(Either, String), Failure> {
        let unreachable = |e: Rejection| Failure::Unreachable(format!("{ISSUER_ENV}={issuer}: {e}"));
        // The metadata is fetched once, for both verifiers.
        let meta = AuthServerMetadata::discover(issuer).await.map_err(unreachable)?;
        let credentials = var("MCP_AUTH_CLIENT_ID").zip(var("MCP_AUTH_CLIENT_SECRET"));
        let jwt = match meta.jwks_uri {
            Some(_) => Some(
                JwtVerifier::from_metadata(meta.clone(), resource)
                    .await
                    .map_err(unreachable)?,
            ),
            None => None,
        };
        let introspect = match credentials {
            Some(_) if meta.introspection_endpoint.is_none() => {
                return Err(Failure::Unusable(format!(
                    "MCP_AUTH_CLIENT_ID is set, but the metadata of {issuer} has no introspection_endpoint"
                )))
            }
            Some((id, secret)) => Some(
                IntrospectionVerifier::from_metadata(meta.clone(), id, secret, resource)
                    .map_err(|e| Failure::Unreachable(format!("introspection at {issuer}: {e}")))?,
            ),
            None if jwt.is_none() => {
                return Err(Failure::Unusable(format!(
                    "the metadata of {issuer} has no jwks_uri: its tokens can only be introspected; set \
                     MCP_AUTH_CLIENT_ID and MCP_AUTH_CLIENT_SECRET"
                )))
            }
            None => None,
        };
        Ok((Either(jwt, introspect), meta.issuer))
    }

    /// The verifier of an authorization server that could not be reached at
    /// start: every token is refused as unavailable (503, as when it goes
    /// away later) until a retry finds it.
    pub(super) struct Deferred {
        found: OnceLock<Either>,
        last_error: Mutex<String>,
    }

    impl TokenVerifier for Arc<Deferred> {
        fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
            self.verify_from(token, None)
        }

        fn verify_from<'a>(&'a self, token: &'a str, peer: Option<IpAddr>) -> VerifyFuture<'a> {
            match self.found.get() {
                Some(found) => found.verify_from(token, peer),
                None => {
                    let why = self.last_error.lock().map(|e| e.clone()).unwrap_or_default();
                    Box::pin(std::future::ready(Err(Rejection::Unavailable(format!(
                        "the authorization server has not been reached yet: {why}"
                    )))))
                }
            }
        }

        fn recheck_every(&self, token: &str) -> Option<Duration> {
            self.found.get().and_then(|found| found.recheck_every(token))
        }
    }

    /// The first wait between two tries, and the longest.
    const FIRST: Duration = Duration::from_millis(500);
    const LONGEST: Duration = Duration::from_secs(30);

    /// A verifier that retries discovery with backoff (0.5 s doubling up to
    /// 30 s) until it works, the server awaiting it meanwhile.
    pub(super) fn deferred(
        issuer: String,
        resource: String,
        first_error: String,
        awaiting: crate::server::Awaiting,
    ) -> Arc<Deferred> {
        let deferred = Arc::new(Deferred {
            found: OnceLock::new(),
            last_error: Mutex::new(first_error),
        });
        let shared = deferred.clone();
        tokio::spawn(async move {
            let mut wait = FIRST;
            let mut tries = 1u32;
            loop {
                tokio::time::sleep(wait).await;
                tries = tries.saturating_add(1);
                match discover(&issuer, &resource).await {
                    Ok((found, _)) => {
                        let _ = shared.found.set(found);
                        tracing::info!(
                            "authorization server {issuer} reached after {tries} tries: protected requests are served"
                        );
                        awaiting.ready();
                        return;
                    }
                    Err(Failure::Unusable(why)) => {
                        // Reached, but of no use to this configuration: a
                        // mistake no retry mends. The server stays unready.
                        tracing::error!(
                            "authorization server {issuer}: {why}; protected requests get 503 until the \
                             configuration is corrected and the server restarted"
                        );
                        if let Ok(mut last) = shared.last_error.lock() {
                            *last = why;
                        }
                        return;
                    }
                    Err(e) => {
                        // Said at every doubling, then about twice a minute.
                        tracing::warn!(
                            "authorization server {issuer} still unreachable ({e}); next try in {:?}",
                            wait.saturating_mul(2).min(LONGEST)
                        );
                        if let Ok(mut last) = shared.last_error.lock() {
                            *last = e.to_string();
                        }
                    }
                }
                wait = wait.saturating_mul(2).min(LONGEST);
            }
        });
        deferred
    }
}

#[cfg(feature = "auth")]
async fn protect(server: &Server, issuer: &str, resource: &str) -> Result<ResourceServer, String> {
    let scopes = server.declared_scopes();
    let protection = match verifiers::discover(issuer, resource).await {
        Ok((found, declared)) => ResourceServer::new(resource, declared, found),
        Err(verifiers::Failure::Unusable(why)) => return Err(why),
        Err(verifiers::Failure::Unreachable(e)) => {
            tracing::warn!(
                "authorization server {issuer} unreachable at start ({e}): serving anyway; protected requests \
                 get 503 and /readyz names it until a retry reaches it"
            );
            let awaiting = server.awaiting(format!("authorization server {issuer}"));
            let verifier = verifiers::deferred(issuer.to_owned(), resource.to_owned(), e, awaiting);
            ResourceServer::new(resource, issuer, verifier)
        }
    };
    let protection = match var(CHALLENGE_SCOPES_ENV) {
        Some(asked) => {
            let asked: Vec<&str> = asked.split([' ', ',']).filter(|s| !s.is_empty()).collect();
            if let Some(unknown) = asked.iter().find(|s| !scopes.iter().any(|d| d == *s)) {
                tracing::warn!("{CHALLENGE_SCOPES_ENV} names {unknown:?}, which no tool, resource or prompt asks for");
            }
            protection.challenge_scopes(asked)
        }
        None => protection,
    };
    Ok(protection.scopes(scopes))
}

#[cfg(not(feature = "auth"))]
async fn protect(_server: &Server, _issuer: &str, _resource: &str) -> Result<ResourceServer, String> {
    Err(format!(
        "{ISSUER_ENV} is set, but this binary was built without the `auth` feature of mcp-runtime"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_authorization_url_names_a_host() {
        for good in [
            "https://mcp.example.com/mcp",
            "http://127.0.0.1:9/mcp",
            "https://auth.example.com",
            "https://auth.example.com/",
            "https://[::1]:8443/mcp?tenant=a",
            "https://[::1]",
            "https://mcp.example.com?x=1",
            "https://mcp.example.com/@acme/mcp",
            "https://mcp.example.com/mcp?owner=ada@example.com",
        ] {
            assert!(absolute_http_url(good), "{good}");
        }
        for bad in [
            "https://",
            "https:///mcp",
            "https://?x",
            "https://:443",
            "https://:443/mcp",
            "http://host:/mcp",
            "http://host:99999",
            "http://host:+80",
            "http://host:80:80",
            "https://[::1",
            "https://[::1]x",
            "https://user:secret@auth.example.com",
            "https://mcp.example.com/#frag",
            "https://mcp.example.com/a b",
            "ftp://mcp.example.com",
            "mcp.example.com",
        ] {
            assert!(!absolute_http_url(bad), "{bad}");
        }
    }
}
