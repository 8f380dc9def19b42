//! Testing a server in process: [`TestClient`] sends 2026-07-28 requests
//! straight to the dispatcher (no transport, no port), answers the server's
//! asks with closures the test gives, and captures the notifications the
//! requests send.
//!
//! ```
//! use mcp_runtime::prelude::*;
//! use mcp_runtime::testing::TestClient;
//!
//! /// A name.
//! #[mcp_runtime::form]
//! struct Name {
//!     /// Your name.
//!     name: String,
//! }
//!
//! /// Greets whoever answers.
//! #[tool]
//! fn hello(input: Input) -> Flow<String> {
//!     let name = input.elicit::<Name>("who", "Who are you?")?.accepted().map(|n| n.name);
//!     Ok(format!("Hello, {}!", name.unwrap_or_default()))
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = Server::builder().build().unwrap();
//! let client = TestClient::new(&server)
//!     .on_elicit(|_params| serde_json::json!({"action": "accept", "content": {"name": "Ada"}}));
//! let result = client.call_tool("hello", serde_json::json!({})).await.unwrap();
//! assert_eq!(result.text(), "Hello, Ada!");
//! assert_eq!(client.rounds(), 1);
//! # }
//! ```

use crate::calls::{error_of, Calls};
use crate::dispatch::{handle_request, Reply, Scope};
use crate::error::McpError;
use crate::jsonrpc::{self, Message};
use crate::protocol::{
    CallToolResult, ContentBlock, GetPromptResult, LoggingLevel, Prompt, ReadResourceResult, Resource,
    ResourceTemplate, Tool, TASKS_EXTENSION,
};
use crate::server::Server;
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

type Answerer = Arc<dyn Fn(&Value) -> Value + Send + Sync>;

/// A client of a [`Server`] in the same process, speaking 2026-07-28 (or
/// 2025-11-25, with [`legacy`](TestClient::legacy)). Each answer closure
/// receives the ask's `params` and returns the client's result (for an
/// elicitation, `{"action": "accept", "content": {...}}`); declaring one
/// declares the matching client capability.
#[derive(Clone)]
pub struct TestClient {
    server: Server,
    next_id: Arc<AtomicI64>,
    rounds: Arc<AtomicU32>,
    notifications: Arc<Mutex<Vec<Value>>>,
    elicit: Option<Answerer>,
    sample: Option<Answerer>,
    roots: Option<Answerer>,
    tasks: bool,
    apps: bool,
    progress: bool,
    log_level: Option<LoggingLevel>,
    principal: Option<String>,
    /// `Some` for a 2025-11-25 client: its session over an in-memory stdio
    /// stream, opened by the first request.
    legacy: Option<Arc<tokio::sync::Mutex<Option<Legacy>>>>,
    /// Wakes whoever waits for a notification.
    noted: Arc<tokio::sync::Notify>,
    /// The open `subscriptions/listen` streams, ended with the last clone.
    listens: Arc<Listens>,
}

/// The cancellation of each open listen stream, cancelled on drop.
#[derive(Default)]
struct Listens(Mutex<Vec<crate::cancel::Cancellation>>);

impl Drop for Listens {
    fn drop(&mut self) {
        for cancel in self.0.lock().unwrap_or_else(|p| p.into_inner()).drain(..) {
            cancel.cancel();
        }
    }
}

/// A 2025-11-25 session with the server over an in-memory stdio stream.
struct Legacy {
    to_server: tokio::io::DuplexStream,
    from_server: tokio::io::Lines<tokio::io::BufReader<tokio::io::DuplexStream>>,
}

impl Legacy {
    async fn send(&mut self, message: &Value) -> Result<(), McpError> {
        use tokio::io::AsyncWriteExt;
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.to_server
            .write_all(&line)
            .await
            .map_err(|e| McpError::internal(format!("the server's stdin closed: {e}")))
    }

    async fn recv(&mut self) -> Result<Value, McpError> {
        let line = tokio::time::timeout(std::time::Duration::from_secs(30), self.from_server.next_line())
            .await
            .map_err(|_| McpError::internal("the server said nothing for 30 s"))?
            .map_err(|e| McpError::internal(e.to_string()))?
            .ok_or_else(|| McpError::internal("the server closed its stdout"))?;
        serde_json::from_str(&line).map_err(|e| McpError::internal(format!("not JSON from the server: {e}: {line}")))
    }
}

impl std::fmt::Debug for TestClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestClient")
            .field("server", &self.server)
            .field("rounds", &self.rounds())
            .finish_non_exhaustive()
    }
}

// The test client's methods are compiled in the test's crate, where they are
// polled: the dispatcher's futures they wait for are boxed, or spawned, here,
// so that they are compiled with this crate (see `crate::boxed::BoxFuture`).

/// One request's future, boxed here.
#[inline(never)]
fn request_boxed<'a>(
    server: &'a Server,
    request: &'a jsonrpc::Request,
    scope: Scope,
) -> crate::boxed::BoxFuture<'a, Reply> {
    Box::pin(handle_request(server, request, scope))
}

/// One request, on a task of its own.
#[inline(never)]
fn spawn_request(server: Server, request: jsonrpc::Request, scope: Scope) -> tokio::task::JoinHandle<Reply> {
    tokio::spawn(async move { handle_request(&server, &request, scope).await })
}

/// A 2025-11-25 session's server side, over in-memory streams, on a task of its own.
#[inline(never)]
fn spawn_stdio(server: Server, reader: tokio::io::DuplexStream, writer: tokio::io::DuplexStream) {
    tokio::spawn(crate::transport::stdio::serve_io(server, reader, writer));
}

/// Adds a notification to the captured ones and wakes the waiters.
fn capture(captured: &Mutex<Vec<Value>>, noted: &tokio::sync::Notify, note: Value) {
    captured.lock().unwrap_or_else(|p| p.into_inner()).push(note);
    noted.notify_waiters();
}

/// The text of a tool result's text blocks, joined by newlines.
impl CallToolResult {
    /// Every text block's text, joined by newlines.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl TestClient {
    /// A client of `server` declaring no capability.
    pub fn new(server: &Server) -> Self {
        TestClient {
            server: server.clone(),
            next_id: Arc::new(AtomicI64::new(1)),
            rounds: Arc::new(AtomicU32::new(0)),
            notifications: Arc::default(),
            elicit: None,
            sample: None,
            roots: None,
            tasks: false,
            apps: false,
            progress: false,
            log_level: None,
            principal: None,
            legacy: None,
            noted: Arc::default(),
            listens: Arc::default(),
        }
    }

    /// Speaks 2025-11-25 instead: a session opened with `initialize` over an
    /// in-memory stdio stream, asks arriving as server-to-client requests
    /// (answered by the same closures), `logging/setLevel` for the log level.
    pub fn legacy(mut self) -> Self {
        self.legacy = Some(Arc::default());
        self
    }

    /// Answers elicitations with `answer` (and declares `elicitation`).
    pub fn on_elicit(mut self, answer: impl Fn(&Value) -> Value + Send + Sync + 'static) -> Self {
        self.elicit = Some(Arc::new(answer));
        self
    }

    /// Answers sampling requests with `answer` (and declares `sampling`).
    pub fn on_sample(mut self, answer: impl Fn(&Value) -> Value + Send + Sync + 'static) -> Self {
        self.sample = Some(Arc::new(answer));
        self
    }

    /// Answers `roots/list` with `answer` (and declares `roots`).
    pub fn on_roots(mut self, answer: impl Fn(&Value) -> Value + Send + Sync + 'static) -> Self {
        self.roots = Some(Arc::new(answer));
        self
    }

    /// Declares the tasks extension: a task tool's call becomes a task, which
    /// [`call_tool`](Self::call_tool) follows to its end.
    pub fn with_tasks(mut self) -> Self {
        self.tasks = true;
        self
    }

    /// Declares that it renders MCP Apps (the `io.modelcontextprotocol/ui`
    /// extension with the app MIME type): it is listed app-only tools, the
    /// tools' `_meta.ui` and the views.
    pub fn rendering_apps(mut self) -> Self {
        self.apps = true;
        self
    }

    /// Asks for progress notifications (a `progressToken` on every request).
    pub fn with_progress(mut self) -> Self {
        self.progress = true;
        self
    }

    /// Asks for log notifications at `level` and above.
    pub fn with_log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Sends requests as this authenticated principal.
    pub fn as_principal(mut self, principal: impl Into<String>) -> Self {
        self.principal = Some(principal.into());
        self
    }

    /// How many `input_required` rounds (and task asks) were answered so far.
    pub fn rounds(&self) -> u32 {
        self.rounds.load(Ordering::Relaxed)
    }

    /// The notifications received so far, oldest first: those the requests
    /// sent (progress, logs), and the list changes and resource updates
    /// heard after [`listen`](Self::listen).
    pub fn notifications(&self) -> Vec<Value> {
        self.notifications.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn capture(&self, note: Value) {
        capture(&self.notifications, &self.noted, note);
    }

    /// Listens for changes: list changes of tools, prompts and resources,
    /// and updates of the resources in `uris`, join
    /// [`notifications`](Self::notifications) as the server announces them.
    /// Returns once the server acknowledged the `subscriptions/listen`
    /// stream (2026-07-28), or once the session is open (2025-11-25, where
    /// list changes come by themselves and each URI is a
    /// `resources/subscribe`). The stream ends with the client's last clone.
    pub async fn listen(&self, uris: &[&str]) -> Result<(), McpError> {
        if self.legacy.is_some() {
            self.request("ping", json!({})).await?;
            for uri in uris {
                self.request("resources/subscribe", json!({"uri": uri})).await?;
            }
            return Ok(());
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut notifications =
            json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true});
        if !uris.is_empty() {
            notifications["resourceSubscriptions"] = json!(uris);
        }
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": crate::protocol::LATEST_PROTOCOL_VERSION,
            "io.modelcontextprotocol/clientCapabilities": self.capabilities(),
        });
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
            "params": {"notifications": notifications, "_meta": meta}});
        let Ok(Message::Request(request)) = jsonrpc::parse(body.to_string().as_bytes()) else {
            return Err(McpError::internal("cannot send subscriptions/listen"));
        };
        let (outbound, mut notes) = crate::outbound::stream();
        let cancel = crate::cancel::Cancellation::new();
        self.listens
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(cancel.clone());
        let scope = Scope {
            outbound: Some(outbound),
            cancel,
            principal: self.principal.clone(),
            ..Scope::default()
        };
        let server = self.server.clone();
        let mut stream = spawn_request(server, request, scope);
        // The acknowledgement comes first; anything else means no stream.
        let first = tokio::select! {
            note = notes.recv() => note,
            reply = &mut stream => {
                let body = reply.map(|r| String::from_utf8_lossy(&r.body).into_owned()).unwrap_or_default();
                return Err(McpError::internal(format!("subscriptions/listen ended at once: {body}")));
            }
        };
        let ack: Value = serde_json::from_slice(&first).unwrap_or_default();
        if ack["method"] != "notifications/subscriptions/acknowledged" {
            stream.abort();
            return Err(McpError::internal(format!(
                "subscriptions/listen was not acknowledged: {ack}"
            )));
        }
        let (captured, noted) = (self.notifications.clone(), self.noted.clone());
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    note = notes.recv() => {
                        if let Ok(v) = serde_json::from_slice(&note) {
                            capture(&captured, &noted, v);
                        }
                    }
                    _ = &mut stream => return,
                }
            }
        });
        Ok(())
    }

    /// Waits (at most 10 s) until the captured notifications hold at least
    /// `count` with `method`, and returns those. On a 2025-11-25 session it
    /// reads what the server sent between requests.
    pub async fn wait_for_notifications(&self, method: &str, count: usize) -> Result<Vec<Value>, McpError> {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let noted = self.noted.notified();
            let found: Vec<Value> = self
                .notifications()
                .into_iter()
                .filter(|n| n["method"] == method)
                .collect();
            if found.len() >= count {
                return Ok(found);
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(McpError::internal(format!(
                    "{} of {count} {method} notification(s) after 10 s",
                    found.len()
                )));
            }
            match &self.legacy {
                Some(conn) => {
                    let wait = std::time::Duration::from_millis(50);
                    let mut guard = conn.lock().await;
                    let line = match guard.as_mut() {
                        Some(session) => tokio::time::timeout(wait, session.from_server.next_line()).await,
                        None => Ok(Ok(None)),
                    };
                    match line {
                        Ok(Ok(Some(line))) => {
                            if let (Ok(message), Some(session)) = (serde_json::from_str::<Value>(&line), guard.as_mut())
                            {
                                self.on_legacy_message(session, message).await?;
                            }
                        }
                        // Timed out: read again. No session yet, or its end: wait, then look again.
                        Err(_) => {}
                        Ok(_) => {
                            drop(guard);
                            tokio::time::sleep(wait).await;
                        }
                    }
                }
                None => {
                    let _ = tokio::time::timeout_at(deadline, noted).await;
                }
            }
        }
    }

    fn capabilities(&self) -> Value {
        let mut caps = Map::new();
        if self.elicit.is_some() {
            caps.insert("elicitation".into(), json!({"form": {}, "url": {}}));
        }
        if self.sample.is_some() {
            caps.insert("sampling".into(), json!({}));
        }
        if self.roots.is_some() {
            caps.insert("roots".into(), json!({}));
        }
        let mut extensions = Map::new();
        if self.tasks {
            extensions.insert(TASKS_EXTENSION.into(), json!({}));
        }
        if self.apps {
            let ui = json!({ "mimeTypes": [crate::protocol::APP_MIME_TYPE] });
            extensions.insert(crate::protocol::UI_EXTENSION.into(), ui);
        }
        if !extensions.is_empty() {
            caps.insert("extensions".into(), Value::Object(extensions));
        }
        Value::Object(caps)
    }

    /// Sends one request and returns its result as JSON (no MRTR loop).
    /// Entries of a `_meta` in `params` join the ones the client sends.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, McpError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut params = match params {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => return Err(McpError::invalid_params(format!("params must be an object: {other}"))),
        };
        let mut meta = json!({
            "io.modelcontextprotocol/protocolVersion": crate::protocol::LATEST_PROTOCOL_VERSION,
            "io.modelcontextprotocol/clientCapabilities": self.capabilities(),
            "io.modelcontextprotocol/clientInfo": {"name": "test-client", "version": env!("CARGO_PKG_VERSION")},
        });
        if self.progress {
            meta["progressToken"] = json!(id);
        }
        if let Some(level) = self.log_level {
            meta["io.modelcontextprotocol/logLevel"] = serde_json::to_value(level).unwrap_or_default();
        }
        // The test's own `_meta` entries (a `traceparent`, say) join ours.
        let extra = match params.remove("_meta") {
            Some(Value::Object(extra)) => extra,
            _ => Map::new(),
        };
        if let Some(conn) = &self.legacy {
            let mut legacy_meta = extra;
            if self.progress {
                legacy_meta.insert("progressToken".into(), json!(id));
            }
            if !legacy_meta.is_empty() {
                params.insert("_meta".into(), Value::Object(legacy_meta));
            }
            return self.legacy_request(conn, id, method, params).await;
        }
        if let Some(meta) = meta.as_object_mut() {
            meta.extend(extra);
        }
        params.insert("_meta".into(), meta);
        let bytes = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        let Ok(Message::Request(request)) = jsonrpc::parse(bytes.as_bytes()) else {
            return Err(McpError::invalid_request(format!("cannot send {method}")));
        };
        let (outbound, mut notes) = crate::outbound::stream();
        let scope = Scope {
            outbound: Some(outbound),
            principal: self.principal.clone(),
            ..Scope::default()
        };
        let reply = request_boxed(&self.server, &request, scope).await;
        for note in notes.drain() {
            if let Ok(v) = serde_json::from_slice(&note) {
                self.capture(v);
            }
        }
        let mut response: Value = serde_json::from_slice(&reply.body).map_err(|e| McpError::internal(e.to_string()))?;
        if let Some(error) = response.get("error") {
            return Err(error_of(error));
        }
        Ok(response["result"].take())
    }

    /// One request of the 2025-11-25 session: server-to-client requests on
    /// the way are answered, notifications captured.
    async fn legacy_request(
        &self,
        conn: &tokio::sync::Mutex<Option<Legacy>>,
        id: i64,
        method: &str,
        params: Map<String, Value>,
    ) -> Result<Value, McpError> {
        let mut guard = conn.lock().await;
        if guard.is_none() {
            *guard = Some(self.open_legacy().await?);
        }
        let Some(session) = guard.as_mut() else {
            return Err(McpError::internal("no session"));
        };
        session
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        loop {
            let mut message = session.recv().await?;
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                if let Some(error) = message.get("error") {
                    return Err(error_of(error));
                }
                let mut result = message["result"].take();
                // 2025-11-25 results have no resultType: read them as complete ones.
                if let Some(object) = result.as_object_mut() {
                    object.entry("resultType").or_insert_with(|| json!("complete"));
                }
                return Ok(result);
            }
            self.on_legacy_message(session, message).await?;
        }
    }

    /// A message of the 2025-11-25 session that is not the awaited
    /// response: a server-to-client request, answered by the test's
    /// closures, or a notification, captured.
    async fn on_legacy_message(&self, session: &mut Legacy, message: Value) -> Result<(), McpError> {
        match (message.get("id").cloned(), message["method"].as_str()) {
            (Some(ask_id), Some(ask)) => {
                let mut asks = Map::new();
                asks.insert("ask".into(), json!({"method": ask, "params": message["params"]}));
                let reply = match self.answer(&Value::Object(asks)) {
                    Ok(mut answers) => {
                        json!({"jsonrpc": "2.0", "id": ask_id, "result": answers.remove("ask").unwrap_or_default()})
                    }
                    Err(e) => {
                        json!({"jsonrpc": "2.0", "id": ask_id, "error": {"code": -32601, "message": e.message()}})
                    }
                };
                session.send(&reply).await
            }
            (None, Some(_)) => {
                self.capture(message);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Starts the server on an in-memory stdio stream and opens the session.
    async fn open_legacy(&self) -> Result<Legacy, McpError> {
        let (client_w, server_r) = tokio::io::duplex(1 << 20);
        let (server_w, client_r) = tokio::io::duplex(1 << 20);
        spawn_stdio(self.server.clone(), server_r, server_w);
        let mut session = Legacy {
            to_server: client_w,
            from_server: tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(client_r)),
        };
        let mut caps = self.capabilities();
        if let Some(object) = caps.as_object_mut() {
            // That revision's tasks are its own (`tasks` in `initialize`);
            // the Apps extension is declared there as here.
            if let Some(extensions) = object.get_mut("extensions").and_then(Value::as_object_mut) {
                extensions.remove(TASKS_EXTENSION);
                if extensions.is_empty() {
                    object.remove("extensions");
                }
            }
            if object.contains_key("elicitation") {
                object.insert("elicitation".into(), json!({}));
            }
        }
        session
            .send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": caps,
                "clientInfo": {"name": "test-client", "version": env!("CARGO_PKG_VERSION")}}}))
            .await?;
        let init = session.recv().await?;
        if let Some(error) = init.get("error") {
            return Err(error_of(error));
        }
        session
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        if let Some(level) = self.log_level {
            session
                .send(&json!({"jsonrpc": "2.0", "id": -1, "method": "logging/setLevel", "params": {"level": level}}))
                .await?;
            session.recv().await?;
        }
        Ok(session)
    }

    /// Answers every ask of an `inputRequests` map with the test's closures.
    fn answer(&self, asks: &Value) -> Result<Map<String, Value>, McpError> {
        let mut answers = Map::new();
        for (key, ask) in asks.as_object().into_iter().flatten() {
            let method = ask["method"].as_str().unwrap_or_default();
            let answerer = match method {
                "elicitation/create" => &self.elicit,
                "sampling/createMessage" => &self.sample,
                "roots/list" => &self.roots,
                _ => &None,
            };
            let answerer = answerer.as_ref().ok_or_else(|| {
                McpError::internal(format!(
                    "the server asked {method} ({key}) and the test client has no answer for it"
                ))
            })?;
            answers.insert(key.clone(), answerer(&ask["params"]));
        }
        self.rounds.fetch_add(1, Ordering::Relaxed);
        Ok(answers)
    }

    /// Calls a tool: answers its asks, follows its task (with
    /// [`with_tasks`](Self::with_tasks)) to the end, and returns its result.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, McpError> {
        Calls::call_tool(self, name, arguments).await
    }

    /// Reads a resource, answering its asks.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, McpError> {
        Calls::read_resource(self, uri).await
    }

    /// Gets a prompt with its arguments, answering its asks.
    pub async fn get_prompt(&self, name: &str, arguments: Value) -> Result<GetPromptResult, McpError> {
        Calls::get_prompt(self, name, arguments).await
    }

    /// Completion values for an argument: `reference` is `{"type": "ref/prompt", "name": ..}`
    /// or `{"type": "ref/resource", "uri": ..}`.
    pub async fn complete(&self, reference: Value, argument: &str, value: &str) -> Result<Vec<String>, McpError> {
        Calls::complete(self, reference, argument, value).await
    }

    /// Every tool, all pages.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, McpError> {
        Calls::list_tools(self).await
    }

    /// Every static resource, all pages.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, McpError> {
        Calls::list_resources(self).await
    }

    /// Every resource template, all pages.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, McpError> {
        Calls::list_resource_templates(self).await
    }

    /// Every prompt, all pages.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, McpError> {
        Calls::list_prompts(self).await
    }
}

/// The typed calls, on the test client's requests and answers.
impl Calls for TestClient {
    async fn send(&self, method: &str, params: Value) -> Result<Value, McpError> {
        self.request(method, params).await
    }

    async fn answer(&self, asks: &Value) -> Result<Map<String, Value>, McpError> {
        TestClient::answer(self, asks)
    }
}
