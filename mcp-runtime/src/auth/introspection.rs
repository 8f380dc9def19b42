//! Opaque (or any) access tokens checked at the authorization server's
//! introspection endpoint (RFC 7662).

use super::cache::TokenCache;
use super::discovery::{client, read_json, AuthServerMetadata};
use super::jwt::access_token;
use super::{AccessToken, Rejection, TokenVerifier, VerifyFuture};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Asks the authorization server about each token (RFC 7662), as a client
/// of its own (`client_secret_basic`): the token must be `active`, carry
/// this server's canonical URI in `aud`, not be expired, and (when the
/// issuer is known) come from it. Answers are cached (10 000 tokens, 30 s
/// by default), so a revoked token is refused within that time.
pub struct IntrospectionVerifier {
    endpoint: String,
    client_id: String,
    client_secret: String,
    audience: String,
    issuer: Option<String>,
    http: reqwest::Client,
    cache: TokenCache,
    /// Tokens found inactive, refused without asking again for a while.
    refused: TokenCache<()>,
    /// At most this many introspection calls at once: made-up tokens
    /// cannot turn into a flood of requests to the authorization server.
    calls: tokio::sync::Semaphore,
}

impl std::fmt::Debug for IntrospectionVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionVerifier")
            .field("endpoint", &self.endpoint)
            .field("client_id", &self.client_id)
            .field("audience", &self.audience)
            .finish_non_exhaustive()
    }
}

impl IntrospectionVerifier {
    /// Introspects at `endpoint` as the client `client_id`/`client_secret`,
    /// accepting tokens for `resource` (this server's canonical URI).
    pub fn new(
        endpoint: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
        resource: impl Into<String>,
    ) -> Result<Self, Rejection> {
        Ok(IntrospectionVerifier {
            endpoint: endpoint.into(),
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            audience: resource.into(),
            issuer: None,
            http: client()?,
            cache: TokenCache::new(10_000, Duration::from_secs(30)),
            refused: TokenCache::new(10_000, Duration::from_secs(5)),
            calls: tokio::sync::Semaphore::new(32),
        })
    }

    /// Finds the introspection endpoint in the issuer's metadata; tokens
    /// must then come from that issuer.
    pub async fn discover(
        issuer: &str,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
        resource: impl Into<String>,
    ) -> Result<Self, Rejection> {
        let meta = AuthServerMetadata::discover(issuer).await?;
        let endpoint = meta
            .introspection_endpoint
            .ok_or_else(|| Rejection::Unavailable(format!("the metadata of {issuer} has no introspection_endpoint")))?;
        let mut verifier = IntrospectionVerifier::new(endpoint, client_id, client_secret, resource)?;
        verifier.issuer = Some(meta.issuer);
        Ok(verifier)
    }

    /// How many answers are kept, and for how long at most (default 10 000
    /// for 30 s; 0 asks every time, so a revocation counts at once). An
    /// inactive token is refused without asking again for 5 s (not at all
    /// with 0).
    pub fn cache(mut self, capacity: usize, ttl: Duration) -> Self {
        self.cache = TokenCache::new(capacity, ttl);
        self.refused = TokenCache::new(capacity, ttl.min(Duration::from_secs(5)));
        self
    }

    async fn introspect(&self, token: &str) -> Result<AccessToken, Rejection> {
        let response = self
            .http
            .post(&self.endpoint)
            .basic_auth(&self.client_id, Some(&self.client_secret))
            .header(reqwest::header::ACCEPT, "application/json")
            .form(&[("token", token), ("token_type_hint", "access_token")])
            .send()
            .await
            .map_err(|e| Rejection::Unavailable(format!("{}: {e}", self.endpoint)))?;
        let answer: Map<String, Value> = read_json(&self.endpoint, response).await?;
        if answer.get("active") != Some(&Value::Bool(true)) {
            return Err(Rejection::Inactive);
        }
        let verified = access_token(answer);
        if verified.subject.is_empty() {
            return Err(Rejection::Malformed(
                "an active token with neither sub nor client_id".into(),
            ));
        }
        if !verified.audience.contains(&self.audience) {
            return Err(Rejection::Audience(verified.audience.join(" ")));
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        if verified.expires_at.is_some_and(|exp| exp <= now) {
            return Err(Rejection::Expired);
        }
        if let (Some(expected), Some(iss)) = (&self.issuer, &verified.issuer) {
            if expected.trim_end_matches('/') != iss.trim_end_matches('/') {
                return Err(Rejection::Issuer(iss.clone()));
            }
        }
        Ok(verified)
    }
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(async move {
            if let Some(known) = self.cache.get(token) {
                return Ok(known);
            }
            if self.refused.get(token).is_some() {
                return Err(Rejection::Inactive);
            }
            // At most 32 calls at once, and no endless queue behind a slow server.
            let _one_of_few = tokio::time::timeout(Duration::from_secs(10), self.calls.acquire())
                .await
                .map_err(|_| Rejection::Unavailable("too many introspection calls waiting".into()))?
                .map_err(|_| Rejection::Unavailable("introspection is shut".into()))?;
            // Another request may have asked about the same token meanwhile.
            if let Some(known) = self.cache.get(token) {
                return Ok(known);
            }
            if self.refused.get(token).is_some() {
                return Err(Rejection::Inactive);
            }
            let verified = match self.introspect(token).await {
                Ok(verified) => Arc::new(verified),
                Err(Rejection::Inactive) => {
                    self.refused.put(token, &(), None);
                    return Err(Rejection::Inactive);
                }
                Err(other) => return Err(other),
            };
            self.cache.put(token, &verified, verified.expires_at);
            Ok(verified)
        })
    }
}
