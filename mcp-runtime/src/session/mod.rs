//! A legacy (2025-11-25) session: what `initialize` negotiated, and the
//! bookkeeping of server-to-client requests. HTTP keeps its sessions in a
//! [`SessionStore`]; stdio has one session per process.
//!
//! Also what clients hold open for change notifications, bounded by
//! [`SubscriptionLimits`]: the streams (`subscriptions/listen` and legacy
//! GET streams, counted per principal and in all by [`Streams`]) and the
//! resources they follow.

use crate::error::McpError;
use crate::jsonrpc;
use crate::outbound::Outbound;
use crate::protocol::{ClientCapabilities, Implementation, LoggingLevel, RequestId};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

pub(crate) mod followed;
mod store;
pub(crate) use store::random_id;
pub use store::SessionStore;

/// The `_meta` key under which a 2025-11-25 server-to-client request made
/// for an input request carries that request's key.
pub(crate) const INPUT_KEY_META: &str = "rs.mcp-runtime/inputKey";

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

type Answer = Result<Value, Value>;

/// One legacy session.
#[derive(Debug)]
pub struct Session {
    /// The session id (HTTP), or `None` for stdio.
    pub id: Option<String>,
    /// The negotiated protocol revision.
    pub version: &'static str,
    /// What the client declared in `initialize`.
    pub capabilities: std::sync::Arc<ClientCapabilities>,
    /// Who the client said it is.
    pub client_info: Option<std::sync::Arc<Implementation>>,
    log_level: Mutex<Option<LoggingLevel>>,
    subscriptions: Mutex<Subscribed>,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<Answer>>>,
    /// The last asks withdrawn unanswered (at most [`WITHDRAWN_KEPT`]): a
    /// client that answered one as it was withdrawn is not told off.
    withdrawn: Mutex<std::collections::VecDeque<RequestId>>,
    /// The client's requests running over HTTP, which a
    /// `notifications/cancelled` of the session stops, each with the
    /// number that tells it from a later request of the same id.
    running: Mutex<HashMap<RequestId, (u64, crate::cancel::Cancellation)>>,
    /// The GET stream open now, ended when another takes its place or the
    /// session ends: a message goes out on one stream, never on two.
    stream: Mutex<Option<crate::cancel::Cancellation>>,
    /// Cancelled when the session ends (DELETE, idle, evicted).
    ended: crate::cancel::Cancellation,
    /// Set when the client can answer nothing more (stdio's input ended,
    /// the session ended): asks fail at once.
    asks_closed: std::sync::atomic::AtomicBool,
    next_id: AtomicU64,
    last_seen: Mutex<Instant>,
    /// The token subject that opened it, on an authorized endpoint.
    owner: std::sync::OnceLock<String>,
    /// When it was opened (`mcp.server.session.duration`).
    opened: Instant,
    /// Its count in the `active_sessions` gauge.
    _alive: crate::telemetry::Held,
}

impl Drop for Session {
    fn drop(&mut self) {
        let network = if self.id.is_some() { "tcp" } else { "pipe" };
        crate::telemetry::record_session(self.opened.elapsed().as_secs_f64(), self.version, network);
    }
}

/// The resources a legacy session follows, and their bytes counted
/// towards `max_subscribed_bytes`.
#[derive(Debug, Default)]
struct Subscribed {
    uris: HashMap<String, followed::Following>,
    held: Option<HeldBytes>,
}

/// A session's GET stream while it is open (see [`Session::open_stream`]).
pub(crate) struct OpenStream {
    session: Arc<Session>,
    token: crate::cancel::Cancellation,
}

impl OpenStream {
    /// Cancelled when the stream must end.
    pub(crate) fn ends(&self) -> &crate::cancel::Cancellation {
        &self.token
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.token.cancel();
        self.session.touch();
    }
}

/// A request of a session counted as running (see [`Session::running`]).
pub(crate) struct Running {
    session: Arc<Session>,
    id: RequestId,
    serial: u64,
}

impl Drop for Running {
    fn drop(&mut self) {
        {
            // A cancelled request's id may be running again by now: that
            // request's entry stays.
            let mut running = lock(&self.session.running);
            if running.get(&self.id).is_some_and(|(serial, _)| *serial == self.serial) {
                running.remove(&self.id);
            }
        }
        // Idle from the end of its last request, not from its start.
        self.session.touch();
    }
}

/// Bounds on what clients hold open for change notifications
/// (`ServerBuilder::subscriptions`). Past a bound, the request is refused
/// with an error naming it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubscriptionLimits {
    /// Streams open at once in all: `subscriptions/listen` streams and
    /// legacy GET streams together (default 10 000; past it -32603, and a
    /// GET stream is refused by the transport).
    pub max_streams: usize,
    /// Streams open at once for one principal (the token's subject, or the
    /// `principal_header`'s value; default 64).
    pub max_streams_per_principal: usize,
    /// Streams open at once for every caller without a principal together
    /// (default 1 000): the transport gives no address to tell them apart,
    /// so they share one count, which keeps them from taking every stream
    /// from the identified callers.
    pub max_anonymous_streams: usize,
    /// Resources one `subscriptions/listen` request may name in
    /// `resourceSubscriptions`, and one legacy session may subscribe to
    /// with `resources/subscribe` (default 1 000; past it -32602).
    pub max_resource_subscriptions: usize,
    /// The longest resource URI subscribed to (default 8 KiB; longer
    /// -32602).
    pub max_uri_len: usize,
    /// Bytes of resource URIs followed at once by every
    /// `subscriptions/listen` stream and legacy session together, each URI
    /// counted as its length plus 64 bytes (default
    /// 64 MiB; past it -32603): the memory subscriptions take, however many
    /// callers and sessions make them.
    pub max_subscribed_bytes: usize,
}

/// What one followed resource URI counts towards
/// [`SubscriptionLimits::max_subscribed_bytes`] beyond its length: the
/// string's header and its place in a set.
const SUBSCRIPTION_OVERHEAD: usize = 64;

/// What following `uri` counts towards `max_subscribed_bytes`.
pub(crate) fn subscription_cost(uri: &str) -> usize {
    uri.len().saturating_add(SUBSCRIPTION_OVERHEAD)
}

impl Default for SubscriptionLimits {
    fn default() -> Self {
        SubscriptionLimits {
            max_streams: 10_000,
            max_streams_per_principal: 64,
            max_anonymous_streams: 1_000,
            max_resource_subscriptions: 1_000,
            max_uri_len: 8 * 1024,
            max_subscribed_bytes: 64 << 20,
        }
    }
}

impl SubscriptionLimits {
    /// Whether a subscription to `uri` is too long to keep.
    pub(crate) fn check_uri(&self, uri: &str) -> Result<(), McpError> {
        if uri.len() > self.max_uri_len {
            return Err(McpError::invalid_params(format!(
                "Invalid params: a resource URI of {} bytes is longer than {} \
                 (SubscriptionLimits::max_uri_len)",
                uri.len(),
                self.max_uri_len
            )));
        }
        Ok(())
    }
}

/// The streams open at once, in all and per principal, and the bytes of
/// the resource URIs they and the legacy sessions follow.
#[derive(Debug, Default)]
pub(crate) struct Streams {
    limits: SubscriptionLimits,
    open: Mutex<OpenStreams>,
    subscribed: AtomicUsize,
    /// The resource URIs followed now, by how many.
    pub(crate) followed: Arc<followed::Followed>,
}

#[derive(Debug, Default)]
struct OpenStreams {
    total: usize,
    /// By principal; callers without one under `None`.
    by_principal: HashMap<Option<String>, usize>,
}

impl Streams {
    pub(crate) fn new(limits: SubscriptionLimits) -> Self {
        Streams {
            limits,
            open: Mutex::default(),
            subscribed: AtomicUsize::new(0),
            followed: Arc::default(),
        }
    }

    /// Counts `bytes` more of followed URIs until the hold is dropped, or
    /// says they would pass `max_subscribed_bytes`.
    pub(crate) fn hold(self: &Arc<Self>, bytes: usize) -> Result<HeldBytes, McpError> {
        let mut held = HeldBytes {
            streams: self.clone(),
            bytes: 0,
        };
        held.add(bytes)?;
        Ok(held)
    }

    /// Bytes of followed URIs counted now.
    #[cfg(test)]
    pub(crate) fn subscribed(&self) -> usize {
        self.subscribed.load(Ordering::Relaxed)
    }

    /// The bounds.
    pub(crate) fn limits(&self) -> &SubscriptionLimits {
        &self.limits
    }

    /// Counts one more stream of `principal` until the slot is dropped, or
    /// says which bound it would pass.
    pub(crate) fn open(self: &Arc<Self>, principal: Option<&str>) -> Result<StreamSlot, McpError> {
        let mut open = lock(&self.open);
        if open.total >= self.limits.max_streams {
            return Err(McpError::internal(format!(
                "Internal error: {} streams are open, the most allowed (SubscriptionLimits::max_streams)",
                open.total
            )));
        }
        let key = principal.map(str::to_owned);
        let mine = open.by_principal.get(&key).copied().unwrap_or(0);
        let (cap, which) = match principal {
            Some(_) => (self.limits.max_streams_per_principal, "max_streams_per_principal"),
            None => (self.limits.max_anonymous_streams, "max_anonymous_streams"),
        };
        if mine >= cap {
            return Err(McpError::internal(format!(
                "Internal error: {mine} streams of this caller are open, the most allowed (SubscriptionLimits::{which})"
            )));
        }
        open.total += 1;
        open.by_principal.insert(key.clone(), mine + 1);
        Ok(StreamSlot {
            streams: self.clone(),
            key,
        })
    }

    /// How many streams are open.
    #[cfg(test)]
    pub(crate) fn total(&self) -> usize {
        lock(&self.open).total
    }
}

/// One open stream, counted until dropped.
#[derive(Debug)]
pub(crate) struct StreamSlot {
    streams: Arc<Streams>,
    key: Option<String>,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = lock(&self.streams.open);
        open.total = open.total.saturating_sub(1);
        if let Some(n) = open.by_principal.get_mut(&self.key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.by_principal.remove(&self.key);
            }
        }
    }
}

/// Bytes of followed URIs, counted towards `max_subscribed_bytes` until
/// dropped.
#[derive(Debug)]
pub(crate) struct HeldBytes {
    streams: Arc<Streams>,
    bytes: usize,
}

impl HeldBytes {
    /// Counts `bytes` more, unless that passes the bound.
    pub(crate) fn add(&mut self, bytes: usize) -> Result<(), McpError> {
        let max = self.streams.limits.max_subscribed_bytes;
        let counted = self
            .streams
            .subscribed
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |now| {
                now.checked_add(bytes).filter(|&then| then <= max)
            });
        match counted {
            Ok(_) => {
                self.bytes = self.bytes.saturating_add(bytes);
                Ok(())
            }
            Err(now) => Err(McpError::internal(format!(
                "Internal error: resource subscriptions hold {now} bytes; {bytes} more would pass \
                 {max} (SubscriptionLimits::max_subscribed_bytes)"
            ))),
        }
    }

    /// Gives back `bytes` of what it counts.
    pub(crate) fn release(&mut self, bytes: usize) {
        let bytes = bytes.min(self.bytes);
        self.bytes -= bytes;
        self.streams.subscribed.fetch_sub(bytes, Ordering::Relaxed);
    }
}

impl Drop for HeldBytes {
    fn drop(&mut self) {
        self.release(self.bytes);
    }
}

/// How long a round of server-to-client requests waits for its answers.
pub const ASK_TIMEOUT: Duration = Duration::from_secs(120);

/// How many withdrawn asks a session remembers, for answers sent as they
/// were withdrawn.
const WITHDRAWN_KEPT: usize = 64;

impl Session {
    /// A session for what an `initialize` negotiated.
    pub fn new(
        id: Option<String>,
        version: &'static str,
        capabilities: ClientCapabilities,
        client_info: Option<Implementation>,
    ) -> Self {
        Session {
            id,
            version,
            capabilities: std::sync::Arc::new(capabilities),
            client_info: client_info.map(std::sync::Arc::new),
            log_level: Mutex::new(None),
            subscriptions: Mutex::default(),
            pending: Mutex::default(),
            withdrawn: Mutex::default(),
            running: Mutex::default(),
            stream: Mutex::default(),
            ended: crate::cancel::Cancellation::new(),
            asks_closed: std::sync::atomic::AtomicBool::new(false),
            next_id: AtomicU64::new(1),
            last_seen: Mutex::new(Instant::now()),
            owner: std::sync::OnceLock::new(),
            opened: Instant::now(),
            _alive: crate::telemetry::Held::new(crate::telemetry::Gauge::Sessions),
        }
    }

    /// Counts the client's request `id` among the session's running ones
    /// until the guard returned drops: a `notifications/cancelled` naming it
    /// fires `cancel` ([`cancel_request`](Self::cancel_request)). `None` when
    /// a request with that id runs already (the client may not use an id
    /// twice at once: a cancellation could not tell them apart).
    pub(crate) fn running(self: &Arc<Self>, id: RequestId, cancel: crate::cancel::Cancellation) -> Option<Running> {
        let serial = self.next_id.fetch_add(1, Ordering::Relaxed);
        match lock(&self.running).entry(id.clone()) {
            std::collections::hash_map::Entry::Occupied(_) => return None,
            std::collections::hash_map::Entry::Vacant(place) => {
                place.insert((serial, cancel));
            }
        }
        Some(Running {
            session: self.clone(),
            id,
            serial,
        })
    }

    /// Ends the session: its GET stream and its running requests stop, and
    /// what it subscribed to is given back. The transport has forgotten its
    /// id already, so nothing of the session goes on after its end.
    pub(crate) fn end(&self) {
        self.ended.cancel();
        self.close_asks();
        if let Some(stream) = lock(&self.stream).take() {
            stream.cancel();
        }
        for (_, (_, request)) in lock(&self.running).drain() {
            request.cancel();
        }
        *lock(&self.subscriptions) = Subscribed::default();
    }

    /// stdio's input ended: the client answers nothing more
    /// ([`close_asks`](Self::close_asks)), and what it subscribed to is
    /// given back.
    pub(crate) fn input_ended(&self) {
        self.close_asks();
        *lock(&self.subscriptions) = Subscribed::default();
    }

    /// The client can answer nothing more (stdio's input ended): the asks
    /// waiting fail now, and later ones at once, rather than each waiting
    /// out [`ASK_TIMEOUT`].
    pub(crate) fn close_asks(&self) {
        let mut pending = lock(&self.pending);
        self.asks_closed.store(true, Ordering::Release);
        pending.clear();
    }

    /// Opens the session's GET stream: the token returned is cancelled when
    /// another GET takes its place (the spec forbids sending one message on
    /// two streams) or the session ends. While it is open the session is
    /// not idle; when it closes it counts as seen then.
    pub(crate) fn open_stream(self: &Arc<Self>) -> OpenStream {
        let token = crate::cancel::Cancellation::new();
        if let Some(earlier) = lock(&self.stream).replace(token.clone()) {
            earlier.cancel();
        }
        if self.ended.is_cancelled() {
            token.cancel();
        }
        OpenStream {
            session: self.clone(),
            token,
        }
    }

    /// Stops the client's running request `id`, if it runs.
    pub(crate) fn cancel_request(&self, id: &RequestId) -> bool {
        let cancel = lock(&self.running).remove(id);
        cancel.map(|(_, c)| c.cancel()).is_some()
    }

    /// Binds the session to the principal that opened it (the token's
    /// subject, or the `principal_header`'s value).
    pub fn set_owner(&self, subject: &str) {
        let _ = self.owner.set(subject.to_owned());
    }

    /// Whether a request of `subject` (none: no principal) may use it:
    /// only the principal that opened it (another one is told the session
    /// does not exist).
    pub fn owned_by(&self, subject: Option<&str>) -> bool {
        self.owner.get().map(String::as_str) == subject
    }

    /// The principal that opened it, if any.
    pub fn owner(&self) -> Option<&str> {
        self.owner.get().map(String::as_str)
    }

    /// The level set by `logging/setLevel`, if any.
    pub fn log_level(&self) -> Option<LoggingLevel> {
        *lock(&self.log_level)
    }

    /// Sets the session's log level.
    pub fn set_log_level(&self, level: LoggingLevel) {
        *lock(&self.log_level) = Some(level);
    }

    /// Subscribes to updates of `uri`, unless the session already follows
    /// `max_resource_subscriptions` resources or the server's subscriptions
    /// hold `max_subscribed_bytes` (subscribing again to one it follows is
    /// no change).
    pub(crate) fn subscribe(&self, uri: String, streams: &Arc<Streams>) -> Result<(), McpError> {
        let mut subscribed = lock(&self.subscriptions);
        // Read under the lock that `input_ended` clears under: a subscribe
        // still running when the input ended keeps nothing.
        if self.asks_closed.load(Ordering::Acquire) {
            return Err(McpError::internal(
                "Internal error: the client can hear of no update any more (its input ended, or its session)",
            ));
        }
        if subscribed.uris.contains_key(&uri) {
            return Ok(());
        }
        let max = streams.limits().max_resource_subscriptions;
        if subscribed.uris.len() >= max {
            return Err(McpError::invalid_params(format!(
                "Invalid params: the session follows {} resources, the most allowed \
                 (SubscriptionLimits::max_resource_subscriptions); unsubscribe from one first",
                subscribed.uris.len()
            )));
        }
        let cost = subscription_cost(&uri);
        match &mut subscribed.held {
            Some(held) => held.add(cost)?,
            None => subscribed.held = Some(streams.hold(cost)?),
        }
        let following = streams.followed.follow(&uri);
        subscribed.uris.insert(uri, following);
        Ok(())
    }

    /// Unsubscribes from `uri`.
    pub fn unsubscribe(&self, uri: &str) {
        let mut subscribed = lock(&self.subscriptions);
        if subscribed.uris.remove(uri).is_some() {
            if let Some(held) = &mut subscribed.held {
                held.release(subscription_cost(uri));
            }
        }
    }

    /// Whether the session subscribed to `uri`.
    pub fn is_subscribed(&self, uri: &str) -> bool {
        lock(&self.subscriptions).uris.contains_key(uri)
    }

    /// The URIs the session is subscribed to.
    pub(crate) fn subscribed(&self) -> Vec<String> {
        lock(&self.subscriptions).uris.keys().cloned().collect()
    }

    /// Marks the session used now.
    pub fn touch(&self) {
        *lock(&self.last_seen) = Instant::now();
    }

    /// How long the session has been idle: never while its GET stream is
    /// open or one of its requests runs (a tool that outlasts the idle
    /// timeout still answers on a live session).
    fn idle_for(&self) -> Duration {
        let streaming = lock(&self.stream).as_ref().is_some_and(|s| !s.is_cancelled());
        match streaming || !lock(&self.running).is_empty() {
            true => Duration::ZERO,
            false => lock(&self.last_seen).elapsed(),
        }
    }

    /// Delivers a client's response to the server-to-client request it answers.
    /// Returns whether a request was waiting for it, or had just been
    /// withdrawn (the answer crossed its `notifications/cancelled`).
    pub fn deliver(&self, response: jsonrpc::Response) -> bool {
        let Some(tx) = lock(&self.pending).remove(&response.id) else {
            // Withdrawn as it was answered: taken, and dropped.
            let mut withdrawn = lock(&self.withdrawn);
            let late = withdrawn.iter().position(|id| *id == response.id);
            return late.and_then(|at| withdrawn.remove(at)).is_some();
        };
        let answer = match response.outcome {
            Ok(result) => serde_json::from_str(result.get()).map_err(|_| Value::Null),
            Err(error) => Err(serde_json::from_str(error.get()).unwrap_or(Value::Null)),
        };
        tx.send(answer).is_ok()
    }

    /// Whether the client can still be asked (its input has not ended, nor
    /// its session).
    pub(crate) fn can_ask(&self) -> bool {
        !self.asks_closed.load(Ordering::Acquire)
    }

    /// Sends each input request as a real request on `outbound`, its key in
    /// `_meta` under [`INPUT_KEY_META`], and waits
    /// (at most [`ASK_TIMEOUT`]) for all answers, keyed like the requests.
    pub async fn ask(
        &self,
        requests: &Map<String, Value>,
        outbound: &Outbound,
    ) -> Result<Map<String, Value>, McpError> {
        self.ask_within(requests, outbound, Some(ASK_TIMEOUT)).await
    }

    /// [`ask`](Self::ask), waiting at most `wait` for all the answers
    /// (`None`: until the caller drops the future). The answers are waited
    /// for together: an error answer to one ends the wait at once. Asks left
    /// unanswered when it ends (an error, the timeout, the future dropped)
    /// are withdrawn with `notifications/cancelled`, so that the client
    /// stops showing them.
    pub async fn ask_within(
        &self,
        requests: &Map<String, Value>,
        outbound: &Outbound,
        wait: Option<Duration>,
    ) -> Result<Map<String, Value>, McpError> {
        let gone = || McpError::internal("the client can no longer answer (its input ended, or its session)");
        if self.asks_closed.load(Ordering::Acquire) {
            return Err(gone());
        }
        // Every id this call registered leaves `pending` when the call ends,
        // however it ends (an error answer, a timeout, a closed stream, or
        // the caller dropping the future).
        let mut registered = Registered {
            session: self,
            outbound,
            ids: Vec::with_capacity(requests.len()),
        };
        let mut waiting = Vec::with_capacity(requests.len());
        for (key, request) in requests {
            let id = RequestId::String(format!("s-{}", self.next_id.fetch_add(1, Ordering::Relaxed)));
            let (tx, rx) = oneshot::channel();
            {
                // Checked under the lock `close_asks` takes: none slips past it.
                let mut pending = lock(&self.pending);
                if self.asks_closed.load(Ordering::Acquire) {
                    return Err(gone());
                }
                pending.insert(id.clone(), tx);
            }
            registered.ids.push(id.clone());
            let method = request.get("method").and_then(Value::as_str).unwrap_or_default();
            // The CLIENT span of a server-to-client request, a child of the
            // request it serves, ended when the answer comes.
            let span = tracing::debug_span!(
                "mcp.ask",
                "otel.name" = %crate::telemetry::cap(method),
                "otel.kind" = "client",
                "otel.status_code" = tracing::field::Empty,
                "otel.status_description" = tracing::field::Empty,
                "mcp.method.name" = %crate::telemetry::cap(method),
                "jsonrpc.request.id" = %id.to_string().trim_matches('"'),
                "mcp.session.id" = self.id.as_deref(),
                "mcp.protocol.version" = self.version,
                "error.type" = tracing::field::Empty,
                "rpc.response.status_code" = tracing::field::Empty,
            );
            let mut params = request
                .get("params")
                .cloned()
                .unwrap_or_else(|| Value::Object(Map::new()));
            if let Some(object) = params.as_object_mut() {
                if let Value::Object(meta) = object.entry("_meta").or_insert_with(|| Value::Object(Map::new())) {
                    // The ask's key, for a gateway that turns this request back
                    // into an `input_required` round (2025-11-25 requests carry none).
                    meta.insert(INPUT_KEY_META.into(), Value::String(key.clone()));
                    // The client's span of its answer goes under this one.
                    span.in_scope(|| crate::telemetry::carry_trace(meta));
                }
            }
            if outbound.send(jsonrpc::encode_request(&id, method, &params)).is_err() {
                return Err(McpError::internal("the client's stream closed"));
            }
            waiting.push((key.clone(), rx, span));
        }
        // Waited for together: an error answer to one fails the call at
        // once, not after the others were answered or timed out.
        let mut waiting: Vec<_> = waiting.into_iter().map(Some).collect();
        // In the order asked, whatever the order answered.
        let mut answered: Vec<Option<(String, Value)>> = vec![None; waiting.len()];
        let all = std::future::poll_fn(|cx| {
            let mut left = false;
            for (slot, got) in waiting.iter_mut().zip(answered.iter_mut()) {
                let Some((_, rx, _)) = slot else { continue };
                let answer = match std::future::Future::poll(std::pin::Pin::new(rx), cx) {
                    std::task::Poll::Pending => {
                        left = true;
                        continue;
                    }
                    std::task::Poll::Ready(answer) => answer,
                };
                let Some((key, _, span)) = slot.take() else { continue };
                match answer {
                    Ok(Ok(value)) => *got = Some((key, value)),
                    Ok(Err(error)) => {
                        let message = error
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("error")
                            .to_owned();
                        let code = error.get("code").and_then(Value::as_i64).unwrap_or_default();
                        crate::telemetry::record_error(&span, &code, &message);
                        span.record("rpc.response.status_code", tracing::field::display(code));
                        return std::task::Poll::Ready(Err(McpError::internal(format!(
                            "the client answered {key:?} with an error: {message}"
                        ))));
                    }
                    // Its sender is dropped only by `close_asks`.
                    Err(_) => {
                        crate::telemetry::record_error(&span, &"closed", "no answer");
                        return std::task::Poll::Ready(Err(gone()));
                    }
                }
            }
            if left {
                std::task::Poll::Pending
            } else {
                std::task::Poll::Ready(Ok(()))
            }
        });
        let ended = match wait {
            Some(wait) => tokio::time::timeout(wait, all).await,
            None => Ok(all.await),
        };
        match ended {
            Ok(result) => result?,
            Err(_) => {
                let mut unanswered = waiting.iter().flatten();
                let key = unanswered.next().map(|(key, _, _)| key.clone()).unwrap_or_default();
                for (_, _, span) in waiting.iter().flatten() {
                    crate::telemetry::record_error(span, &"timeout", "no answer");
                }
                return Err(McpError::internal(format!("the client did not answer {key:?} in time")));
            }
        }
        Ok(answered.into_iter().flatten().collect())
    }

    /// How many server-to-client requests wait for an answer.
    #[cfg(test)]
    pub(crate) fn pending_len(&self) -> usize {
        lock(&self.pending).len()
    }
}

/// The ids one [`Session::ask`] registered; dropping it unregisters them,
/// and withdraws from the client those it has not answered.
struct Registered<'a> {
    session: &'a Session,
    outbound: &'a Outbound,
    ids: Vec<RequestId>,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        let unanswered: Vec<&RequestId> = {
            let mut pending = lock(&self.session.pending);
            self.ids.iter().filter(|id| pending.remove(*id).is_some()).collect()
        };
        if !unanswered.is_empty() {
            let mut withdrawn = lock(&self.session.withdrawn);
            for id in &unanswered {
                if withdrawn.len() >= WITHDRAWN_KEPT {
                    withdrawn.pop_front();
                }
                withdrawn.push_back((*id).clone());
            }
        }
        for id in unanswered {
            let params = serde_json::json!({"requestId": id, "reason": "no longer needed: the call it was for ended"});
            let _ = self
                .outbound
                .send(jsonrpc::encode_notification("notifications/cancelled", &params));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn session() -> Session {
        Session::new(None, "2025-11-25", ClientCapabilities::default(), None)
    }

    fn asks(n: usize) -> Map<String, Value> {
        (0..n)
            .map(|i| (format!("k{i}"), json!({"method": "roots/list", "params": {}})))
            .collect()
    }

    fn response(line: &[u8], outcome: &str) -> jsonrpc::Response {
        let sent: Value = serde_json::from_slice(line).unwrap_or_default();
        let reply = format!(r#"{{"jsonrpc":"2.0","id":{},{outcome}}}"#, sent["id"]);
        match jsonrpc::parse(reply.as_bytes()) {
            Ok(jsonrpc::Message::Response(r)) => r,
            _ => panic!("not a response: {reply}"),
        }
    }

    #[test]
    fn streams_are_counted_per_principal_and_in_all() {
        let streams = Arc::new(Streams::new(SubscriptionLimits {
            max_streams: 3,
            max_streams_per_principal: 2,
            max_anonymous_streams: 1,
            ..SubscriptionLimits::default()
        }));
        let a1 = streams.open(Some("alice"));
        let a2 = streams.open(Some("alice"));
        assert!(a1.is_ok() && a2.is_ok());
        assert!(streams.open(Some("alice")).is_err(), "two per principal");
        let anon = streams.open(None);
        assert!(anon.is_ok());
        assert!(streams.open(Some("bob")).is_err(), "three in all");
        drop(a1);
        assert_eq!(streams.total(), 2);
        assert!(streams.open(None).is_err(), "one without a principal");
        assert!(streams.open(Some("bob")).is_ok());
    }

    #[test]
    fn a_session_whose_input_ended_keeps_no_subscription() {
        let s = session();
        let streams = Arc::new(Streams::new(SubscriptionLimits::default()));
        assert!(s.subscribe("file:///a".into(), &streams).is_ok());
        s.input_ended();
        assert!(s.subscribed().is_empty());
        assert_eq!(streams.subscribed(), 0);
        // A subscribe that was still running keeps nothing either.
        assert!(s.subscribe("file:///b".into(), &streams).is_err());
        assert!(s.subscribed().is_empty());
        assert_eq!(streams.subscribed(), 0);
    }

    #[test]
    fn a_session_follows_a_bounded_number_of_resources() {
        let s = session();
        let streams = Arc::new(Streams::new(SubscriptionLimits {
            max_resource_subscriptions: 2,
            ..SubscriptionLimits::default()
        }));
        assert!(s.subscribe("a://1".into(), &streams).is_ok());
        assert!(s.subscribe("a://2".into(), &streams).is_ok());
        assert!(s.subscribe("a://1".into(), &streams).is_ok(), "again: no change");
        assert!(s.subscribe("a://3".into(), &streams).is_err());
        s.unsubscribe("a://1");
        assert!(s.subscribe("a://3".into(), &streams).is_ok());
    }

    #[test]
    fn sessions_and_streams_share_one_budget_of_bytes() {
        let cost = subscription_cost("a://1");
        let streams = Arc::new(Streams::new(SubscriptionLimits {
            max_subscribed_bytes: 3 * cost,
            ..SubscriptionLimits::default()
        }));
        let (one, two) = (session(), session());
        assert!(one.subscribe("a://1".into(), &streams).is_ok());
        assert!(one.subscribe("a://1".into(), &streams).is_ok(), "again: counted once");
        assert!(two.subscribe("a://1".into(), &streams).is_ok());
        let stream = streams.hold(cost).expect("a listen stream's URI");
        assert_eq!(streams.subscribed(), 3 * cost);
        let full = two.subscribe("a://2".into(), &streams).expect_err("past the budget");
        assert!(full.message().contains("max_subscribed_bytes"), "{full:?}");
        assert!(!two.is_subscribed("a://2"), "a refused URI is not followed");
        assert!(streams.hold(1).is_err());
        two.unsubscribe("a://1");
        two.unsubscribe("a://1");
        assert_eq!(streams.subscribed(), 2 * cost, "given back once");
        assert!(two.subscribe("a://2".into(), &streams).is_ok());
        drop((one, stream));
        assert_eq!(
            streams.subscribed(),
            cost,
            "a session or stream that ends gives back all it held"
        );
        drop(two);
        assert_eq!(streams.subscribed(), 0);
    }

    #[tokio::test]
    async fn an_error_answer_leaves_nothing_pending() {
        let s = Arc::new(session());
        let (tx, mut rx) = crate::outbound::stream();
        let asking = tokio::spawn({
            let s = s.clone();
            async move { s.ask(&asks(3), &tx).await }
        });
        let first = rx.recv().await;
        assert_eq!(s.pending_len(), 3);
        assert!(s.deliver(response(&first, r#""error":{"code":-1,"message":"no"}"#)));
        assert!(asking.await.unwrap().is_err());
        assert_eq!(s.pending_len(), 0, "the two unanswered asks must not stay pending");
    }

    #[tokio::test]
    async fn an_error_answer_to_a_later_ask_fails_the_call_at_once() {
        let s = Arc::new(session());
        let (tx, mut rx) = crate::outbound::stream();
        let asking = tokio::spawn({
            let s = s.clone();
            async move { s.ask(&asks(2), &tx).await }
        });
        let first = rx.recv().await;
        let second = rx.recv().await;
        // The first is never answered; the second is refused.
        assert!(s.deliver(response(&second, r#""error":{"code":-1,"message":"no"}"#)));
        let failed = tokio::time::timeout(Duration::from_secs(5), asking)
            .await
            .expect("not held until the first ask's timeout")
            .unwrap()
            .expect_err("a refused ask fails the call");
        assert!(failed.message().contains("\"k1\" with an error: no"), "{failed:?}");
        assert_eq!(s.pending_len(), 0);
        // The first is withdrawn: the client stops showing it.
        let withdrawn: Value = serde_json::from_slice(&rx.recv().await).unwrap();
        let first: Value = serde_json::from_slice(&first).unwrap();
        assert_eq!(withdrawn["method"], "notifications/cancelled", "{withdrawn}");
        assert_eq!(withdrawn["params"]["requestId"], first["id"], "{withdrawn}");
        // An answer that crossed the withdrawal is taken (once), not refused.
        let late = serde_json::to_vec(&first).unwrap();
        assert!(s.deliver(response(&late, r#""result":{"roots":[]}"#)));
        assert!(!s.deliver(response(&late, r#""result":{"roots":[]}"#)));
    }

    #[test]
    fn a_cancelled_request_that_ends_late_leaves_its_ids_next_request_cancellable() {
        let s = Arc::new(session());
        let id = RequestId::Number(5);
        let first = s.running(id.clone(), crate::cancel::Cancellation::new()).expect("free");
        assert!(
            s.running(id.clone(), crate::cancel::Cancellation::new()).is_none(),
            "taken"
        );
        assert!(s.cancel_request(&id));
        // The id is free once cancelled, before the first request's future ends.
        let second_token = crate::cancel::Cancellation::new();
        let second = s.running(id.clone(), second_token.clone()).expect("free again");
        drop(first);
        assert!(s.cancel_request(&id), "the second is still counted");
        assert!(second_token.is_cancelled());
        drop(second);
    }

    #[tokio::test]
    async fn a_dropped_ask_leaves_nothing_pending() {
        let s = session();
        let (tx, _rx) = crate::outbound::stream();
        let asks = asks(2);
        let fut = s.ask(&asks, &tx);
        tokio::select! {
            _ = fut => panic!("nobody answered"),
            _ = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
        assert_eq!(s.pending_len(), 0);
    }
}
