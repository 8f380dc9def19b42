//! Authorization (MCP `basic/authorization`): the server as an OAuth 2.1
//! resource server. Over HTTP, every request carries a bearer token that a
//! [`TokenVerifier`] checks (signature or introspection, issuer, audience
//! bound to this server's canonical URI per RFC 8707, expiry); a missing or
//! bad one is a 401 whose `WWW-Authenticate` names the RFC 9728 protected
//! resource metadata this server publishes; a token without the scopes a
//! tool, resource or prompt asks for is a 403 `insufficient_scope` naming
//! them. The verified token reaches handlers through the
//! [`Identity`](crate::Identity) extractor, never the token itself.
//!
//! stdio is not authorized this way (the spec leaves it to credentials
//! from the environment): requests there carry no identity, and scopes are
//! not checked.
//!
//! The verifiers that talk to an authorization server, [`JwtVerifier`] and
//! [`IntrospectionVerifier`], are in the `auth` feature.

#[cfg(feature = "auth")]
mod cache;
mod challenge;
#[cfg(feature = "auth")]
mod discovery;
#[cfg(feature = "auth")]
mod introspection;
#[cfg(feature = "auth")]
mod jwt;

pub(crate) use challenge::{bearer_token, bearer_value, challenge, malformed, metadata_path, Challenge};
#[cfg(feature = "auth")]
pub use discovery::AuthServerMetadata;
#[cfg(feature = "auth")]
pub use introspection::{IntrospectionVerifier, PeerBudget, MAX_CONCURRENT_INTROSPECTIONS};
#[cfg(feature = "auth")]
pub use jwt::{JwtAlgorithm, JwtVerifier};

use serde_json::{Map, Value};
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// The longest bearer token read (8 KiB): a longer one is refused as a
/// malformed credential (400 `invalid_request`) before any verifier sees
/// it. Real access tokens are one or two kilobytes; a JWT with many claims
/// stays far below this.
pub const MAX_TOKEN_LEN: usize = 8 * 1024;

/// The most characters of a value taken from an unverified token (a `kid`,
/// an `iss`, a `typ`...) that a [`Rejection`] keeps, and so what a
/// `WWW-Authenticate` challenge or a log line can carry of it.
pub const MAX_REFLECTED_LEN: usize = 64;

/// A value from an unverified token, made fit to be reflected: at most
/// [`MAX_REFLECTED_LEN`] characters, each one RFC 6750 allows in a quoted
/// `error_description` (printable ASCII but `"` and `\`), anything else
/// replaced by `?`, and `...` when it was cut.
#[cfg_attr(not(feature = "auth"), allow(dead_code))]
pub(crate) fn clip(value: &str) -> String {
    let mut out: String = value
        .chars()
        .take(MAX_REFLECTED_LEN)
        .map(|c| {
            if matches!(c, '\u{20}'..='\u{21}' | '\u{23}'..='\u{5B}' | '\u{5D}'..='\u{7E}') {
                c
            } else {
                '?'
            }
        })
        .collect();
    if value.chars().nth(MAX_REFLECTED_LEN).is_some() {
        out.push_str("...");
    }
    out
}

/// A verified access token: who it was issued to and what it grants.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AccessToken {
    /// `sub`: the resource owner, or the client itself for a
    /// client-credentials token. The request's principal.
    pub subject: String,
    /// `client_id`: the OAuth client the token was issued to, if known.
    pub client_id: Option<String>,
    /// The granted scopes (`scope`, space-separated, or `scp`).
    pub scopes: Vec<String>,
    /// `aud`: the resources the token is for (this server's URI among them).
    pub audience: Vec<String>,
    /// `iss`: the authorization server that issued it.
    pub issuer: Option<String>,
    /// `exp`, seconds since the Unix epoch, if the token expires.
    pub expires_at: Option<u64>,
    /// Every claim (or introspection member), for what the fields above
    /// do not name.
    pub claims: Map<String, Value>,
}

impl AccessToken {
    /// Whether the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// The scopes of `required` the token does not grant.
    pub fn missing<'a>(&self, required: &'a [String]) -> Vec<&'a str> {
        required
            .iter()
            .filter(|r| !self.has_scope(r))
            .map(String::as_str)
            .collect()
    }
}

/// Why a token was not accepted: each is a 401 with
/// `error="invalid_token"` and this as the description, except
/// [`Unavailable`](Rejection::Unavailable) (the authorization server could
/// not be asked: a 503, the token is not judged).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// Not a well-formed token of the kind the verifier reads.
    #[error("malformed token: {0}")]
    Malformed(String),
    /// Signed with an algorithm the verifier does not accept (`none`, an
    /// HMAC, or one off the allow-list).
    #[error("algorithm {0} is not accepted")]
    Algorithm(String),
    /// Its key id is not among the issuer's keys, even after a refetch.
    #[error("unknown signing key {0:?}")]
    UnknownKey(String),
    /// The signature does not verify.
    #[error("bad signature")]
    Signature,
    /// Issued by another authorization server.
    #[error("issued by {0:?}, not by the expected issuer")]
    Issuer(String),
    /// Not issued for this server (RFC 8707 audience).
    #[error("not issued for this resource (audience {0:?})")]
    Audience(String),
    /// Expired, or not valid yet.
    #[error("expired or not yet valid")]
    Expired,
    /// Not a JWT access token (RFC 9068 `typ` is not `at+jwt`).
    #[error("not an access token (typ {0:?})")]
    NotAccessToken(String),
    /// Introspection says the token is not active (revoked, expired, unknown).
    #[error("token is not active")]
    Inactive,
    /// The authorization server could not be reached or answered wrongly.
    #[error("the authorization server is unavailable: {0}")]
    Unavailable(String),
}

/// The future a [`TokenVerifier`] returns.
pub type VerifyFuture<'a> = Pin<Box<dyn Future<Output = Result<Arc<AccessToken>, Rejection>> + Send + 'a>>;

/// Checks a bearer token: its signature or its status at the authorization
/// server, its issuer, its audience (this server's canonical URI), its
/// expiry. The verified token is shared (`Arc`): a verifier that caches
/// hands out the same one for every request that carries it. Implement it for a token format of your own; [`JwtVerifier`]
/// and [`IntrospectionVerifier`] (the `auth` feature) are built in.
pub trait TokenVerifier: Send + Sync + 'static {
    /// The verified token, or why it is not accepted.
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a>;

    /// The same for a token presented from `peer` (the client's address,
    /// when the transport knows it), so that a verifier can bound what one
    /// address may make it do: [`IntrospectionVerifier`] bounds the
    /// introspection calls of tokens it has not seen per address. By
    /// default, [`verify`](Self::verify).
    fn verify_from<'a>(&'a self, token: &'a str, peer: Option<IpAddr>) -> VerifyFuture<'a> {
        let _ = peer;
        self.verify(token)
    }

    /// How often a stream opened with `token` (a `subscriptions/listen`
    /// stream, a legacy session's GET stream) asks again whether it is
    /// still good, for a verifier whose answer can change before the token
    /// expires: [`IntrospectionVerifier`] (a token revoked at the
    /// authorization server) says its cache's time to live (asked at least
    /// 5 s apart). `None`, the default: never, a signed token being good
    /// until its `exp` (which ends the stream in any case).
    fn recheck_every(&self, token: &str) -> Option<Duration> {
        let _ = token;
        None
    }
}

/// The shortest time between two checks of a stream's token.
const RECHECK_FLOOR: Duration = Duration::from_secs(5);

/// Completes when `token`, asked again every `every` (at least
/// [`RECHECK_FLOOR`], and up to a tenth more, so that streams opened
/// together do not ask together; the request's address no longer known),
/// is refused: a stream opened with it ends then. An authorization server
/// that cannot be asked does not end it.
pub(crate) async fn revoked(verifier: Arc<dyn TokenVerifier>, token: String, every: Duration) {
    let every = every.max(RECHECK_FLOOR);
    let spread = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() % 100);
    let every = every.saturating_add(every / 1000 * spread);
    loop {
        tokio::time::sleep(every).await;
        match verifier.verify(&token).await {
            Ok(_) | Err(Rejection::Unavailable(_)) => {}
            Err(why) => {
                tracing::debug!("a stream ends: its token is refused now ({why})");
                return;
            }
        }
    }
}

/// What protects a Streamable HTTP endpoint: this server's canonical URI,
/// the authorization servers that issue tokens for it, and the verifier.
#[derive(Clone)]
pub struct ResourceServer {
    pub(crate) resource: String,
    pub(crate) authorization_servers: Vec<String>,
    pub(crate) scopes_supported: Vec<String>,
    pub(crate) challenge_scopes: Option<Vec<String>>,
    pub(crate) verifier: Arc<dyn TokenVerifier>,
    pub(crate) hide_unauthorized: bool,
}

impl std::fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceServer")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("scopes_supported", &self.scopes_supported)
            .field("challenge_scopes", &self.challenge_scopes)
            .field("hide_unauthorized", &self.hide_unauthorized)
            .finish_non_exhaustive()
    }
}

impl ResourceServer {
    /// Protects the endpoint whose canonical URI is `resource` (for example
    /// `https://mcp.example.com/mcp`: the audience tokens must carry) with
    /// tokens from `authorization_server` (its issuer URL), checked by
    /// `verifier`.
    pub fn new(
        resource: impl Into<String>,
        authorization_server: impl Into<String>,
        verifier: impl TokenVerifier,
    ) -> Self {
        ResourceServer {
            resource: resource.into(),
            authorization_servers: vec![authorization_server.into()],
            scopes_supported: Vec::new(),
            challenge_scopes: None,
            verifier: Arc::new(verifier),
            hide_unauthorized: true,
        }
    }

    /// The scopes listed in the metadata (`scopes_supported`) and, unless
    /// [`challenge_scopes`](Self::challenge_scopes) says otherwise, asked for
    /// in a 401 challenge (clients request them).
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The scopes a 401 challenge asks a client to request (its `scope`
    /// parameter), when that is less than all of [`scopes`](Self::scopes):
    /// least privilege, as the MCP authorization spec asks. A client then
    /// asks for what most calls need, and a call that needs more is a 403
    /// `insufficient_scope` naming it, which the client answers by asking
    /// for that scope too (step-up). An empty list leaves `scope` out of the
    /// challenge, and clients fall back to the metadata's `scopes_supported`.
    ///
    /// ```
    /// # use mcp_runtime::auth::{AccessToken, ResourceServer, TokenVerifier, VerifyFuture};
    /// # struct Verifier;
    /// # impl TokenVerifier for Verifier {
    /// #     fn verify<'a>(&'a self, _: &'a str) -> VerifyFuture<'a> {
    /// #         Box::pin(async { Ok(std::sync::Arc::new(AccessToken::default())) })
    /// #     }
    /// # }
    /// let protection = ResourceServer::new("https://mcp.example.com/mcp", "https://auth.example.com", Verifier)
    ///     .scopes(["tickets:read", "tickets:write"])
    ///     .challenge_scopes(["tickets:read"]);
    /// # let _ = protection;
    /// ```
    pub fn challenge_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.challenge_scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// Whether lists leave out what the caller's scopes do not reach
    /// (default `true`); calling such an item is a 403 either way.
    pub fn hide_unauthorized(mut self, hide: bool) -> Self {
        self.hide_unauthorized = hide;
        self
    }

    /// The canonical URI of the protected endpoint.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The RFC 9728 protected resource metadata document.
    pub fn metadata(&self) -> Value {
        let mut doc = Map::new();
        doc.insert("resource".into(), Value::String(self.resource.clone()));
        doc.insert(
            "authorization_servers".into(),
            self.authorization_servers.clone().into(),
        );
        if !self.scopes_supported.is_empty() {
            doc.insert("scopes_supported".into(), self.scopes_supported.clone().into());
        }
        doc.insert("bearer_methods_supported".into(), vec!["header"].into());
        Value::Object(doc)
    }

    /// The URL of the metadata document: the path-suffixed well-known URI
    /// of the resource (RFC 9728 section 3.1).
    pub fn metadata_url(&self) -> String {
        match split_origin(&self.resource) {
            Some((origin, path)) => format!("{origin}{}", metadata_path(path)),
            None => format!(
                "{}/.well-known/oauth-protected-resource",
                self.resource.trim_end_matches('/')
            ),
        }
    }

    /// Verifies a request's token presented from `peer` (see
    /// [`TokenVerifier::verify_from`]; one longer than [`MAX_TOKEN_LEN`] is
    /// refused unread).
    pub(crate) async fn verify_from(&self, token: &str, peer: Option<IpAddr>) -> Result<Arc<AccessToken>, Rejection> {
        if token.len() > MAX_TOKEN_LEN {
            return Err(too_long());
        }
        self.verifier.verify_from(token, peer).await
    }

    /// What ends a stream opened with `token` once the verifier refuses it
    /// (see [`TokenVerifier::recheck_every`]); `None` for a verifier that
    /// does not ask again.
    pub(crate) fn watch(&self, token: &str) -> Option<Pin<Box<dyn Future<Output = ()> + Send>>> {
        let every = self.verifier.recheck_every(token)?;
        Some(Box::pin(revoked(self.verifier.clone(), token.to_owned(), every)))
    }
}

/// Why a token longer than [`MAX_TOKEN_LEN`] is refused.
pub(crate) fn too_long() -> Rejection {
    Rejection::Malformed(format!("the bearer token is longer than {MAX_TOKEN_LEN} bytes"))
}

/// `https://host:port` and the path of a URL.
pub(crate) fn split_origin(url: &str) -> Option<(&str, &str)> {
    let after_scheme = url.find("://")?.checked_add(3)?;
    let rest = url.get(after_scheme..)?;
    let path_at = rest.find(['/', '?', '#']).map_or(url.len(), |i| after_scheme + i);
    let (origin, path) = url.split_at(path_at);
    // A query or fragment with no path: the path is empty.
    let path = if path.starts_with('/') {
        path.split(['?', '#']).next().unwrap_or_default()
    } else {
        ""
    };
    Some((origin, path))
}

/// The clock skew allowed between this server and the authorization
/// server on a token's `exp` (seconds), as [`JwtVerifier`]'s default
/// leeway: an introspected token is refused, and a stream opened with a
/// token ends, that long after its `exp`.
pub(crate) const CLOCK_LEEWAY_S: u64 = 30;

/// Whether a token's audience `aud` names the resource `resource`: the
/// same URI, its scheme and host compared without regard to case (the
/// canonical form is lowercase; a client may send them otherwise, and the
/// spec asks servers to accept it), the rest exactly.
#[cfg(feature = "auth")]
pub(crate) fn same_resource(aud: &str, resource: &str) -> bool {
    fn parts(uri: &str) -> Option<(&str, &str, &str)> {
        let (scheme, rest) = uri.split_once("://")?;
        let at = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(at);
        Some((scheme, authority, path))
    }
    match (parts(aud), parts(resource)) {
        (Some((s1, a1, p1)), Some((s2, a2, p2))) => {
            s1.eq_ignore_ascii_case(s2) && a1.eq_ignore_ascii_case(a2) && p1 == p2
        }
        _ => aud == resource,
    }
}

/// Whether a token with `exp` is past it at `now` (seconds since the
/// epoch), with [`CLOCK_LEEWAY_S`].
#[cfg(feature = "auth")]
pub(crate) fn past(exp: u64, now: u64) -> bool {
    exp.saturating_add(CLOCK_LEEWAY_S) <= now
}

/// Completes when `token` expires (never, for none or one without `exp`),
/// with [`CLOCK_LEEWAY_S`]: a stream opened with a token does not outlive
/// it, and one opened with a token accepted within the leeway is not ended
/// at once.
pub(crate) async fn expired(token: Option<&AccessToken>) {
    let left = token.and_then(|t| t.expires_at).map(|exp| {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        std::time::Duration::from_secs(exp.saturating_add(CLOCK_LEEWAY_S).saturating_sub(now))
    });
    match left {
        // Boxed: a stream without an expiry (most) keeps no timer's room.
        Some(left) => Box::pin(tokio::time::sleep(left)).await,
        None => std::future::pending().await,
    }
}

/// Whether `granted` reaches an item asking for `required` scopes.
pub(crate) fn reaches(identity: Option<&AccessToken>, required: &[String]) -> bool {
    match identity {
        None => true,
        Some(token) => required.iter().all(|r| token.has_scope(r)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "auth")]
    #[test]
    fn an_audience_names_the_resource_whatever_the_case_of_its_scheme_and_host() {
        let resource = "https://mcp.example.com/mcp";
        assert!(same_resource("https://mcp.example.com/mcp", resource));
        assert!(same_resource("HTTPS://MCP.Example.com/mcp", resource));
        assert!(
            !same_resource("https://mcp.example.com/MCP", resource),
            "the path is exact"
        );
        assert!(!same_resource("https://mcp.example.com/mcp/", resource));
        assert!(!same_resource("https://mcp.example.com.evil/mcp", resource));
        assert!(!same_resource("mcp.example.com/mcp", resource));
    }

    #[test]
    fn urls_split_into_origin_and_path() {
        assert_eq!(split_origin("https://h:1/a/b?q#f"), Some(("https://h:1", "/a/b")));
        assert_eq!(split_origin("https://h?q"), Some(("https://h", "")));
        assert_eq!(split_origin("https://h"), Some(("https://h", "")));
        assert_eq!(split_origin("no-scheme"), None);
    }

    #[test]
    fn the_metadata_url_is_path_suffixed() {
        let rs = ResourceServer::new("https://mcp.example.com/mcp", "https://as.example.com", NoVerifier);
        assert_eq!(
            rs.metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        let root = ResourceServer::new("http://127.0.0.1:3000", "https://as", NoVerifier);
        assert_eq!(
            root.metadata_url(),
            "http://127.0.0.1:3000/.well-known/oauth-protected-resource"
        );
    }

    #[test]
    fn reflected_values_are_short_and_safe() {
        assert_eq!(clip("key-1"), "key-1");
        assert_eq!(clip("a\"b\\c\né"), "a?b?c??");
        let long = clip(&"k".repeat(10_000));
        assert_eq!(long.len(), MAX_REFLECTED_LEN + 3);
        assert!(long.ends_with("..."));
    }

    struct NoVerifier;
    impl TokenVerifier for NoVerifier {
        fn verify<'a>(&'a self, _token: &'a str) -> VerifyFuture<'a> {
            Box::pin(async { Err(Rejection::Inactive) })
        }
    }
}
