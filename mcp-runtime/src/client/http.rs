//! A server at a Streamable HTTP endpoint: each message is a POST; a
//! request's answer is a JSON body or an event stream that may carry the
//! server's notifications and (2025-11-25) its requests before the response.
//! A 2025-11-25 session keeps the `Mcp-Session-Id` the server gave and
//! listens on a GET stream for what the server sends unasked. A stream
//! whose events have ids is resumed after it ends (a GET with
//! `Last-Event-ID`), as a 2025-11-25 server that closes a request's stream
//! before the answer expects (SSE polling).

use super::credentials::{Grant, Tokens};
use super::inbox::Inbox;
use super::{ClientError, Head};
use crate::error::McpError;
use base64::Engine;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

/// The most one response body (or one event) may hold: 64 MiB.
const MAX_BODY: usize = 64 << 20;

/// How long to wait before resuming a stream when the server named no
/// `retry`.
const RESUME_DELAY: Duration = Duration::from_secs(1);

/// The longest `retry` of a server honored.
const MAX_RESUME_DELAY: Duration = Duration::from_secs(30);

/// Resumptions of a request's stream in a row that bring no new event,
/// after which the request fails.
const MAX_RESUMES: u32 = 5;

/// Where the server is, and the headers every request carries.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    pub url: String,
    pub headers: Vec<(String, String)>,
    /// Tokens by the client credentials grant, if the upstream wants them.
    pub grant: Option<Grant>,
}

/// The HTTP side of one connection.
pub(crate) struct Session {
    shared: Arc<Shared>,
}

struct Shared {
    http: reqwest::Client,
    endpoint: Endpoint,
    upstream: Arc<str>,
    inbox: Arc<Inbox>,
    /// The 2025-11-25 session the server opened, if any.
    session: Mutex<Option<String>>,
    closed: watch::Sender<bool>,
    tokens: Option<Tokens>,
    /// The requests whose answers are being read, by id: abandoning one
    /// closes its response stream.
    reading: Mutex<std::collections::HashMap<i64, tokio::task::AbortHandle>>,
    /// How long a notification or response waits for the server to take it.
    message_wait: Duration,
}

/// The longest a notification or response waits for the server's 202.
const MESSAGE_WAIT: Duration = Duration::from_secs(30);

impl Session {
    /// A session of `endpoint`; a message that is not a request waits at
    /// most `timeout` (the client's request timeout), and at most 30 s, for
    /// the server to take it.
    pub(crate) fn new(
        endpoint: &Endpoint,
        upstream: &Arc<str>,
        inbox: Arc<Inbox>,
        timeout: Duration,
    ) -> Result<Session, ClientError> {
        crate::tls::install_provider();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| ClientError::Transport {
                upstream: upstream.to_string(),
                detail: format!("cannot build the HTTP client: {e}"),
            })?;
        let (closed, _) = watch::channel(false);
        Ok(Session {
            shared: Arc::new(Shared {
                http,
                endpoint: endpoint.clone(),
                upstream: upstream.clone(),
                inbox,
                session: Mutex::new(None),
                closed,
                tokens: endpoint.grant.clone().map(|g| Tokens::new(g, &endpoint.url, upstream)),
                reading: Mutex::default(),
                message_wait: timeout.min(MESSAGE_WAIT),
            }),
        })
    }

    /// POSTs one message. A request's answer is read in the background and
    /// goes to the inbox (a stream that ends without it fails the request);
    /// a notification or response waits for the 202.
    pub(crate) async fn send(&self, message: &Value, head: &Head<'_>) -> Result<(), ClientError> {
        let shared = self.shared.clone();
        let request = shared.post(message, head);
        match head.id {
            Some(id) => {
                // Held while the reader starts, so that its removal comes after.
                let mut reading = shared.reading.lock().unwrap_or_else(|p| p.into_inner());
                let reader = shared.clone();
                let version = head.version.map(str::to_owned);
                let task = tokio::spawn(async move {
                    let ended = reader.exchange(request, id, version).await;
                    reader.reading.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
                    // Nothing to fail when the answer came.
                    reader.inbox.fail(
                        id,
                        ended.err().unwrap_or_else(|| ClientError::Closed {
                            upstream: reader.upstream.to_string(),
                            why: "the response stream ended without the answer".into(),
                        }),
                    );
                });
                reading.insert(id, task.abort_handle());
                Ok(())
            }
            // A notification or a response: the server takes it at once
            // (202); one that does not is not waited for without end.
            None => tokio::time::timeout(shared.message_wait, async {
                let response = shared.authorized(request).await?;
                shared.keep_session(&response);
                shared.success(response).await.map(|_| ())
            })
            .await
            .unwrap_or_else(|_| {
                Err(ClientError::Transport {
                    upstream: shared.upstream.to_string(),
                    detail: format!(
                        "the server did not take a {} within {} ms",
                        head.method.unwrap_or("response"),
                        shared.message_wait.as_millis()
                    ),
                })
            }),
        }
    }

    /// Listens on the session's GET stream (2025-11-25) for what the server
    /// sends unasked, again after it ends, until the session closes. A
    /// stream opened again that does not resume where the last one ended
    /// (no event id to resume after, or the server could not) changes
    /// `generation`: what the server sent meanwhile went unheard.
    pub(crate) fn open_events(&self, version: &str, generation: tokio::sync::watch::Sender<u64>) {
        let shared = self.shared.clone();
        let version = version.to_owned();
        tokio::spawn(async move {
            let mut closed = shared.closed.subscribe();
            // Kept from one stream to the next: the last event's id, which
            // the next GET resumes after, and the server's `retry`.
            let mut events = Events::default();
            let mut first = true;
            // A stream that keeps ending soon is asked for again less often.
            let mut backoff = super::Backoff::default();
            loop {
                let mut get = shared.get(Some(&version));
                let resuming = events.last_id.is_some();
                if let Some(last) = &events.last_id {
                    get = get.header("last-event-id", last);
                }
                let opened = tokio::time::Instant::now();
                let was_first = std::mem::replace(&mut first, false);
                let ended = tokio::select! {
                    response = shared.authorized(get) => match response {
                        Ok(r) if r.status().is_success() => {
                            if !was_first && !resuming {
                                generation.send_modify(|g| *g = g.wrapping_add(1));
                            }
                            shared.read_stream(r, None, &mut events).await.map(|_| ())
                        }
                        // A server that cannot resume after the event named
                        // may still open a new stream.
                        Ok(r) if events.last_id.take().is_some() => {
                            tracing::debug!(upstream = %shared.upstream, "the event stream not resumed: {}", r.status());
                            Ok(())
                        }
                        // The server offers no such stream (405) or refuses it.
                        Ok(r) => { tracing::debug!(upstream = %shared.upstream, "no event stream: {}", r.status()); return; }
                        Err(e) => Err(e),
                    },
                    _ = super::until(&mut closed) => return,
                };
                if let Err(e) = ended {
                    tracing::debug!(upstream = %shared.upstream, "the event stream ended: {e}");
                }
                backoff.ended_after(opened.elapsed());
                // The server's `retry`, or longer while streams keep ending
                // within a minute.
                let wait = events.delay().max(backoff.next());
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = super::until(&mut closed) => return,
                }
            }
        });
    }

    /// Stops reading request `id`'s answer: its response stream closes,
    /// which at 2026-07-28 cancels the request at the server.
    pub(crate) fn abandon(&self, id: i64) {
        let reader = self
            .shared
            .reading
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
        if let Some(reader) = reader {
            reader.abort();
        }
    }

    /// Ends the session: its streams stop, and a 2025-11-25 session is
    /// deleted on the server.
    pub(crate) fn close(&self) {
        let _ = self.shared.closed.send(true);
        if self.shared.session_id().is_some() {
            let delete = self
                .shared
                .addressed(self.shared.http.delete(&self.shared.endpoint.url));
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    let _ = tokio::time::timeout(Duration::from_secs(2), delete.send()).await;
                });
            }
        }
    }
}

impl Shared {
    /// A 404 to a message of a 2025-11-25 session: the server no longer
    /// knows it (it restarted, or the session expired). The connection is
    /// retired: the next request opens a new one ([`super::SESSION_ENDED`],
    /// and the request refused so, never served, is sent again there).
    /// Requests in flight on it keep waiting for their own streams, which
    /// may still bring their answers: failing them here would have them
    /// sent again, and run twice.
    fn session_ended(&self, status: reqwest::StatusCode) -> Option<ClientError> {
        if status != reqwest::StatusCode::NOT_FOUND || self.session_id().is_none() {
            return None;
        }
        self.inbox.retire(super::SESSION_ENDED);
        Some(ClientError::Closed {
            upstream: self.upstream.to_string(),
            why: super::SESSION_ENDED.into(),
        })
    }

    fn session_id(&self) -> Option<String> {
        self.session.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn keep_session(&self, response: &reqwest::Response) {
        if let Some(id) = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) {
            *self.session.lock().unwrap_or_else(|p| p.into_inner()) = Some(id.to_owned());
        }
    }

    fn transport(&self, e: reqwest::Error) -> ClientError {
        ClientError::Transport {
            upstream: self.upstream.to_string(),
            detail: format!("{}: {}", crate::redact::url(&self.endpoint.url), e.without_url()),
        }
    }

    /// `response` when it is a success; else what it says: the session the
    /// server forgot, or its refusal.
    async fn success(&self, response: reqwest::Response) -> Result<reqwest::Response, ClientError> {
        let status = response.status();
        if let Some(ended) = self.session_ended(status) {
            return Err(ended);
        }
        if status.is_success() {
            return Ok(response);
        }
        // A 429 that says when to retry (`Retry-After` in seconds).
        let retry = (status.as_u16() == 429)
            .then(|| response.headers().get(reqwest::header::RETRY_AFTER))
            .flatten()
            .and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let body = read_prefix(response, MAX_REFUSAL).await;
        Err(self.refused(status, retry, &body))
    }

    /// A refusal: the JSON-RPC error in the body if there is one (kept as
    /// the server sent it), else the status; one that says when to retry
    /// stays a refusal to retry later (a gateway answers its caller 429).
    fn refused(&self, status: reqwest::StatusCode, retry: Option<Duration>, body: &str) -> ClientError {
        if let Ok(message) = serde_json::from_str::<Value>(body) {
            if let Some(error) = message.get("error") {
                let e = crate::calls::refusal_of(error);
                return ClientError::Rpc(match retry {
                    Some(wait) if e.retry_after().is_none() => e.retrying_after(wait),
                    _ => e,
                });
            }
        }
        if let Some(wait) = retry {
            let upstream = self.upstream.to_string();
            let message = format!(
                "{upstream} refused the request for its rate (HTTP {status}); retry in {} s",
                wait.as_secs()
            );
            let ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1);
            return ClientError::Rpc(
                McpError::rate_limited(message, wait).with_data(json!({ "retryAfterMs": ms, "upstream": upstream })),
            );
        }
        let body: String = body.chars().take(200).collect();
        ClientError::Transport {
            upstream: self.upstream.to_string(),
            detail: format!("HTTP {status} from {}: {body}", crate::redact::url(&self.endpoint.url)),
        }
    }

    /// `request` with the endpoint's own headers and the session's id:
    /// what every request to the server carries.
    fn addressed(&self, mut request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        for (name, value) in &self.endpoint.headers {
            request = request.header(name, value);
        }
        if let Some(id) = self.session_id() {
            request = request.header("mcp-session-id", id);
        }
        request
    }

    /// A GET of the endpoint's event stream (the session's, or the rest of
    /// a stream after a `Last-Event-ID`).
    fn get(&self, version: Option<&str>) -> reqwest::RequestBuilder {
        let mut get = self.http.get(&self.endpoint.url).header("accept", "text/event-stream");
        if let Some(version) = version {
            get = get.header("mcp-protocol-version", version);
        }
        self.addressed(get)
    }

    fn post(&self, message: &Value, head: &Head<'_>) -> reqwest::RequestBuilder {
        let mut post = self
            .http
            .post(&self.endpoint.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(message.to_string());
        if let Some(version) = head.version {
            post = post.header("mcp-protocol-version", version);
        }
        if let Some(method) = head.method {
            post = post.header("mcp-method", method);
        }
        if let Some(name) = head.name {
            post = post.header("mcp-name", header_value(name));
        }
        for (header, value) in head.params {
            post = post.header(format!("mcp-param-{header}"), header_value(value));
        }
        self.addressed(post)
    }

    /// Sends request `id` and delivers what comes back.
    async fn exchange(
        &self,
        request: reqwest::RequestBuilder,
        id: i64,
        version: Option<String>,
    ) -> Result<(), ClientError> {
        let response = self.authorized(request).await?;
        self.keep_session(&response);
        let response = self.success(response).await?;
        let streamed = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream"));
        if streamed {
            let mut events = Events::default();
            let ended = self.read_stream(response, Some(id), &mut events).await;
            return self.resume(id, version.as_deref(), events, ended).await;
        }
        let body = read_body(response).await.map_err(|detail| self.protocol(detail))?;
        let message: Value =
            serde_json::from_slice(&body).map_err(|e| self.protocol(format!("the response is not JSON: {e}")))?;
        self.inbox.deliver(message, Some(id));
        Ok(())
    }

    /// Sends `request` with the upstream's token, if it has a grant; after
    /// a 401, once more with a new token.
    async fn authorized(&self, request: reqwest::RequestBuilder) -> Result<reqwest::Response, ClientError> {
        let Some(tokens) = &self.tokens else {
            return request.send().await.map_err(|e| self.transport(e));
        };
        let again = request.try_clone();
        let token = tokens.token(&self.http).await?;
        let response = request.bearer_auth(token).send().await.map_err(|e| self.transport(e))?;
        let (reqwest::StatusCode::UNAUTHORIZED, Some(again)) = (response.status(), again) else {
            return Ok(response);
        };
        tokens.forget().await;
        let token = tokens.token(&self.http).await?;
        again.bearer_auth(token).send().await.map_err(|e| self.transport(e))
    }

    fn protocol(&self, detail: String) -> ClientError {
        ClientError::Protocol {
            upstream: self.upstream.to_string(),
            detail,
        }
    }

    /// Reads an event stream, delivering each event's message, until it
    /// ends or brings the answer to request `related`: whether it did.
    async fn read_stream(
        &self,
        mut response: reqwest::Response,
        related: Option<i64>,
        events: &mut Events,
    ) -> Result<bool, ClientError> {
        let mut closed = self.closed.subscribe();
        loop {
            let chunk = tokio::select! {
                chunk = response.chunk() => chunk.map_err(|e| self.transport(e))?,
                _ = super::until(&mut closed) => return Ok(false),
            };
            let Some(chunk) = chunk else {
                return Ok(false);
            };
            let mut answered = false;
            for data in events.push(&chunk).map_err(|d| self.protocol(d))? {
                match serde_json::from_str::<Value>(&data) {
                    Ok(message) => {
                        answered |= related.is_some()
                            && message.get("method").is_none()
                            && message.get("id").and_then(Value::as_i64) == related;
                        self.inbox.deliver(message, related);
                    }
                    Err(e) => tracing::debug!(upstream = %self.upstream, "an event that is not JSON ({e}): {data}"),
                }
            }
            if answered {
                return Ok(true);
            }
        }
    }

    /// After request `id`'s response stream `ended` without its answer:
    /// when the server gave its events ids, asks for the rest of the stream
    /// (a GET with `Last-Event-ID`, after the `retry` the server named) as
    /// often as it ends again, until the answer comes; [`MAX_RESUMES`]
    /// attempts in a row that bring no new event fail the request. Without
    /// ids, the stream cannot be resumed: as it ended.
    async fn resume(
        &self,
        id: i64,
        version: Option<&str>,
        mut events: Events,
        mut ended: Result<bool, ClientError>,
    ) -> Result<(), ClientError> {
        let mut closed = self.closed.subscribe();
        let mut fruitless = 0u32;
        loop {
            if matches!(ended, Ok(true)) || *closed.borrow() {
                return Ok(());
            }
            // What does not parse would not parse again.
            let (Some(last), false) = (
                events.last_id.clone(),
                matches!(ended, Err(ClientError::Protocol { .. })),
            ) else {
                return ended.map(|_| ());
            };
            if let Err(e) = &ended {
                tracing::debug!(upstream = %self.upstream, "request {id}'s stream broke off after event {last}: {e}");
            }
            if fruitless >= MAX_RESUMES {
                return Err(ClientError::Closed {
                    upstream: self.upstream.to_string(),
                    why: format!(
                        "the response stream ended without the answer, and {MAX_RESUMES} attempts to \
                         resume it after event {last} brought nothing more"
                    ),
                });
            }
            fruitless += 1;
            tokio::select! {
                _ = tokio::time::sleep(events.delay()) => {}
                _ = super::until(&mut closed) => return Ok(()),
            }
            let get = self.get(version).header("last-event-id", &last);
            ended = match self.authorized(get).await {
                Ok(response) => {
                    // The request was served: the answer is lost with the
                    // session, and it is not sent again (it may have run).
                    let response = self.success(response).await.map_err(|e| match e {
                        ClientError::Closed { upstream, why } if why == super::SESSION_ENDED => ClientError::Closed {
                            upstream,
                            why: format!("{why} while its answer was awaited, after event {last}"),
                        },
                        other => other,
                    })?;
                    self.read_stream(response, Some(id), &mut events).await
                }
                Err(e) => Err(e),
            };
            if events.last_id.as_deref() != Some(last.as_str()) {
                fruitless = 0;
            }
        }
    }
}

/// The most of a refusal's body read: enough for a JSON-RPC error.
const MAX_REFUSAL: usize = 64 << 10;

/// The first `max` bytes of a body (what a refusal says), as text; the rest
/// is not read.
async fn read_prefix(mut response: reqwest::Response, max: usize) -> String {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        let room = max.saturating_sub(body.len());
        body.extend_from_slice(chunk.get(..room.min(chunk.len())).unwrap_or_default());
        if body.len() >= max {
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// Reads a whole body, at most [`MAX_BODY`].
async fn read_body(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.without_url().to_string())? {
        if body.len().saturating_add(chunk.len()) > MAX_BODY {
            return Err("the response is larger than 64 MiB".into());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A header value as the standard headers carry it: as is when it is
/// visible ASCII without surrounding spaces, else base64 in `=?base64?..?=`.
fn header_value(text: &str) -> String {
    let plain = !text.is_empty()
        && text.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !text.starts_with(' ')
        && !text.ends_with(' ');
    if plain {
        text.to_owned()
    } else {
        format!("=?base64?{}?=", base64::engine::general_purpose::STANDARD.encode(text))
    }
}

/// The server-sent events parser: lines in, each event's data out; an
/// event without data (a 2025-11-25 server's priming event) is not one.
#[derive(Default)]
struct Events {
    line: Vec<u8>,
    data: String,
    has_data: bool,
    /// The last event id the server gave, which a resumption names.
    last_id: Option<String>,
    /// The server's `retry`, in milliseconds.
    retry: Option<u64>,
}

impl Events {
    /// How long to wait before the stream is asked for again.
    fn delay(&self) -> Duration {
        self.retry
            .map_or(RESUME_DELAY, |ms| Duration::from_millis(ms).min(MAX_RESUME_DELAY))
    }

    /// Feeds bytes; returns the data of every event they complete.
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<String>, String> {
        let mut done = Vec::new();
        for &b in bytes {
            if b != b'\n' {
                self.line.push(b);
                // One event, its lines so far and this one, is bounded.
                if self.line.len().saturating_add(self.data.len()) > MAX_BODY {
                    return Err("an event larger than 64 MiB".into());
                }
                continue;
            }
            if self.line.last() == Some(&b'\r') {
                self.line.pop();
            }
            let line = String::from_utf8_lossy(&self.line).into_owned();
            self.line.clear();
            if line.is_empty() {
                if self.has_data && !self.data.is_empty() {
                    done.push(std::mem::take(&mut self.data));
                }
                self.data.clear();
                self.has_data = false;
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((line.as_str(), ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "data" => {
                    if self.has_data {
                        self.data.push('\n');
                    }
                    self.data.push_str(value);
                    self.has_data = true;
                }
                // An id with a NUL is ignored; an empty one forgets the last.
                "id" if !value.contains('\0') => {
                    self.last_id = (!value.is_empty()).then(|| value.to_owned());
                }
                "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                    self.retry = value.parse().ok();
                }
                // `event:` and comments change nothing here.
                _ => {}
            }
        }
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use crate::client::http::{header_value, Events};

    #[test]
    fn an_event_is_bounded_across_its_data_lines() {
        let mut events = Events::default();
        let lines = format!("data: {}\n", "x".repeat(1000)).repeat(1 << 10);
        let mut fed = 0;
        let refused = loop {
            match events.push(lines.as_bytes()) {
                Ok(done) => assert!(done.is_empty()),
                Err(e) => break e,
            }
            fed += lines.len();
            assert!(fed <= 2 * super::MAX_BODY, "still taken after {fed} bytes");
        };
        assert!(refused.contains("64 MiB"), "{refused}");
    }

    #[test]
    fn events_split_across_chunks_and_lines() {
        let mut events = Events::default();
        assert!(events.push(b": comment\nid: 1\nda").unwrap().is_empty());
        let out = events.push(b"ta: {\"a\":1}\r\n\r\ndata: x\ndata: y\n\n").unwrap();
        assert_eq!(out, vec!["{\"a\":1}".to_owned(), "x\ny".to_owned()]);
    }

    #[test]
    fn events_keep_the_last_id_and_retry_and_skip_events_without_data() {
        let mut events = Events::default();
        assert!(
            events.push(b"id: s1_1\nretry: 250\ndata: \n\n").unwrap().is_empty(),
            "a priming event"
        );
        assert_eq!(events.last_id.as_deref(), Some("s1_1"));
        assert_eq!(events.delay(), std::time::Duration::from_millis(250));
        let out = events.push(b"id: s1_2\ndata: {}\n\nretry: soon\nid: a\0b\n\n").unwrap();
        assert_eq!(out, vec!["{}".to_owned()]);
        assert_eq!(events.last_id.as_deref(), Some("s1_2"), "an id with a NUL is ignored");
        assert_eq!(
            events.delay(),
            std::time::Duration::from_millis(250),
            "a retry not a number is ignored"
        );
        events.push(b"retry: 3600000\nid\n\n").unwrap();
        assert_eq!(events.last_id, None, "an empty id forgets the last");
        assert_eq!(events.delay(), std::time::Duration::from_secs(30), "at most 30 s");
    }

    #[test]
    fn header_values_outside_visible_ascii_are_base64() {
        assert_eq!(header_value("add"), "add");
        assert_eq!(header_value("café"), "=?base64?Y2Fmw6k=?=");
        assert_eq!(header_value(" padded"), "=?base64?IHBhZGRlZA==?=");
    }
}
