//! JWT access tokens (RFC 9068) verified with the issuer's published keys.

use super::cache::{digest, TokenCache};
use super::discovery::{client, get_json, AuthServerMetadata};
use super::{clip, AccessToken, Rejection, TokenVerifier, VerifyFuture};
use base64::Engine as _;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// The signature algorithms a [`JwtVerifier`] may accept. There is no
/// `none` and no HMAC here: a public key can never be used as an HMAC
/// secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum JwtAlgorithm {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    RS256,
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    RS384,
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    RS512,
    /// RSASSA-PSS with SHA-256.
    PS256,
    /// ECDSA on P-256 with SHA-256.
    ES256,
    /// ECDSA on P-384 with SHA-384.
    ES384,
    /// Ed25519.
    EdDSA,
}

impl JwtAlgorithm {
    fn jose(self) -> Algorithm {
        match self {
            JwtAlgorithm::RS256 => Algorithm::RS256,
            JwtAlgorithm::RS384 => Algorithm::RS384,
            JwtAlgorithm::RS512 => Algorithm::RS512,
            JwtAlgorithm::PS256 => Algorithm::PS256,
            JwtAlgorithm::ES256 => Algorithm::ES256,
            JwtAlgorithm::ES384 => Algorithm::ES384,
            JwtAlgorithm::EdDSA => Algorithm::EdDSA,
        }
    }
}

/// The issuer's keys by `kid`.
#[derive(Default)]
struct Keys {
    by_id: HashMap<String, DecodingKey>,
    /// When they were fetched (`None`: never).
    fetched: Option<Instant>,
}

/// Verifies JWT access tokens (RFC 9068) with the keys the issuer publishes
/// at its `jwks_uri`: signature by an allowed algorithm (RS256, ES256 and
/// EdDSA by default), `typ` `at+jwt`, `iss` the issuer, `aud` this
/// server's canonical URI, `exp` and `nbf` with a leeway (30 s). Keys are
/// fetched once, again when a token names an unknown `kid` (at most once
/// per [`refetch_interval`](Self::refetch_interval)), and again when they
/// are older than [`max_key_age`](Self::max_key_age) (10 minutes), so the
/// authorization server can rotate them without a restart here: a key it
/// adds is taken at its first token, one it withdraws stops verifying
/// within that age. Verified tokens are cached (10 000, 5 minutes, never
/// past their `exp`).
///
/// Signatures are checked with the RustCrypto crates (through
/// `jsonwebtoken`): only public-key verification, which the `rsa` crate's
/// timing advisory (about private-key operations) does not concern.
pub struct JwtVerifier {
    issuer: String,
    audience: String,
    jwks_uri: String,
    algorithms: Vec<JwtAlgorithm>,
    leeway: Duration,
    require_at_jwt: bool,
    refetch_interval: Duration,
    max_key_age: Duration,
    keys: RwLock<Arc<Keys>>,
    /// Serializes fetches, and holds when the last one was tried (whether
    /// it worked or not): forged key ids, or an authorization server that
    /// is down, cause at most one fetch per interval.
    fetching: tokio::sync::Mutex<Option<Instant>>,
    http: reqwest::Client,
    cache: TokenCache,
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("jwks_uri", &self.jwks_uri)
            .field("algorithms", &self.algorithms)
            .finish_non_exhaustive()
    }
}

impl JwtVerifier {
    /// A verifier of tokens from `issuer` for `resource` (this server's
    /// canonical URI), with the keys at `jwks_uri` (fetched on first use).
    pub fn new(
        issuer: impl Into<String>,
        resource: impl Into<String>,
        jwks_uri: impl Into<String>,
    ) -> Result<Self, Rejection> {
        Ok(JwtVerifier {
            issuer: issuer.into(),
            audience: resource.into(),
            jwks_uri: jwks_uri.into(),
            algorithms: vec![JwtAlgorithm::RS256, JwtAlgorithm::ES256, JwtAlgorithm::EdDSA],
            leeway: Duration::from_secs(30),
            require_at_jwt: true,
            refetch_interval: Duration::from_secs(30),
            max_key_age: Duration::from_secs(600),
            keys: RwLock::default(),
            fetching: tokio::sync::Mutex::new(None),
            http: client()?,
            cache: TokenCache::new(10_000, Duration::from_secs(300)),
        })
    }

    /// Finds `jwks_uri` in the issuer's metadata (RFC 8414, or OpenID
    /// Connect Discovery) and fetches the keys once.
    pub async fn discover(issuer: &str, resource: impl Into<String>) -> Result<Self, Rejection> {
        let meta = AuthServerMetadata::discover(issuer).await?;
        Self::from_metadata(meta, resource).await
    }

    /// [`discover`](Self::discover) with the metadata already fetched.
    pub(crate) async fn from_metadata(
        meta: AuthServerMetadata,
        resource: impl Into<String>,
    ) -> Result<Self, Rejection> {
        let jwks = meta
            .jwks_uri
            .ok_or_else(|| Rejection::Unavailable(format!("the metadata of {} has no jwks_uri", meta.issuer)))?;
        let verifier = JwtVerifier::new(meta.issuer, resource, jwks)?;
        verifier.refetch().await?;
        *verifier.fetching.lock().await = Some(Instant::now());
        Ok(verifier)
    }

    /// The algorithms accepted (default RS256, ES256, EdDSA).
    pub fn algorithms(mut self, algorithms: &[JwtAlgorithm]) -> Self {
        self.algorithms = algorithms.to_vec();
        self
    }

    /// The clock skew allowed on `exp` and `nbf` (default 30 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Whether the JOSE header's `typ` must be `at+jwt` (RFC 9068; default
    /// `true`). Some authorization servers issue access tokens typed `JWT`.
    pub fn require_access_token_type(mut self, require: bool) -> Self {
        self.require_at_jwt = require;
        self
    }

    /// The shortest time between two key fetches caused by unknown key ids
    /// (default 30 s), so that forged `kid`s cannot make this server hammer
    /// the authorization server. The price: a token under a key rotated in
    /// less than this after the last fetch is refused until the next one.
    pub fn refetch_interval(mut self, interval: Duration) -> Self {
        self.refetch_interval = interval;
        self
    }

    /// How long a fetched key set is used before it is fetched again
    /// (default 10 minutes): a key the authorization server withdraws stops
    /// verifying tokens within this. While the authorization server cannot
    /// be reached, the set it gave last is used (and fetching it is tried
    /// again at most once per [`refetch_interval`](Self::refetch_interval));
    /// while one request fetches it again, the others use the set as it is.
    pub fn max_key_age(mut self, age: Duration) -> Self {
        self.max_key_age = age;
        self
    }

    /// How many verified tokens are kept, and for how long at most
    /// (default 10 000 for 5 minutes; 0 keeps none).
    pub fn cache(mut self, capacity: usize, ttl: Duration) -> Self {
        self.cache = TokenCache::new(capacity, ttl);
        self
    }

    fn keys(&self) -> Arc<Keys> {
        self.keys.read().map(|k| k.clone()).unwrap_or_default()
    }

    /// Fetches the key set now.
    async fn refetch(&self) -> Result<(), Rejection> {
        let set: JwkSet = get_json(&self.http, &self.jwks_uri).await?;
        let mut by_id = HashMap::new();
        for jwk in &set.keys {
            let signing = !matches!(
                jwk.common.public_key_use,
                Some(jsonwebtoken::jwk::PublicKeyUse::Encryption)
            );
            if let (Some(kid), true) = (&jwk.common.key_id, signing) {
                if let Ok(key) = DecodingKey::from_jwk(jwk) {
                    by_id.insert(kid.clone(), key);
                }
            }
        }
        tracing::debug!(jwks = %self.jwks_uri, keys = by_id.len(), "fetched the issuer's keys");
        let keys = Arc::new(Keys {
            by_id,
            fetched: Some(Instant::now()),
        });
        if let Ok(mut slot) = self.keys.write() {
            *slot = keys;
        }
        Ok(())
    }

    /// The key named `kid` in a set younger than `max_key_age`: the set is
    /// fetched again when the key is unknown or the set too old, and the
    /// last fetch was tried long enough ago. A set that could not be
    /// fetched again is used as it is.
    async fn key(&self, kid: &str) -> Result<DecodingKey, Rejection> {
        let fresh = |keys: &Keys| keys.fetched.is_some_and(|at| at.elapsed() < self.max_key_age);
        let keys = self.keys();
        if let (Some(key), true) = (keys.by_id.get(kid), fresh(&keys)) {
            return Ok(key.clone());
        }
        // A known key of a set past its age is used while another request
        // fetches the set again: only that one waits for the authorization
        // server (up to its 10 s timeout when it is unreachable), not every
        // token that arrives meanwhile.
        let mut last_try = match (keys.by_id.get(kid), self.fetching.try_lock()) {
            (_, Ok(last_try)) => last_try,
            (Some(key), Err(_)) => return Ok(key.clone()),
            (None, Err(_)) => self.fetching.lock().await,
        };
        let keys = self.keys();
        let known = keys.by_id.get(kid).cloned();
        if let (Some(key), true) = (&known, fresh(&keys)) {
            return Ok(key.clone());
        }
        let due = last_try.is_none_or(|at| at.elapsed() >= self.refetch_interval);
        if !due {
            return known.ok_or_else(|| Rejection::UnknownKey(clip(kid)));
        }
        *last_try = Some(Instant::now());
        if let Err(e) = self.refetch().await {
            return match known {
                Some(key) => {
                    tracing::warn!(jwks = %self.jwks_uri, "the issuer's keys, older than max_key_age, could not be fetched again; the last ones are used: {e}");
                    Ok(key)
                }
                None => Err(e),
            };
        }
        self.keys()
            .by_id
            .get(kid)
            .cloned()
            .ok_or_else(|| Rejection::UnknownKey(clip(kid)))
    }

    async fn check(&self, token: &str) -> Result<AccessToken, Rejection> {
        let _ = jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER.install_default();
        let alg = header_alg(token)?;
        let allowed = self
            .algorithms
            .iter()
            .map(|a| a.jose())
            .find(|a| format!("{a:?}") == alg);
        let Some(algorithm) = allowed else {
            return Err(Rejection::Algorithm(clip(&alg)));
        };
        let header = jsonwebtoken::decode_header(token).map_err(|e| Rejection::Malformed(clip(&e.to_string())))?;
        if self.require_at_jwt {
            let typ = header.typ.clone().unwrap_or_default();
            let at_jwt = typ.eq_ignore_ascii_case("at+jwt") || typ.eq_ignore_ascii_case("application/at+jwt");
            if !at_jwt {
                return Err(Rejection::NotAccessToken(clip(&typ)));
            }
        }
        let kid = header
            .kid
            .ok_or_else(|| Rejection::Malformed("the token names no key (kid)".into()))?;
        let key = self.key(&kid).await?;
        let mut validation = Validation::new(algorithm);
        validation.set_issuer(&[&self.issuer]);
        // The audience is checked below, its scheme and host without regard to case.
        validation.validate_aud = false;
        validation.leeway = self.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind;
            match e.kind() {
                ErrorKind::ExpiredSignature | ErrorKind::ImmatureSignature => Rejection::Expired,
                ErrorKind::InvalidSignature => Rejection::Signature,
                ErrorKind::InvalidIssuer => Rejection::Issuer(clip(&claim(token, "iss"))),
                ErrorKind::InvalidAudience => Rejection::Audience(clip(&claim(token, "aud"))),
                ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName => Rejection::Algorithm(clip(&alg)),
                _ => Rejection::Malformed(clip(&e.to_string())),
            }
        })?;
        // Bound to a key or certificate (RFC 9449, 8705) whose proof this
        // server does not check: not usable as a bearer token.
        if data.claims.contains_key("cnf") {
            return Err(Rejection::NotAccessToken(
                "a sender-constrained token (cnf), presented as a bearer token".into(),
            ));
        }
        let verified = access_token(data.claims);
        if !verified
            .audience
            .iter()
            .any(|aud| super::same_resource(aud, &self.audience))
        {
            return Err(Rejection::Audience(clip(&verified.audience.join(" "))));
        }
        Ok(verified)
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(async move {
            let key = digest(token);
            if let Some(known) = self.cache.get(&key) {
                return Ok(known);
            }
            let verified = Arc::new(self.check(token).await?);
            self.cache.put(&key, &verified, verified.expires_at);
            Ok(verified)
        })
    }
}

/// The JOSE header's `alg`, read before anything trusts the header.
fn header_alg(token: &str) -> Result<String, Rejection> {
    let mut parts = token.split('.');
    let (Some(head), Some(_), Some(_), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return Err(Rejection::Malformed("not a JWT (three dot-separated parts)".into()));
    };
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(head)
        .map_err(|_| Rejection::Malformed("the JOSE header is not base64url".into()))?;
    let header: Map<String, Value> =
        serde_json::from_slice(&bytes).map_err(|_| Rejection::Malformed("the JOSE header is not JSON".into()))?;
    match header.get("alg") {
        Some(Value::String(alg)) => Ok(alg.clone()),
        _ => Err(Rejection::Malformed("the JOSE header has no alg".into())),
    }
}

/// A claim of an unverified token, for an error message only.
fn claim(token: &str, name: &str) -> String {
    token
        .split('.')
        .nth(1)
        .and_then(|p| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(p).ok())
        .and_then(|b| serde_json::from_slice::<Map<String, Value>>(&b).ok())
        .and_then(|c| c.get(name).cloned())
        .map(|v| match v {
            Value::String(s) => s,
            other => other.to_string(),
        })
        .unwrap_or_default()
}

/// Strings of a claim that is a string or an array of strings.
fn strings(value: Option<&Value>, split_spaces: bool) -> Vec<String> {
    match value {
        Some(Value::String(s)) if split_spaces => s.split_whitespace().map(str::to_owned).collect(),
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect(),
        _ => Vec::new(),
    }
}

/// The token's fields from its claims (or an introspection response).
pub(crate) fn access_token(claims: Map<String, Value>) -> AccessToken {
    let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::to_owned);
    let client_id = text("client_id").or_else(|| text("azp"));
    let mut scopes = strings(claims.get("scope"), true);
    if scopes.is_empty() {
        scopes = strings(claims.get("scp"), true);
    }
    AccessToken {
        subject: text("sub").or_else(|| client_id.clone()).unwrap_or_default(),
        client_id,
        scopes,
        audience: strings(claims.get("aud"), false),
        issuer: text("iss"),
        expires_at: claims.get("exp").and_then(numeric_date),
        claims,
    }
}

/// A NumericDate (RFC 7519 section 2): seconds, which may have a fraction.
/// A fractional `exp` is taken down to its second: as `None` it would
/// outlive the token, in the cache and on every stream it opened.
pub(crate) fn numeric_date(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| {
        let seconds = value.as_f64()?.floor();
        // Saturating casts: a negative date is long past, a huge one far off.
        (seconds.is_finite()).then_some(seconds as u64)
    })
}

#[cfg(test)]
mod tests {
    use super::{access_token, JwtAlgorithm, JwtVerifier};
    use crate::auth::TokenVerifier;
    use base64::Engine as _;
    use serde_json::json;
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A test key (Ed25519, PKCS#8 in base64), made for this test alone.
    const KEY_PKCS8: &str = "MC4CAQAwBQYDK2VwBCIEIAD/rUxua+O4fD7XWchtiljMdS43kHwJo50W9TqKIIv5";
    const KEY_X: &str = "oaAuY42ZfbGOqfUS3bnrtXeUwPhihktF1t8k_8DqDJI";

    /// A key set whose first fetch is answered and every later one held
    /// unanswered, as by an authorization server that went unreachable.
    async fn keys_then_silence() -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/jwks", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let mut held = Vec::new();
            let mut first = true;
            while let Ok((mut conn, _)) = listener.accept().await {
                if !first {
                    held.push(conn);
                    continue;
                }
                first = false;
                let mut buf = [0u8; 4096];
                let _ = conn.read(&mut buf).await;
                let body = json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": KEY_X, "kid": "k1", "alg": "EdDSA"}]})
                    .to_string();
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = conn.write_all(format!("{head}{body}").as_bytes()).await;
            }
        });
        url
    }

    #[tokio::test]
    async fn a_known_key_is_used_while_its_set_is_fetched_again() {
        let _ = jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER.install_default();
        let verifier = std::sync::Arc::new(
            JwtVerifier::new("https://as.test", "https://mcp.test/mcp", keys_then_silence().await)
                .unwrap()
                .algorithms(&[JwtAlgorithm::EdDSA])
                .cache(0, Duration::ZERO)
                .refetch_interval(Duration::ZERO)
                .max_key_age(Duration::from_millis(50)),
        );
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::EdDSA);
        header.kid = Some("k1".into());
        header.typ = Some("at+jwt".into());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        let exp = now.as_secs() + 600;
        let claims = json!({"iss": "https://as.test", "aud": "https://mcp.test/mcp", "sub": "ada", "exp": exp});
        let der = base64::engine::general_purpose::STANDARD.decode(KEY_PKCS8).unwrap();
        let key = jsonwebtoken::EncodingKey::from_ed_der(&der);
        let token = jsonwebtoken::encode(&header, &claims, &key).unwrap();
        verifier.verify(&token).await.expect("verified with the fetched key");
        tokio::time::sleep(Duration::from_millis(100)).await;
        // The set is past its age: this one fetches it again, and waits.
        let fetching = {
            let (verifier, token) = (verifier.clone(), token.clone());
            tokio::spawn(async move { verifier.verify(&token).await.map(drop) })
        };
        tokio::time::sleep(Duration::from_millis(200)).await;
        let started = std::time::Instant::now();
        verifier.verify(&token).await.expect("verified with the known key");
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "waited {:?} behind the fetch",
            started.elapsed()
        );
        fetching.abort();
    }

    #[tokio::test]
    async fn a_jwt_bound_to_a_key_is_not_a_bearer_token() {
        let _ = jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER.install_default();
        let verifier = JwtVerifier::new("https://as.test", "https://mcp.test/mcp", keys_then_silence().await)
            .unwrap()
            .algorithms(&[JwtAlgorithm::EdDSA])
            .cache(0, Duration::ZERO);
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::EdDSA);
        header.kid = Some("k1".into());
        header.typ = Some("at+jwt".into());
        let exp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            + 600;
        let der = base64::engine::general_purpose::STANDARD.decode(KEY_PKCS8).unwrap();
        let key = jsonwebtoken::EncodingKey::from_ed_der(&der);
        let mut claims = json!({"iss": "https://as.test", "aud": "https://mcp.test/mcp", "sub": "ada", "exp": exp});
        let bearer = jsonwebtoken::encode(&header, &claims, &key).unwrap();
        verifier.verify(&bearer).await.expect("a bearer token");
        claims["cnf"] = json!({"jkt": "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"});
        let bound = jsonwebtoken::encode(&header, &claims, &key).unwrap();
        assert!(matches!(
            verifier.verify(&bound).await,
            Err(crate::auth::Rejection::NotAccessToken(_))
        ));
    }

    fn expiry(claims: serde_json::Value) -> Option<u64> {
        let serde_json::Value::Object(map) = claims else {
            return None;
        };
        access_token(map).expires_at
    }

    #[test]
    fn an_expiry_with_a_fraction_is_an_expiry() {
        assert_eq!(expiry(json!({"exp": 1_750_000_000})), Some(1_750_000_000));
        assert_eq!(expiry(json!({"exp": 1_750_000_000.9})), Some(1_750_000_000));
        assert_eq!(expiry(json!({"exp": -5.5})), Some(0));
        assert_eq!(expiry(json!({"exp": 1e300})), Some(u64::MAX));
        assert_eq!(expiry(json!({"exp": "soon"})), None);
        assert_eq!(expiry(json!({})), None);
    }
}
