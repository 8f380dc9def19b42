//! The authorization server's metadata (RFC 8414, or OpenID Connect
//! Discovery), and the HTTP client the verifiers ask it with.

use super::Rejection;
use serde::Deserialize;
use std::time::Duration;

/// What the verifiers read of an authorization server's metadata.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct AuthServerMetadata {
    /// `issuer`: must equal the issuer it was fetched for.
    pub issuer: String,
    /// `jwks_uri`: the signing keys.
    #[serde(default)]
    pub jwks_uri: Option<String>,
    /// `introspection_endpoint` (RFC 7662).
    #[serde(default)]
    pub introspection_endpoint: Option<String>,
}

impl AuthServerMetadata {
    /// Fetches the metadata of `issuer`: RFC 8414's
    /// `/.well-known/oauth-authorization-server` (path-inserted for an
    /// issuer with a path), then OpenID Connect's
    /// `/.well-known/openid-configuration`. The document's `issuer` must be
    /// `issuer` exactly (RFC 8414 section 3.3).
    pub async fn discover(issuer: &str) -> Result<Self, Rejection> {
        let client = client()?;
        let issuer = issuer.trim_end_matches('/');
        let (origin, path) = super::split_origin(issuer)
            .ok_or_else(|| Rejection::Unavailable(format!("issuer {issuer:?} is not an http(s) URL")))?;
        let candidates = [
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{issuer}/.well-known/openid-configuration"),
        ];
        let mut last = String::new();
        for url in candidates {
            match get_json::<AuthServerMetadata>(&client, &url).await {
                Ok(meta) if meta.issuer.trim_end_matches('/') == issuer => return Ok(meta),
                Ok(meta) => last = format!("{url} names the issuer {:?}", meta.issuer),
                Err(e) => last = e.to_string(),
            }
        }
        Err(Rejection::Unavailable(format!(
            "no metadata for issuer {issuer}: {last}"
        )))
    }
}

/// The HTTP client of the verifiers: rustls (ring) for https, timeouts, no
/// redirects (a metadata or key URL that moves is not followed).
pub(crate) fn client() -> Result<reqwest::Client, Rejection> {
    crate::tls::install_provider();
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| Rejection::Unavailable(format!("cannot build the HTTP client: {e}")))
}

/// GETs `url` and parses its JSON body (at most 1 MiB).
pub(crate) async fn get_json<T: serde::de::DeserializeOwned>(
    client: &reqwest::Client,
    url: &str,
) -> Result<T, Rejection> {
    let response = client
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| Rejection::Unavailable(format!("{url}: {e}")))?;
    read_json(url, response).await
}

/// The JSON body of a 200 response (at most 1 MiB).
pub(crate) async fn read_json<T: serde::de::DeserializeOwned>(
    url: &str,
    response: reqwest::Response,
) -> Result<T, Rejection> {
    const LIMIT: usize = 1 << 20;
    let status = response.status();
    if !status.is_success() {
        return Err(Rejection::Unavailable(format!("{url}: HTTP {status}")));
    }
    if response.content_length().is_some_and(|n| n > LIMIT as u64) {
        return Err(Rejection::Unavailable(format!("{url}: the body is over 1 MiB")));
    }
    let mut response = response;
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| Rejection::Unavailable(format!("{url}: {e}")))?
    {
        if body.len().saturating_add(chunk.len()) > LIMIT {
            return Err(Rejection::Unavailable(format!("{url}: the body is over 1 MiB")));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|e| Rejection::Unavailable(format!("{url}: not the expected JSON: {e}")))
}
