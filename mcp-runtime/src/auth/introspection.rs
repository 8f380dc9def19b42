//! Opaque (or any) access tokens checked at the authorization server's
//! introspection endpoint (RFC 7662).

use super::cache::{digest, TokenCache};
use super::discovery::{client, read_json, AuthServerMetadata};
use super::jwt::access_token;
use super::{AccessToken, Rejection, TokenVerifier, VerifyFuture};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// At most this many introspection calls at once, from all peers.
pub const MAX_CONCURRENT_INTROSPECTIONS: usize = 32;

/// How long a token waits for one of the
/// [`MAX_CONCURRENT_INTROSPECTIONS`] calls before it is answered 503.
const CALL_WAIT: Duration = Duration::from_secs(10);

/// How much introspection one client address may cause with tokens the
/// verifier has not seen (a token it knows, active or not, is answered
/// from its caches and costs nothing). Past it, such a token is not
/// judged: the request is answered 503 (the authorization server is not
/// asked), like one that finds the authorization server down. An IPv6
/// address counts by its /64.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerBudget {
    /// Calls one address may cause in a burst (default 30); zero turns
    /// the per-address bound off.
    pub calls: u32,
    /// The time in which the budget refills from empty (default 60 s: 30
    /// calls a minute once the burst is spent).
    pub per: Duration,
    /// Calls of one address under way at once (default 4), so that a slow
    /// authorization server cannot let one address hold the
    /// [`MAX_CONCURRENT_INTROSPECTIONS`] calls.
    pub at_once: usize,
    /// Addresses followed at once (default 10 000): when the table is
    /// full of addresses with calls under way or budgets not yet refilled,
    /// a token from a new one is answered 503.
    pub peers: usize,
}

impl Default for PeerBudget {
    fn default() -> Self {
        PeerBudget {
            calls: 30,
            per: Duration::from_secs(60),
            at_once: 4,
            peers: 10_000,
        }
    }
}

/// One address's budget: a token bucket and its calls under way.
struct Bucket {
    left: f64,
    at: Instant,
    running: usize,
}

/// The budgets of the addresses that introspected lately.
struct Peers {
    budget: PeerBudget,
    table: Mutex<HashMap<IpAddr, Bucket>>,
}

impl Peers {
    fn new(budget: PeerBudget) -> Self {
        Peers {
            budget,
            table: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, Bucket>> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The refill rate, in calls per second.
    fn rate(&self) -> f64 {
        f64::from(self.budget.calls) / self.budget.per.as_secs_f64().max(0.001)
    }

    /// Takes one call of `peer`'s budget, or says why not.
    fn take(&self, peer: IpAddr) -> Result<PeerCall<'_>, Rejection> {
        let budget = self.budget;
        let key = crate::peer::key(peer);
        let now = Instant::now();
        let rate = self.rate();
        let full = f64::from(budget.calls);
        let mut table = self.lock();
        if !table.contains_key(&key) && table.len() >= budget.peers.max(1) {
            // Forget the addresses that are back to a full budget.
            table.retain(|_, b| b.running > 0 || b.left + b.at.elapsed().as_secs_f64() * rate < full);
            if table.len() >= budget.peers.max(1) {
                return Err(Rejection::Unavailable(
                    "too many addresses are introspecting tokens (PeerBudget::peers)".into(),
                ));
            }
        }
        let bucket = table.entry(key).or_insert(Bucket {
            left: full,
            at: now,
            running: 0,
        });
        bucket.left = (bucket.left + now.duration_since(bucket.at).as_secs_f64() * rate).min(full);
        bucket.at = now;
        if bucket.running >= budget.at_once.max(1) {
            return Err(Rejection::Unavailable(format!(
                "{key} has {} introspections under way (PeerBudget::at_once)",
                bucket.running
            )));
        }
        if bucket.left < 1.0 {
            return Err(Rejection::Unavailable(format!(
                "{key} spent its introspection budget (PeerBudget: {} per {:?})",
                budget.calls, budget.per
            )));
        }
        bucket.left -= 1.0;
        bucket.running += 1;
        Ok(PeerCall { peers: self, key })
    }
}

/// One call of an address under way; dropping it ends it.
struct PeerCall<'a> {
    peers: &'a Peers,
    key: IpAddr,
}

impl Drop for PeerCall<'_> {
    fn drop(&mut self) {
        if let Some(bucket) = self.peers.lock().get_mut(&self.key) {
            bucket.running = bucket.running.saturating_sub(1);
        }
    }
}

/// Asks the authorization server about each token (RFC 7662), as a client
/// of its own (`client_secret_basic`): the token must be `active`, carry
/// this server's canonical URI in `aud`, not be expired, and (when the
/// issuer is known) come from it. Answers are cached (10 000 tokens, 30 s
/// by default), so a revoked token is refused within that time; the caches
/// keep a token's SHA-256 digest, not the token.
///
/// Tokens it has not seen cost a call to the authorization server, made
/// with this server's credentials, so they are bounded: at most
/// [`MAX_CONCURRENT_INTROSPECTIONS`] calls at once in all, and, for a token
/// whose client address the transport gives
/// ([`TokenVerifier::verify_from`]), a [`PeerBudget`] per address, so that
/// made-up tokens from one address neither flood the authorization server
/// nor hold the calls that other clients' tokens wait for.
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
    /// At most [`MAX_CONCURRENT_INTROSPECTIONS`] calls at once: made-up
    /// tokens cannot turn into a flood of requests to the authorization
    /// server.
    calls: tokio::sync::Semaphore,
    /// What each client address may cause.
    peers: Peers,
    /// How often a stream opened with a token asks again: the cache's time to live.
    recheck: Duration,
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
            calls: tokio::sync::Semaphore::new(MAX_CONCURRENT_INTROSPECTIONS),
            peers: Peers::new(PeerBudget::default()),
            recheck: Duration::from_secs(30),
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
        Self::from_metadata(meta, client_id, client_secret, resource)
    }

    /// [`discover`](Self::discover) with the metadata already fetched.
    pub(crate) fn from_metadata(
        meta: AuthServerMetadata,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
        resource: impl Into<String>,
    ) -> Result<Self, Rejection> {
        let endpoint = meta.introspection_endpoint.ok_or_else(|| {
            Rejection::Unavailable(format!("the metadata of {} has no introspection_endpoint", meta.issuer))
        })?;
        let mut verifier = IntrospectionVerifier::new(endpoint, client_id, client_secret, resource)?;
        verifier.issuer = Some(meta.issuer);
        Ok(verifier)
    }

    /// How many answers are kept, and for how long at most (default 10 000
    /// for 30 s; 0 asks every time, so a revocation counts at once). An
    /// inactive token is refused without asking again for 5 s (not at all
    /// with 0). A stream opened with a token asks again as often (at least
    /// 5 s apart), and ends once the token is refused.
    pub fn cache(mut self, capacity: usize, ttl: Duration) -> Self {
        self.recheck = ttl;
        self.cache = TokenCache::new(capacity, ttl);
        self.refused = TokenCache::new(capacity, ttl.min(Duration::from_secs(5)));
        self
    }

    /// What one client address may cause with tokens not seen before
    /// (default: 30 calls, refilled over a minute, 4 at once; see
    /// [`PeerBudget`]). Behind a proxy every token comes from the proxy's
    /// address, unless the transport is given the client's: raise it there.
    pub fn per_peer(mut self, budget: PeerBudget) -> Self {
        self.peers = Peers::new(budget);
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
        if response.status() == reqwest::StatusCode::BAD_REQUEST {
            return Err(refusal(&self.endpoint, response).await);
        }
        let answer: Map<String, Value> = read_json(&self.endpoint, response).await?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        check_answer(answer, &self.audience, self.issuer.as_deref(), now)
    }
}

/// The token an introspection answer describes (RFC 7662 section 2.2), at
/// `now` (seconds since the epoch): active, a bearer access token (not a
/// refresh token, nor one bound to a key this server cannot check, RFC
/// 9449 and 8705: `cnf`), for `audience`, from `issuer` when one is
/// expected, and within its `nbf` and `exp` (with the clock leeway). A
/// time given as anything but a number is refused: as absent it would make
/// the token last for ever, in the cache and on every stream it opened.
fn check_answer(
    answer: Map<String, Value>,
    audience: &str,
    issuer: Option<&str>,
    now: u64,
) -> Result<AccessToken, Rejection> {
    use super::clip;
    if answer.get("active") != Some(&Value::Bool(true)) {
        return Err(Rejection::Inactive);
    }
    // RFC 7662 leaves the value to RFC 6749's token types; servers also
    // say `access_token` there, or in `token_use`.
    for (field, accepted) in [
        ("token_type", &["bearer", "access_token"][..]),
        ("token_use", &["access_token"][..]),
    ] {
        match answer.get(field) {
            None => {}
            Some(Value::String(kind)) if accepted.iter().any(|a| kind.eq_ignore_ascii_case(a)) => {}
            Some(Value::String(kind)) => return Err(Rejection::NotAccessToken(clip(kind))),
            Some(other) => return Err(Rejection::NotAccessToken(clip(&other.to_string()))),
        }
    }
    if answer.contains_key("cnf") {
        return Err(Rejection::NotAccessToken(
            "a sender-constrained token (cnf), presented as a bearer token".into(),
        ));
    }
    let mut not_before = None;
    for field in ["exp", "nbf", "iat"] {
        let Some(value) = answer.get(field) else { continue };
        let date = super::jwt::numeric_date(value).ok_or_else(|| {
            Rejection::Malformed(format!("{field} is not a NumericDate: {}", clip(&value.to_string())))
        })?;
        if field == "nbf" {
            not_before = Some(date);
        }
    }
    let verified = access_token(answer);
    if verified.subject.is_empty() {
        return Err(Rejection::Malformed(
            "an active token with neither sub nor client_id".into(),
        ));
    }
    if !verified.audience.iter().any(|aud| super::same_resource(aud, audience)) {
        return Err(Rejection::Audience(clip(&verified.audience.join(" "))));
    }
    // The authorization server said active: its clock and ours may differ a little.
    if verified.expires_at.is_some_and(|exp| super::past(exp, now)) {
        return Err(Rejection::Expired);
    }
    if not_before.is_some_and(|nbf| nbf > now.saturating_add(super::CLOCK_LEEWAY_S)) {
        return Err(Rejection::Expired);
    }
    if let (Some(expected), Some(iss)) = (issuer, &verified.issuer) {
        // Compared exactly (RFC 8414 section 3.3), as a JWT's `iss` is.
        if expected != iss {
            return Err(Rejection::Issuer(clip(iss)));
        }
    }
    Ok(verified)
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        self.verify_from(token, None)
    }

    /// The cache's time to live: a token revoked at the authorization
    /// server ends the streams it opened within about twice that.
    fn recheck_every(&self, _token: &str) -> Option<Duration> {
        Some(self.recheck)
    }

    fn verify_from<'a>(&'a self, token: &'a str, peer: Option<IpAddr>) -> VerifyFuture<'a> {
        Box::pin(async move {
            let key = digest(token);
            if let Some(known) = self.cache.get(&key) {
                return Ok(known);
            }
            if self.refused.get(&key).is_some() {
                return Err(Rejection::Inactive);
            }
            // A token not seen: a call to the authorization server, within
            // its address's budget, then among the few at once.
            let _peer_call = match peer {
                Some(peer) if self.peers.budget.calls > 0 => Some(self.peers.take(peer)?),
                _ => None,
            };
            // No endless queue behind a slow server.
            let _one_of_few = tokio::time::timeout(CALL_WAIT, self.calls.acquire())
                .await
                .map_err(|_| Rejection::Unavailable("too many introspection calls waiting".into()))?
                .map_err(|_| Rejection::Unavailable("introspection is shut".into()))?;
            // Another request may have asked about the same token meanwhile.
            if let Some(known) = self.cache.get(&key) {
                return Ok(known);
            }
            if self.refused.get(&key).is_some() {
                return Err(Rejection::Inactive);
            }
            let verified = match self.introspect(token).await {
                Ok(verified) => Arc::new(verified),
                Err(Rejection::Inactive) => {
                    self.refused.put(&key, &(), None);
                    return Err(Rejection::Inactive);
                }
                Err(other) => return Err(other),
            };
            self.cache.put(&key, &verified, verified.expires_at);
            Ok(verified)
        })
    }
}

/// A 400 of the introspection endpoint. RFC 7662 answers a token it does
/// not know `active: false`, but some servers refuse one they cannot
/// introspect (`unsupported_token_type`: oidc-provider's answer for a JWT
/// access token): that token is refused (401), where any other 400 is the
/// server's or this configuration's trouble (503).
async fn refusal(endpoint: &str, mut response: reqwest::Response) -> Rejection {
    const LIMIT: usize = 4096;
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        body.extend_from_slice(&chunk);
        if body.len() >= LIMIT {
            break;
        }
    }
    let error = serde_json::from_slice::<Map<String, Value>>(&body)
        .ok()
        .and_then(|m| m.get("error").and_then(Value::as_str).map(str::to_owned));
    match error.as_deref() {
        Some("unsupported_token_type") => Rejection::Malformed(
            "the authorization server cannot introspect this token (unsupported_token_type)".into(),
        ),
        Some(other) => Rejection::Unavailable(format!("{endpoint}: HTTP 400 {}", super::clip(other))),
        None => Rejection::Unavailable(format!("{endpoint}: HTTP 400")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NOW: u64 = 1_800_000_000;
    const R: &str = "https://mcp.example.com/mcp";

    fn answer(extra: Value) -> Result<AccessToken, Rejection> {
        let mut a = json!({"active": true, "sub": "alice", "aud": R, "exp": NOW + 3600});
        if let (Some(a), Value::Object(extra)) = (a.as_object_mut(), extra) {
            a.extend(extra);
        }
        let Value::Object(a) = a else { unreachable!() };
        check_answer(a, R, Some("https://as.example.com"), NOW)
    }

    #[test]
    fn an_active_bearer_access_token_for_this_resource_is_taken() {
        assert_eq!(answer(json!({})).map(|t| t.subject), Ok("alice".into()));
        for kind in [
            json!({"token_type": "Bearer"}),
            json!({"token_type": "access_token"}),
            json!({"token_use": "access_token"}),
        ] {
            assert!(answer(kind.clone()).is_ok(), "{kind}");
        }
        // Within the clock leeway of its nbf, and with a fractional iat.
        assert!(answer(json!({"nbf": NOW + 10, "iat": NOW as f64 - 0.5})).is_ok());
        assert!(answer(json!({"iss": "https://as.example.com"})).is_ok());
    }

    #[test]
    fn a_refresh_token_or_a_sender_constrained_token_is_not_a_bearer_token() {
        for kind in [
            json!({"token_type": "refresh_token"}),
            json!({"token_type": "DPoP"}),
            json!({"token_type": "N_A"}),
            json!({"token_type": 7}),
            json!({"token_use": "refresh_token"}),
            json!({"cnf": {"jkt": "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"}}),
            json!({"cnf": {"x5t#S256": "bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2"}}),
        ] {
            assert!(
                matches!(answer(kind.clone()), Err(Rejection::NotAccessToken(_))),
                "{kind}"
            );
        }
    }

    #[test]
    fn a_token_not_yet_valid_or_with_times_that_are_not_numbers_is_refused() {
        assert_eq!(answer(json!({"nbf": NOW + 3600})).err(), Some(Rejection::Expired));
        assert_eq!(answer(json!({"exp": NOW - 3600})).err(), Some(Rejection::Expired));
        for bad in [
            json!({"exp": "1600000000"}),
            json!({"exp": null}),
            json!({"nbf": {}}),
            json!({"iat": true}),
        ] {
            assert!(matches!(answer(bad.clone()), Err(Rejection::Malformed(_))), "{bad}");
        }
    }

    #[test]
    fn a_token_of_another_issuer_is_refused_even_one_slash_apart() {
        for other in [
            "https://as.example.com/",
            "https://AS.example.com",
            "https://evil.example.com",
        ] {
            assert_eq!(
                answer(json!({ "iss": other })).err(),
                Some(Rejection::Issuer(other.into())),
                "{other}"
            );
        }
    }

    #[test]
    fn what_the_answer_names_is_clipped_in_the_rejection() {
        let long = "x".repeat(10_000);
        match answer(json!({ "aud": [long.clone(), "https://other.example.com"] })) {
            Err(Rejection::Audience(a)) => assert!(a.chars().count() <= crate::auth::MAX_REFLECTED_LEN + 3, "{a}"),
            other => panic!("{other:?}"),
        }
        match answer(json!({ "iss": long })) {
            Err(Rejection::Issuer(i)) => assert!(i.chars().count() <= crate::auth::MAX_REFLECTED_LEN + 3, "{i}"),
            other => panic!("{other:?}"),
        }
    }

    fn peers(calls: u32, at_once: usize, count: usize) -> Peers {
        Peers::new(PeerBudget {
            calls,
            per: Duration::from_secs(3600),
            at_once,
            peers: count,
        })
    }

    #[test]
    fn a_peer_spends_its_budget_and_others_keep_theirs() {
        let p = peers(3, 10, 100);
        let a = IpAddr::from([10, 0, 0, 1]);
        let b = IpAddr::from([10, 0, 0, 2]);
        for _ in 0..3 {
            assert!(p.take(a).is_ok());
        }
        assert!(matches!(p.take(a), Err(Rejection::Unavailable(_))));
        assert!(p.take(b).is_ok(), "another address has its own budget");
    }

    #[test]
    fn calls_under_way_are_bounded_and_end_with_their_guard() {
        let p = peers(100, 2, 100);
        let a = IpAddr::from([10, 0, 0, 1]);
        let one = p.take(a);
        let two = p.take(a);
        assert!(one.is_ok() && two.is_ok());
        assert!(p.take(a).is_err(), "two at once");
        drop(one);
        assert!(p.take(a).is_ok());
    }

    #[test]
    fn the_table_of_peers_is_bounded() {
        let p = peers(1, 1, 2);
        assert!(p.take(IpAddr::from([10, 0, 0, 1])).is_ok());
        assert!(p.take(IpAddr::from([10, 0, 0, 2])).is_ok());
        assert!(p.take(IpAddr::from([10, 0, 0, 3])).is_err(), "full of spent budgets");
        let x: IpAddr = IpAddr::from([0x2001, 0xdb8, 0, 1, 0, 0, 0, 1]);
        let y: IpAddr = IpAddr::from([0x2001, 0xdb8, 0, 1, 0xffff, 0, 0, 2]);
        assert_eq!(crate::peer::key(x), crate::peer::key(y));
    }
}
