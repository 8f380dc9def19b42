//! An HTTP upstream's own credentials: a static bearer token (a header), or
//! tokens from an OAuth 2.1 authorization server by the client credentials
//! grant, for this server's URL as the resource (RFC 8707), kept until
//! shortly before they expire and fetched again after a 401.

use super::ClientError;
use serde::Deserialize;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// The client credentials grant's settings.
#[derive(Debug, Clone)]
pub(crate) struct Grant {
    pub issuer: String,
    pub client_id: String,
    pub client_secret: String,
    pub scope: Option<String>,
}

/// Tokens of one grant, for one resource.
pub(crate) struct Tokens {
    grant: Grant,
    resource: String,
    upstream: Arc<str>,
    cached: Mutex<Option<(String, Instant)>>,
}

#[derive(Deserialize)]
struct Metadata {
    token_endpoint: String,
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

impl Tokens {
    pub(crate) fn new(grant: Grant, resource: &str, upstream: &Arc<str>) -> Self {
        Tokens {
            grant,
            resource: resource.to_owned(),
            upstream: upstream.clone(),
            cached: Mutex::new(None),
        }
    }

    fn failed(&self, detail: String) -> ClientError {
        ClientError::Transport {
            upstream: self.upstream.to_string(),
            detail: format!("no token from {}: {detail}", self.grant.issuer),
        }
    }

    /// A token that is still good, fetched when there is none.
    pub(crate) async fn token(&self, http: &reqwest::Client) -> Result<String, ClientError> {
        let mut cached = self.cached.lock().await;
        if let Some((token, until)) = cached.as_ref() {
            if Instant::now() < *until {
                return Ok(token.clone());
            }
        }
        let (token, lifetime) = self.fetch(http).await?;
        // Taken for expired a little early, so that none is sent expiring.
        let until = Instant::now()
            + lifetime
                .saturating_sub(Duration::from_secs(30))
                .max(Duration::from_secs(1));
        *cached = Some((token.clone(), until));
        Ok(token)
    }

    /// Forgets the token (the upstream refused it).
    pub(crate) async fn forget(&self) {
        *self.cached.lock().await = None;
    }

    async fn fetch(&self, http: &reqwest::Client) -> Result<(String, Duration), ClientError> {
        let endpoint = self.token_endpoint(http).await?;
        let mut form = vec![
            ("grant_type", "client_credentials"),
            ("resource", self.resource.as_str()),
        ];
        if let Some(scope) = &self.grant.scope {
            form.push(("scope", scope));
        }
        let response = http
            .post(&endpoint)
            .basic_auth(&self.grant.client_id, Some(&self.grant.client_secret))
            .form(&form)
            .timeout(Duration::from_secs(10))
            .send()
            .await
            .map_err(|e| self.failed(e.to_string()))?;
        let status = response.status();
        let body = response.text().await.map_err(|e| self.failed(e.to_string()))?;
        if !status.is_success() {
            let body: String = body.chars().take(200).collect();
            return Err(self.failed(format!("HTTP {status}: {body}")));
        }
        let answer: TokenResponse =
            serde_json::from_str(&body).map_err(|e| self.failed(format!("the token response does not read: {e}")))?;
        Ok((
            answer.access_token,
            // At most a day: whatever the server says, a token is asked for again by then.
            Duration::from_secs(answer.expires_in.unwrap_or(300).min(86_400)),
        ))
    }

    /// The issuer's token endpoint, from its metadata (RFC 8414, else OpenID Connect discovery).
    async fn token_endpoint(&self, http: &reqwest::Client) -> Result<String, ClientError> {
        let issuer = self.grant.issuer.trim_end_matches('/');
        let mut last = String::new();
        for well_known in ["oauth-authorization-server", "openid-configuration"] {
            let url = format!("{issuer}/.well-known/{well_known}");
            match http.get(&url).timeout(Duration::from_secs(10)).send().await {
                Ok(r) if r.status().is_success() => {
                    let text = r.text().await.unwrap_or_default();
                    match serde_json::from_str::<Metadata>(&text) {
                        Ok(metadata) => return Ok(metadata.token_endpoint),
                        Err(e) => last = format!("{url}: {e}"),
                    }
                }
                Ok(r) => last = format!("{url}: HTTP {}", r.status()),
                Err(e) => last = format!("{url}: {e}"),
            }
        }
        Err(self.failed(format!("no metadata ({last})")))
    }
}
