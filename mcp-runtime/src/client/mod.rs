//! Calling MCP servers (the `client` feature): [`Client`] connects to a
//! server over stdio (a child process it spawns, and restarts when it dies)
//! or Streamable HTTP, speaks 2026-07-28 to a server that does and
//! 2025-11-25 to one that does not (told apart with `server/discover`, as the
//! specification's backward-compatibility rules say), and answers the
//! server's asks (elicitation, sampling, roots) with an answerer of yours:
//! as `input_required` rounds at 2026-07-28, as replies to the server's
//! requests at 2025-11-25.
//!
//! ```no_run
//! use mcp_runtime::client::{Calls, Client};
//! use serde_json::json;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let weather = Client::stdio("weather-server", ["--units", "metric"]).connect().await?;
//! for tool in weather.list_tools().await? {
//!     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
//! }
//! let forecast = weather.call_tool("forecast", json!({"city": "Lisbon"})).await?;
//! println!("{}", forecast.text());
//! # drop(weather);
//!
//! let remote = Client::http("https://mcp.example.com/mcp").bearer("a-token").connect().await?;
//! # let _ = remote;
//! # Ok(()) }
//! ```

mod builder;
mod credentials;
mod http;
mod inbox;
mod listen;
pub(crate) use listen::{Backoff, Listening};
mod stdio;

pub use crate::calls::Calls;
pub use builder::ClientBuilder;
use builder::Target;

use crate::error::McpError;
use crate::protocol::{ClientCapabilities, Implementation, LoggingLevel, ServerCapabilities};
pub use inbox::Note;
use inbox::{Inbox, Incoming};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, watch};

/// The protocol revision of the era before 2026-07-28 that the client speaks.
pub const LEGACY_PROTOCOL_VERSION: &str = "2025-11-25";

/// Why a connection to a 2025-11-25 HTTP server ended when the server
/// answered 404 to its session: the next request opens a new session (and
/// the one that got the 404, never served, is sent again on it).
const SESSION_ENDED: &str = "the server no longer knows the session (HTTP 404)";

/// How long `server/discover` may take before the server is taken for a
/// 2025-11-25 one that ignores it.
const DISCOVER_TIMEOUT: Duration = Duration::from_secs(10);

/// What went wrong calling a server.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ClientError {
    /// The server answered with a JSON-RPC error: its code, message and data as sent.
    #[error("{0}")]
    Rpc(McpError),
    /// The server could not be reached, or its transport failed.
    #[error("upstream `{upstream}`: {detail}")]
    Transport {
        /// The server's name.
        upstream: String,
        /// What failed.
        detail: String,
    },
    /// The connection ended (the process exited, the stream closed) while
    /// the request was pending or before it was sent.
    #[error("upstream `{upstream}` is not connected: {why}")]
    Closed {
        /// The server's name.
        upstream: String,
        /// Why it ended.
        why: String,
    },
    /// The server sent something that is not what the protocol says.
    #[error("upstream `{upstream}`: {detail}")]
    Protocol {
        /// The server's name.
        upstream: String,
        /// What was wrong.
        detail: String,
    },
}

impl From<ClientError> for McpError {
    /// A server's own error as it was; a transport failure as -32603 naming
    /// the server, with `data.upstream`.
    fn from(e: ClientError) -> McpError {
        match e {
            ClientError::Rpc(e) => e,
            ClientError::Transport { ref upstream, .. }
            | ClientError::Closed { ref upstream, .. }
            | ClientError::Protocol { ref upstream, .. } => {
                let upstream = upstream.clone();
                McpError::internal(e.to_string()).with_data(json!({ "upstream": upstream }))
            }
        }
    }
}

/// The protocol era a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// 2026-07-28: no handshake, each request carries its version and capabilities.
    Latest,
    /// 2025-11-25: `initialize`, a session, requests from the server.
    Legacy,
}

/// A request from the server: an elicitation, a sampling request or a
/// roots listing (`method` and `params` as the wire carries them).
#[derive(Debug, Clone)]
pub struct Ask {
    /// `elicitation/create`, `sampling/createMessage`, `roots/list`, ...
    pub method: String,
    /// Its params.
    pub params: Value,
    /// The id of this client's request the ask belongs to, where that is
    /// known: the HTTP request whose response stream carried it, or on stdio
    /// the only request in flight.
    pub related: Option<i64>,
}

/// What an answerer returns: the result to send back, or an error.
pub type AskFuture = Pin<Box<dyn Future<Output = Result<Value, McpError>> + Send>>;

/// Answers the server's asks.
pub type Answerer = Arc<dyn Fn(Ask) -> AskFuture + Send + Sync>;

/// A connection to an MCP server. Clones share it; the child process (stdio)
/// ends with the last clone.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("name", &self.inner.name)
            .field("target", &self.inner.target)
            .finish_non_exhaustive()
    }
}

struct Inner {
    name: Arc<str>,
    target: Target,
    info: Implementation,
    capabilities: Mutex<ClientCapabilities>,
    era: Option<Era>,
    timeout: Duration,
    log_level: Option<LoggingLevel>,
    next_id: AtomicI64,
    notes: broadcast::Sender<Note>,
    asks: mpsc::UnboundedSender<Incoming>,
    live: Mutex<Option<Arc<Live>>>,
    answerer: Option<Answerer>,
    /// Bumped at each (re)connection, and when the list-change stream is
    /// opened again on the same one.
    generation: watch::Sender<u64>,
    /// Counts the connections made (a change of `generation` may be one).
    links: std::sync::atomic::AtomicU64,
    /// Held while an HTTP connection whose session ended is opened again.
    reconnecting: tokio::sync::Mutex<()>,
    /// Whether [`Client::listen`] keeps a list-change stream open.
    listening: std::sync::atomic::AtomicBool,
}

/// One connection: its transport, era and what the server said of itself.
struct Live {
    link: Link,
    inbox: Arc<Inbox>,
    era: Era,
    /// The version requests speak (the one `initialize` agreed at 2025-11-25).
    version: String,
    server: Implementation,
    capabilities: ServerCapabilities,
    instructions: Option<String>,
    /// The `x-mcp-header` parameters of each tool listed on this HTTP
    /// connection, by tool name: its calls send them as `Mcp-Param-*`.
    header_params: Mutex<HashMap<String, Vec<crate::headers::HeaderParam>>>,
}

/// A transport: bytes to the server; what comes back goes to the inbox.
enum Link {
    Stdio(stdio::Process),
    Http(http::Session),
}

impl Link {
    async fn send(&self, message: &Value, head: &Head<'_>) -> Result<(), ClientError> {
        match self {
            Link::Stdio(process) => process.send(message).await,
            Link::Http(session) => session.send(message, head).await,
        }
    }

    fn close(&self) {
        match self {
            Link::Stdio(process) => process.kill(),
            Link::Http(session) => session.close(),
        }
    }

    /// Stops reading request `id`'s answer (over HTTP its response stream
    /// closes; a stdio process has one stream for everything).
    fn abandon(&self, id: i64) {
        if let Link::Http(session) = self {
            session.abandon(id);
        }
    }
}

/// What the HTTP transport puts in headers.
pub(crate) struct Head<'a> {
    pub id: Option<i64>,
    pub method: Option<&'a str>,
    /// The tool, prompt, resource or task named (the `Mcp-Name` header).
    pub name: Option<&'a str>,
    pub version: Option<&'a str>,
    /// `Mcp-Param-*` headers: (header name after the prefix, the argument's value).
    pub params: &'a [(String, String)],
}

impl Live {
    /// The `Mcp-Param-*` headers of a call of `tool` with `arguments`: each
    /// `x-mcp-header` parameter the tool's listed schema declares, with the
    /// argument's value as the server compares it (strings as they are,
    /// numbers and booleans as JSON writes them).
    fn param_headers(&self, tool: &str, arguments: Option<&Value>) -> Vec<(String, String)> {
        let declared = self.header_params.lock().unwrap_or_else(|p| p.into_inner());
        let Some(params) = declared.get(tool) else {
            return Vec::new();
        };
        params
            .iter()
            .filter_map(|(path, header)| {
                let value = match crate::headers::argument(arguments?, path)? {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    _ => return None,
                };
                Some((header.clone(), value))
            })
            .collect()
    }

    /// Keeps the `x-mcp-header` parameters of a Streamable HTTP server's
    /// page of `tools/list`, and leaves out of it each tool whose
    /// annotations break the spec's rules ([`learn_header_params`]).
    fn learn_header_params(&self, page: &mut Value) {
        let mut declared = self.header_params.lock().unwrap_or_else(|p| p.into_inner());
        learn_header_params(page, &mut declared);
    }
}

/// Leaves out of a Streamable HTTP server's page of `tools/list` each tool
/// whose `x-mcp-header` annotations break the spec's rules (not a token, on
/// a parameter that is not a primitive, used twice, off the `properties`
/// chains): a client must not list it, since its headers could not be sent
/// as the server checks them. The parameters of the others go in
/// `declared`, by tool. One walk of each tool's schema does both.
fn learn_header_params(page: &mut Value, declared: &mut HashMap<String, Vec<crate::headers::HeaderParam>>) {
    let Some(tools) = page.get_mut("tools").and_then(Value::as_array_mut) else {
        return;
    };
    // The names of the tools left out, forgotten unless a kept one has it too.
    let mut left_out = Vec::new();
    tools.retain(|tool| {
        let name = tool["name"].as_str();
        let kept = match crate::headers::check_declared(&tool["inputSchema"]) {
            Ok(params) => params,
            Err(why) => {
                tracing::warn!(tool = %tool["name"], "a listed tool is left out: {why}");
                left_out.extend(name.map(str::to_owned));
                return false;
            }
        };
        match name {
            Some(name) if kept.is_empty() => {
                declared.remove(name);
            }
            Some(name) => {
                declared.insert(name.to_owned(), kept);
            }
            None => {}
        }
        true
    });
    for name in left_out {
        if !tools.iter().any(|tool| tool["name"] == name.as_str()) {
            declared.remove(&name);
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.link.close();
        self.inbox.close("the client ended the connection");
    }
}

impl Inner {
    fn current(&self) -> Option<Arc<Live>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn set_live(&self, live: Arc<Live>) {
        *self.live.lock().unwrap_or_else(|p| p.into_inner()) = Some(live);
        self.links.fetch_add(1, Ordering::Relaxed);
        self.generation.send_modify(|g| *g = g.wrapping_add(1));
    }

    fn closed(&self, why: String) -> ClientError {
        ClientError::Closed {
            upstream: self.name.to_string(),
            why,
        }
    }

    /// A new connection: the transport, then the era and the handshake.
    async fn open(&self) -> Result<Arc<Live>, ClientError> {
        let inbox = Arc::new(Inbox::new(self.name.clone(), self.notes.clone(), self.asks.clone()));
        let link = match &self.target {
            Target::Stdio(command) => Link::Stdio(stdio::Process::spawn(command, &self.name, inbox.clone())?),
            Target::Http(endpoint) => {
                Link::Http(http::Session::new(endpoint, &self.name, inbox.clone(), self.timeout)?)
            }
        };
        let mut live = Live {
            link,
            inbox,
            era: Era::Latest,
            version: crate::protocol::LATEST_PROTOCOL_VERSION.to_owned(),
            server: Implementation::default(),
            capabilities: ServerCapabilities::default(),
            instructions: None,
            header_params: Mutex::default(),
        };
        if self.era != Some(Era::Legacy) {
            match self.discover(&live).await {
                Ok(found) => {
                    live.server = found.0;
                    live.capabilities = found.1;
                    live.instructions = found.2;
                    return Ok(Arc::new(live));
                }
                Err(e) if self.era == Some(Era::Latest) => return Err(e),
                Err(e) => tracing::debug!(upstream = %self.name, "server/discover: {e}; trying initialize"),
            }
        }
        live.era = Era::Legacy;
        live.version = LEGACY_PROTOCOL_VERSION.to_owned();
        self.initialize(&mut live).await?;
        Ok(Arc::new(live))
    }

    /// `server/discover`: the server's identity and capabilities, if it
    /// speaks 2026-07-28.
    async fn discover(&self, live: &Live) -> Result<(Implementation, ServerCapabilities, Option<String>), ClientError> {
        let result = tokio::time::timeout(
            DISCOVER_TIMEOUT,
            self.exchange(live, "server/discover", json!({}), None),
        )
        .await
        .map_err(|_| self.closed("no answer to server/discover".into()))??;
        let speaks = result["supportedVersions"]
            .as_array()
            .is_some_and(|v| v.iter().any(|v| v == crate::protocol::LATEST_PROTOCOL_VERSION));
        if !speaks {
            return Err(ClientError::Protocol {
                upstream: self.name.to_string(),
                detail: format!("does not speak {}: {result}", crate::protocol::LATEST_PROTOCOL_VERSION),
            });
        }
        let server =
            serde_json::from_value(result["_meta"][crate::protocol::META_SERVER_INFO].clone()).unwrap_or_default();
        let capabilities = serde_json::from_value(result["capabilities"].clone()).unwrap_or_default();
        let instructions = result["instructions"].as_str().map(str::to_owned);
        Ok((server, capabilities, instructions))
    }

    /// The 2025-11-25 handshake: `initialize`, then `notifications/initialized`.
    async fn initialize(&self, live: &mut Live) -> Result<(), ClientError> {
        let mut capabilities = serde_json::to_value(&*self.capabilities.lock().unwrap_or_else(|p| p.into_inner()))
            .unwrap_or_else(|_| json!({}));
        // Extensions are declared per request at 2026-07-28; a legacy
        // session says them once, here, as 2025-11-25 allows.
        if capabilities
            .get("extensions")
            .is_some_and(|e| e.as_object().is_some_and(Map::is_empty))
        {
            capabilities.as_object_mut().map(|c| c.remove("extensions"));
        }
        let params = json!({
            "protocolVersion": LEGACY_PROTOCOL_VERSION,
            "capabilities": capabilities,
            "clientInfo": self.info,
        });
        let result = self.exchange(live, "initialize", params, None).await?;
        let version = result["protocolVersion"]
            .as_str()
            .unwrap_or(LEGACY_PROTOCOL_VERSION)
            .to_owned();
        live.version = version;
        live.server = serde_json::from_value(result["serverInfo"].clone()).unwrap_or_default();
        live.capabilities = serde_json::from_value(result["capabilities"].clone()).unwrap_or_default();
        live.instructions = result["instructions"].as_str().map(str::to_owned);
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let head = Head {
            id: None,
            method: Some("notifications/initialized"),
            name: None,
            version: Some(&live.version),
            params: &[],
        };
        live.link.send(&note, &head).await?;
        if let Link::Http(session) = &live.link {
            session.open_events(&live.version, self.generation.clone());
        }
        if let (Some(level), Some(_)) = (self.log_level, &live.capabilities.logging) {
            self.exchange(live, "logging/setLevel", json!({ "level": level }), None)
                .await?;
        }
        Ok(())
    }

    /// One request on `live`, its params completed for the era; the result
    /// or the server's error.
    async fn exchange(
        &self,
        live: &Live,
        method: &str,
        params: Value,
        progress: Option<i64>,
    ) -> Result<Value, ClientError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.exchange_as(live, id, method, params, progress, Some(self.timeout))
            .await
    }

    /// [`exchange`](Self::exchange) with the request id given, its answer
    /// awaited `within` that long (`None`: for as long as it takes).
    async fn exchange_as(
        &self,
        live: &Live,
        id: i64,
        method: &str,
        params: Value,
        progress: Option<i64>,
        within: Option<Duration>,
    ) -> Result<Value, ClientError> {
        let response = self.send_request(live, id, method, params, progress).await?;
        // A stream that stays open (a listen stream) has no answer to wait for in time.
        let answered = match within.filter(|_| !live.inbox.is_background(id)) {
            None => Ok(response.await),
            Some(within) => tokio::time::timeout(within, response).await,
        };
        match answered {
            Ok(Ok(Ok(mut result))) if method == "tools/list" && matches!(live.link, Link::Http(_)) => {
                live.learn_header_params(&mut result);
                Ok(result)
            }
            Ok(Ok(outcome)) => outcome,
            Ok(Err(_)) => Err(self.closed(live.inbox.closed().unwrap_or_else(|| "the connection ended".into()))),
            Err(_) => {
                self.cancel(live, id, "timed out").await;
                Err(ClientError::Transport {
                    upstream: self.name.to_string(),
                    detail: format!(
                        "no answer to {method} within {} s",
                        within.unwrap_or_default().as_secs()
                    ),
                })
            }
        }
    }

    /// Sends request `id` in the era's envelope; its answer arrives on the
    /// receiver returned.
    async fn send_request(
        &self,
        live: &Live,
        id: i64,
        method: &str,
        params: Value,
        progress: Option<i64>,
    ) -> Result<Answer, ClientError> {
        let mut params = match params {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(ClientError::Rpc(McpError::invalid_params(format!(
                    "params must be an object: {other}"
                ))))
            }
        };
        let mut meta = match params.remove("_meta") {
            Some(Value::Object(meta)) => meta,
            _ => Map::new(),
        };
        if live.era == Era::Latest && method != "initialize" {
            meta.insert(crate::protocol::META_PROTOCOL_VERSION.into(), json!(live.version));
            // Capabilities given with the request (a gateway's caller's) are kept.
            if !meta.contains_key(crate::protocol::META_CLIENT_CAPABILITIES) {
                let caps = serde_json::to_value(&*self.capabilities.lock().unwrap_or_else(|p| p.into_inner()))
                    .unwrap_or_else(|_| json!({}));
                meta.insert(crate::protocol::META_CLIENT_CAPABILITIES.into(), caps);
            }
            meta.insert(crate::protocol::META_CLIENT_INFO.into(), json!(self.info));
        }
        if let Some(token) = progress {
            meta.insert("progressToken".into(), json!(token));
        }
        // The trace the request is part of (a gateway's: its caller's
        // request), unless the caller of this client gave one.
        crate::telemetry::carry_trace(&mut meta);
        if !meta.is_empty() {
            params.insert("_meta".into(), Value::Object(meta));
        }
        let name = match method {
            "tools/call" | "prompts/get" => params.get("name").and_then(Value::as_str),
            "resources/read" => params.get("uri").and_then(Value::as_str),
            "tasks/get" | "tasks/update" | "tasks/cancel" => params.get("taskId").and_then(Value::as_str),
            _ => None,
        }
        .map(str::to_owned);
        let param_headers = match (&live.link, name.as_deref()) {
            (Link::Http(_), Some(tool)) if method == "tools/call" => live.param_headers(tool, params.get("arguments")),
            _ => Vec::new(),
        };
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        // `initialize` goes without a version header: the version is what it agrees.
        let head = Head {
            id: Some(id),
            method: Some(method),
            name: name.as_deref(),
            version: (method != "initialize").then_some(live.version.as_str()),
            params: &param_headers,
        };
        let response = live.inbox.expect(id)?;
        if let Err(e) = live.link.send(&message, &head).await {
            live.inbox.forget(id);
            return Err(e);
        }
        Ok(response)
    }

    /// Tells the server that request `id` is abandoned, the revision's way:
    /// at 2026-07-28 over HTTP its response stream closes; otherwise a
    /// `notifications/cancelled` goes (and over HTTP the stream closes after).
    async fn cancel(&self, live: &Live, id: i64, reason: &str) {
        live.inbox.forget(id);
        if live.era == Era::Legacy || matches!(live.link, Link::Stdio(_)) {
            let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": id, "reason": reason}});
            let head = Head {
                id: None,
                method: Some("notifications/cancelled"),
                name: None,
                version: Some(&live.version),
                params: &[],
            };
            let _ = live.link.send(&note, &head).await;
        }
        live.link.abandon(id);
    }
}

/// Where a request's answer arrives.
type Answer = tokio::sync::oneshot::Receiver<Result<Value, ClientError>>;

/// Keeps a stdio server running: when its process ends, starts it again
/// with backoff (0.5 s, doubling to 30 s; back to 0.5 s after a minute up).
async fn supervise(inner: std::sync::Weak<Inner>) {
    let mut backoff = Backoff::default();
    loop {
        let Some(live) = inner.upgrade().and_then(|i| i.current()) else {
            return;
        };
        let up_since = tokio::time::Instant::now();
        let Link::Stdio(process) = &live.link else {
            return;
        };
        let exited = process.exited();
        drop(live);
        let why = exited.await;
        let Some(strong) = inner.upgrade() else {
            return;
        };
        backoff.ended_after(up_since.elapsed());
        tracing::warn!(upstream = %strong.name, "the server process ended ({why}); starting it again in {} ms", backoff.upcoming().as_millis());
        drop(strong);
        loop {
            tokio::time::sleep(backoff.next()).await;
            let Some(strong) = inner.upgrade() else {
                return;
            };
            match strong.open().await {
                Ok(live) => {
                    tracing::info!(upstream = %strong.name, "the server process is back");
                    strong.set_live(live);
                    break;
                }
                Err(e) => {
                    tracing::warn!(upstream = %strong.name, "cannot start the server again: {e}; next try in {} ms", backoff.upcoming().as_millis())
                }
            }
        }
    }
}

/// Answers the server's asks with the answerer, each in its own task;
/// without one, an ask gets -32601.
async fn answer_asks(
    inner: std::sync::Weak<Inner>,
    mut asks: mpsc::UnboundedReceiver<Incoming>,
    answerer: Option<Answerer>,
) {
    while let Some(Incoming { ask, id }) = asks.recv().await {
        let Some(strong) = inner.upgrade() else {
            return;
        };
        let Some(live) = strong.current() else {
            continue;
        };
        drop(strong);
        let answerer = answerer.clone();
        tokio::spawn(async move {
            let method = ask.method.clone();
            let outcome = match &answerer {
                // A liveness check is the client's to answer, at once
                // (2025-11-25: promptly, with an empty result), not a
                // question for whoever answers the server's asks.
                _ if method == "ping" => Ok(json!({})),
                Some(answer) => crate::panic::run_caught(|| answer(ask))
                    .await
                    .unwrap_or_else(|panic| Err(McpError::internal(format!("the answerer panicked: {panic}")))),
                None => Err(McpError::method_not_found(&method)),
            };
            let reply = match outcome {
                Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": crate::error::WireError::from(&e)}),
            };
            let head = Head {
                id: None,
                method: None,
                name: None,
                version: Some(&live.version),
                params: &[],
            };
            if let Err(e) = live.link.send(&reply, &head).await {
                tracing::debug!("cannot answer the server's {method}: {e}");
            }
        });
    }
}

/// Resolves once the flag is true (or its sender is gone).
async fn until(flag: &mut watch::Receiver<bool>) {
    let _ = flag.wait_for(|set| *set).await.map(|_| ());
}

impl Client {
    /// A server run as a child process, spoken to over its stdin and stdout
    /// (its stderr goes to this process's log, line by line).
    pub fn stdio<I, S>(program: impl Into<String>, args: I) -> ClientBuilder
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let program = program.into();
        let name = std::path::Path::new(&program)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| program.clone());
        let command = stdio::Command {
            program,
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
            dir: None,
        };
        ClientBuilder::new(name, Target::Stdio(command))
    }

    /// A server at a Streamable HTTP endpoint (`https://host/mcp`).
    pub fn http(url: impl Into<String>) -> ClientBuilder {
        let url = url.into();
        // The host and port: never the user and password before them.
        let name = url
            .split("://")
            .nth(1)
            .and_then(|rest| rest.split(['/', '?', '#']).next())
            .map(|authority| authority.rsplit('@').next().unwrap_or(authority))
            .unwrap_or(&url)
            .to_owned();
        ClientBuilder::new(
            name,
            Target::Http(http::Endpoint {
                url,
                headers: Vec::new(),
                grant: None,
            }),
        )
    }

    /// The server's name, as errors give it.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    fn live(&self) -> Result<Arc<Live>, ClientError> {
        self.inner
            .current()
            .ok_or_else(|| self.inner.closed("not connected".into()))
    }

    /// The connection requests go on: an HTTP one whose session the server
    /// ended is opened again first (once, for every request that finds it
    /// ended); `connections` then changes.
    async fn connected(&self) -> Result<Arc<Live>, ClientError> {
        let live = self.live()?;
        if !matches!(live.link, Link::Http(_)) || !live.inbox.closed_for(SESSION_ENDED) {
            return Ok(live);
        }
        let _one = self.inner.reconnecting.lock().await;
        let current = self.live()?;
        if !Arc::ptr_eq(&current, &live) {
            return Ok(current);
        }
        let fresh = self.inner.open().await?;
        tracing::info!(upstream = %self.inner.name, "the server no longer knew the session: a new one is open");
        self.inner.set_live(fresh.clone());
        Ok(fresh)
    }

    /// The era the connection speaks.
    pub fn era(&self) -> Option<Era> {
        self.inner.current().map(|l| l.era)
    }

    /// The protocol version requests speak.
    pub fn protocol_version(&self) -> Option<String> {
        self.inner.current().map(|l| l.version.clone())
    }

    /// What the server said of itself (`serverInfo`).
    pub fn server_info(&self) -> Option<Implementation> {
        self.inner.current().map(|l| l.server.clone())
    }

    /// What the server said it offers.
    pub fn server_capabilities(&self) -> Option<ServerCapabilities> {
        self.inner.current().map(|l| l.capabilities.clone())
    }

    /// The server's instructions for the model, if it gave any.
    pub fn instructions(&self) -> Option<String> {
        self.inner.current().and_then(|l| l.instructions.clone())
    }

    /// Replaces the client capabilities declared from now on (2026-07-28:
    /// with the next request; 2025-11-25: at the next connection).
    pub fn set_capabilities(&self, capabilities: ClientCapabilities) {
        *self.inner.capabilities.lock().unwrap_or_else(|p| p.into_inner()) = capabilities;
    }

    /// Every notification the server sends (list changes, progress, logs),
    /// from now on.
    pub fn notifications(&self) -> broadcast::Receiver<Note> {
        self.inner.notes.subscribe()
    }

    /// Changes at each (re)connection (a stdio server started again), and
    /// each time the list-change stream [`listen`](Self::listen) keeps is
    /// opened again on the same connection (at 2025-11-25, the session's
    /// event stream, when it could not resume where it ended): the
    /// server's lists may differ, and what it said meanwhile went unheard.
    pub fn connections(&self) -> watch::Receiver<u64> {
        self.inner.generation.subscribe()
    }

    /// Which connection is the current one: changes with each new
    /// connection, not when a stream is opened again on the same one.
    pub(crate) fn link(&self) -> u64 {
        self.inner.links.load(Ordering::Relaxed)
    }

    /// One request, its result as the server sent it (an `input_required`
    /// or `task` result is returned as such: [`Calls`] follows them). The
    /// era's envelope (`_meta` at 2026-07-28, the session at 2025-11-25) is
    /// added; a `_meta` in `params` is kept.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        self.request_as(self.next_id(), method, params, None).await
    }

    /// Abandons request `id` (one of [`next_id`](Self::next_id)'s): the
    /// server is told the revision's way (at 2026-07-28 over HTTP, its
    /// response stream closes; otherwise `notifications/cancelled` goes).
    pub(crate) async fn cancel_request(&self, id: i64, reason: &str) {
        if let Some(live) = self.inner.current() {
            self.inner.cancel(&live, id, reason).await;
        }
    }

    /// Whether the server is a child process of this one.
    pub(crate) fn is_stdio(&self) -> bool {
        matches!(self.inner.target, Target::Stdio(_))
    }

    /// How long a request's answer is awaited (`ClientBuilder::timeout`).
    pub(crate) fn timeout(&self) -> Duration {
        self.inner.timeout
    }

    /// A request id no request of this client has used.
    pub(crate) fn next_id(&self) -> i64 {
        self.inner.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// [`request`](Self::request) with the id given (from
    /// [`next_id`](Self::next_id)): the server's asks about it say so in
    /// [`Ask::related`]. A `progress` token asks for progress notifications.
    pub(crate) async fn request_as(
        &self,
        id: i64,
        method: &str,
        params: Value,
        progress: Option<i64>,
    ) -> Result<Value, ClientError> {
        self.request_within(id, method, params, progress, Some(self.inner.timeout))
            .await
    }

    /// [`request_as`](Self::request_as) with its answer awaited `within`
    /// that long instead of the client's timeout (`None`: for as long as it
    /// takes, for a call whose caller bounds it: a gateway's call that waits
    /// for people's answers, or follows a task).
    pub(crate) async fn request_within(
        &self,
        id: i64,
        method: &str,
        params: Value,
        progress: Option<i64>,
        within: Option<Duration>,
    ) -> Result<Value, ClientError> {
        let live = self.connected().await?;
        let again = live.era == Era::Legacy && matches!(live.link, Link::Http(_));
        let kept = again.then(|| params.clone());
        let mut result = match (
            self.inner
                .exchange_as(&live, id, method, params, progress, within)
                .await,
            kept,
        ) {
            // Refused for the session alone: sent again on a new one.
            (Err(ClientError::Closed { why, .. }), Some(params)) if why == SESSION_ENDED => {
                let live = self.connected().await?;
                self.inner
                    .exchange_as(&live, id, method, params, progress, within)
                    .await?
            }
            (outcome, _) => outcome?,
        };
        // Every MCP result is an object: anything else is refused here, not
        // met as a surprise by what reads its fields.
        if !result.is_object() {
            return Err(ClientError::Protocol {
                upstream: self.inner.name.to_string(),
                detail: format!("the result of {method} is not a JSON object"),
            });
        }
        if live.era == Era::Legacy {
            // 2025-11-25 results carry no resultType: they are complete.
            if let Some(object) = result.as_object_mut() {
                object.entry("resultType").or_insert_with(|| json!("complete"));
            }
        }
        Ok(result)
    }

    /// Like [`request`](Self::request), with a progress token: the server's
    /// `notifications/progress` for it arrive among the
    /// [`notifications`](Self::notifications).
    pub async fn request_with_progress(&self, method: &str, params: Value, token: i64) -> Result<Value, ClientError> {
        self.request_as(self.next_id(), method, params, Some(token)).await
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) -> Result<(), ClientError> {
        let live = self.live()?;
        let note = json!({"jsonrpc": "2.0", "method": method, "params": params});
        let head = Head {
            id: None,
            method: Some(method),
            name: None,
            version: Some(&live.version),
            params: &[],
        };
        live.link.send(&note, &head).await
    }
}

impl Calls for Client {
    /// One request. A 2025-11-25 server's tool that runs only as a task
    /// refuses a plain call with -32601: it is called again as a task
    /// (`"task": {}`), and its result awaited with `tasks/result`.
    async fn send(&self, method: &str, params: Value) -> Result<Value, McpError> {
        // Kept for that second call only where one may follow.
        let again = (method == "tools/call"
            && params.get("task").is_none()
            && self.era() == Some(Era::Legacy)
            && self.server_capabilities().is_some_and(|c| c.accepts_tool_tasks()))
        .then(|| params.clone());
        match (self.request(method, params).await, again) {
            (Err(ClientError::Rpc(e)), Some(mut params)) if e.code() == crate::error::ErrorCode::METHOD_NOT_FOUND => {
                params["task"] = json!({});
                let created = self.request(method, params).await?;
                let Some(id) = created["task"]["taskId"].as_str() else {
                    return Err(McpError::from(ClientError::Protocol {
                        upstream: self.inner.name.to_string(),
                        detail: format!("a task-augmented call was not answered with a task: {created}"),
                    }));
                };
                let result = self.request("tasks/result", json!({ "taskId": id })).await?;
                Ok(crate::tasks::legacy::unrelated(result))
            }
            (other, _) => other.map_err(McpError::from),
        }
    }

    /// Answers each ask with the client's answerer (-32601 without one).
    async fn answer(&self, asks: &Value) -> Result<Map<String, Value>, McpError> {
        let mut answers = Map::new();
        for (key, ask) in asks.as_object().into_iter().flatten() {
            let method = ask["method"].as_str().unwrap_or_default().to_owned();
            let Some(answerer) = &self.inner.answerer else {
                return Err(McpError::internal(format!(
                    "upstream `{}` asked {method} ({key}) and this client has no answerer",
                    self.inner.name
                )));
            };
            let ask = Ask {
                method,
                params: ask["params"].clone(),
                related: None,
            };
            answers.insert(key.clone(), answerer(ask).await?);
        }
        Ok(answers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_with_a_bad_header_annotation_is_left_out_of_the_list() {
        let good = json!({"name": "good", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}}});
        let plain = json!({"name": "plain", "inputSchema": {"type": "object"}});
        let mut page = json!({"tools": [
            good,
            {"name": "spaced", "inputSchema": {"type": "object", "properties": {
                "a": {"type": "string", "x-mcp-header": "Has Space"}}}},
            {"name": "under_items", "inputSchema": {"type": "object", "properties": {
                "a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}},
            {"name": "a_number", "inputSchema": {"type": "object", "properties": {
                "a": {"type": "number", "x-mcp-header": "A"}}}},
            plain,
        ]});
        let mut declared = HashMap::from([("spaced".to_owned(), Vec::new()), ("plain".to_owned(), Vec::new())]);
        learn_header_params(&mut page, &mut declared);
        assert_eq!(page["tools"], json!([good, plain]));
        // What the kept tools declare, and nothing of the others (a tool
        // listed again without its headers forgets them).
        let region = vec![(vec!["region".to_owned()], "Region".to_owned())];
        assert_eq!(declared, HashMap::from([("good".to_owned(), region.clone())]));
        // A name listed twice, once with a bad annotation: the one kept
        // keeps its headers.
        let bad = json!({"name": "good", "inputSchema": {"type": "object", "properties": {
            "a": {"type": "number", "x-mcp-header": "A"}}}});
        let mut page = json!({"tools": [good, bad]});
        learn_header_params(&mut page, &mut declared);
        assert_eq!(page["tools"], json!([good]));
        assert_eq!(declared, HashMap::from([("good".to_owned(), region)]));
    }
}
