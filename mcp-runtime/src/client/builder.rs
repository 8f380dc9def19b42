//! How to connect: the server's place ([`Target`]) and the options a
//! [`ClientBuilder`] gathers before [`connect`](ClientBuilder::connect).

use super::{answer_asks, credentials, http, stdio, supervise, Answerer, Ask, Client, ClientError, Era, Inner, Note};
use crate::error::McpError;
use crate::protocol::{ClientCapabilities, Implementation, LoggingLevel};
use serde_json::Value;
use std::future::Future;
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, watch};

/// Where the server is.
#[derive(Debug, Clone)]
pub(super) enum Target {
    Stdio(stdio::Command),
    Http(http::Endpoint),
}

/// How to connect: [`Client::stdio`] or [`Client::http`], then the options
/// and [`connect`](ClientBuilder::connect).
#[must_use = "a builder does nothing until connect()"]
#[derive(Clone)]
pub struct ClientBuilder {
    name: String,
    target: Target,
    info: Implementation,
    capabilities: ClientCapabilities,
    era: Option<Era>,
    answerer: Option<Answerer>,
    timeout: Duration,
    log_level: Option<LoggingLevel>,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("name", &self.name)
            .field("target", &self.target)
            .field("era", &self.era)
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    pub(super) fn new(name: String, target: Target) -> Self {
        ClientBuilder {
            name,
            target,
            info: Implementation {
                name: "mcp-runtime-client".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                ..Default::default()
            },
            capabilities: ClientCapabilities::default(),
            era: None,
            answerer: None,
            timeout: Duration::from_secs(300),
            log_level: None,
        }
    }

    /// The name errors and logs give the server.
    pub(crate) fn upstream_name(&self) -> &str {
        &self.name
    }

    /// Whether the server is a child process.
    pub(crate) fn is_stdio(&self) -> bool {
        matches!(self.target, Target::Stdio(_))
    }

    /// The name errors and logs give the server (default: the program, or the URL's host).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The `clientInfo` sent to the server.
    pub fn client_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info.name = name.into();
        self.info.version = version.into();
        self
    }

    /// The client capabilities declared (an answerer declares nothing by itself).
    pub fn capabilities(mut self, capabilities: ClientCapabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Speak this era only, without probing with `server/discover`.
    pub fn era(mut self, era: Era) -> Self {
        self.era = Some(era);
        self
    }

    /// Answers the server's asks (declare the matching capabilities too).
    pub fn on_ask<F, Fut>(mut self, answer: F) -> Self
    where
        F: Fn(Ask) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, McpError>> + Send + 'static,
    {
        self.answerer = Some(Arc::new(move |ask| Box::pin(answer(ask))));
        self
    }

    /// The log messages wanted from a 2025-11-25 server (`logging/setLevel`
    /// once the session opens, if it offers logging); at 2026-07-28 a request
    /// asks with `_meta` for itself.
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// How long one request may wait for its response (default 300 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// An environment variable of the child process (stdio).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let Target::Stdio(command) = &mut self.target {
            command.env.push((key.into(), value.into()));
        }
        self
    }

    /// The child process's working directory (stdio).
    pub fn current_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        if let Target::Stdio(command) = &mut self.target {
            command.dir = Some(dir.into());
        }
        self
    }

    /// A header sent with every HTTP request.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Target::Http(endpoint) = &mut self.target {
            endpoint.headers.push((name.into(), value.into()));
        }
        self
    }

    /// `Authorization: Bearer <token>` on every HTTP request.
    pub fn bearer(self, token: impl std::fmt::Display) -> Self {
        self.header("authorization", format!("Bearer {token}"))
    }

    /// Gets tokens for the server from the OAuth 2.1 authorization server
    /// `issuer` by the client credentials grant (RFC 6749 §4.4, the client
    /// authenticated with HTTP Basic), for the server's URL as the
    /// resource (RFC 8707) and `scope` when given; the token endpoint is
    /// found in the issuer's metadata. A token is kept until shortly before
    /// it expires, and replaced after the server answers 401. HTTP only.
    pub fn client_credentials(
        mut self,
        issuer: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
        scope: Option<&str>,
    ) -> Self {
        if let Target::Http(endpoint) = &mut self.target {
            endpoint.grant = Some(credentials::Grant {
                issuer: issuer.into(),
                client_id: client_id.into(),
                client_secret: client_secret.into(),
                scope: scope.map(str::to_owned),
            });
        }
        self
    }

    /// Connects: starts the process or reaches the URL, finds the era,
    /// and (2025-11-25) opens the session. A stdio server that exits later
    /// is started again, with backoff from half a second to 30 s.
    pub async fn connect(self) -> Result<Client, ClientError> {
        let (notes, _) = broadcast::channel::<Note>(256);
        let (asks_tx, asks_rx) = mpsc::unbounded_channel();
        let (generation, _) = watch::channel(0u64);
        let inner = Arc::new(Inner {
            name: Arc::from(self.name.as_str()),
            target: self.target,
            info: self.info,
            capabilities: Mutex::new(self.capabilities),
            era: self.era,
            timeout: self.timeout,
            log_level: self.log_level,
            next_id: AtomicI64::new(1),
            notes,
            asks: asks_tx,
            live: Mutex::new(None),
            answerer: self.answerer.clone(),
            generation,
            links: Default::default(),
            reconnecting: tokio::sync::Mutex::new(()),
            listening: Default::default(),
        });
        let live = inner.open().await?;
        inner.set_live(live);
        tokio::spawn(answer_asks(Arc::downgrade(&inner), asks_rx, self.answerer));
        if matches!(inner.target, Target::Stdio(_)) {
            tokio::spawn(supervise(Arc::downgrade(&inner)));
        }
        Ok(Client { inner })
    }
}
