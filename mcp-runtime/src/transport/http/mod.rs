//! Streamable HTTP: one endpoint. POST carries every message; a legacy
//! (2025-11-25) session also uses GET (its stream) and DELETE (its end);
//! GET/DELETE without a session id, or any other method, is 405 (with an
//! unknown session id, 404).
//!
//! The transport turns a POST into one message plus the header facts the
//! dispatcher checks, and the dispatcher's answer into a JSON body, an SSE
//! stream (when notifications precede the result), or a status code. It
//! knows no method or tool names. [`McpService`] is a tower `Service`, so
//! the endpoint mounts into an existing axum application at any path:
//!
//! ```ignore
//! let app = axum::Router::new().route_service("/tools/mcp", McpService::new(server));
//! ```

mod accept;
mod auth;
mod body;
mod conns;
mod cors;
mod guard;
mod handshakes;
mod listen;
#[cfg(unix)]
mod rlimit;
mod stop;

pub use body::McpBody;
pub use guard::{HostPolicy, InvalidHost};
pub use listen::HttpServer;

use crate::cancel::Cancellation;
use crate::dispatch::{Reply, Scope};
use crate::headers::HeaderFacts;
use crate::jsonrpc::{self, Message};
use crate::server::Server;
use crate::session::{Session, SessionStore};
use bytes::Bytes;
use http::{header, HeaderMap, Method, Request, Response, StatusCode};
use std::borrow::Cow;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use std::time::Duration;

/// Settings of the HTTP endpoint.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Host/Origin policy against DNS rebinding (default: loopback hosts
    /// only; [`HostPolicy::allowing`] adds the names a deployment serves,
    /// `MCP_ALLOWED_HOSTS` or `--allowed-host` on the command line).
    pub hosts: HostPolicy,
    /// The largest request body accepted (default 4 MiB; larger ⇒ 413).
    pub max_body: usize,
    /// How long a request body may take to arrive once its head has
    /// (default 30 s; slower ⇒ 408 and the connection closes; zero: no
    /// limit). `MCP_BODY_READ_TIMEOUT` on the command line.
    pub body_read_timeout: Duration,
    /// How long a connection of [`HttpServer`] may take to send a complete
    /// request head, from its accept or from the first byte after its
    /// previous response (default 10 s; slower ⇒ closed; zero: no limit).
    /// `MCP_HEADER_READ_TIMEOUT` on the command line.
    pub header_read_timeout: Duration,
    /// How long a kept-alive connection of [`HttpServer`] may stay idle
    /// between requests (default 75 s, longer than the 60 s idle timeout of
    /// common proxies and load balancers, so they close first; zero: no
    /// limit). `MCP_IDLE_TIMEOUT` on the command line. Connections are
    /// checked a few times per timeout: one past it closes within a quarter
    /// of the shortest timeout (1 s at most).
    pub idle_timeout: Duration,
    /// At most this many connections of [`HttpServer`] open at once
    /// (default 4096; zero: no cap). One more is answered 503 with
    /// `Retry-After: 1` and `Connection: close`, unread. Keep it below the
    /// open-file limit (`ulimit -n`), or accept fails first.
    /// `MCP_MAX_CONNECTIONS` on the command line.
    pub max_connections: usize,
    /// At most this many connections of [`HttpServer`] open at once from one
    /// address (an IPv6 /64 counts as one; default 256; zero: no cap); one
    /// more is answered like one past [`HttpConfig::max_connections`].
    /// Behind a proxy every connection comes from the proxy: raise it there,
    /// or set zero and let the proxy limit its clients.
    /// `MCP_MAX_CONNECTIONS_PER_PEER` on the command line.
    pub max_connections_per_peer: usize,
    /// At most this many requests being served at once (zero, the default:
    /// no bound but the connections'). One more is answered at once 503
    /// with `Retry-After: 1` and a JSON-RPC error, unread, rather than
    /// queued; [`HttpServer`]'s `/readyz` says `shedding` meanwhile. A
    /// request counts from its head to the start of its answer (a stream's
    /// later events do not); a browser's CORS preflight, and a request
    /// refused for its `Host` or `Origin`, is answered without being
    /// counted. `MCP_MAX_IN_FLIGHT` on the command line.
    pub max_in_flight: usize,
    /// Interval of SSE keep-alive comments on quiet streams (default 15 s;
    /// zero: none).
    pub keep_alive: Duration,
    /// The path served by [`serve`] (default `/mcp`); ignored by a mounted service.
    pub path: String,
    /// A header naming the authenticated principal, set by an authenticating
    /// proxy in front of the server (for example `x-authenticated-user`).
    /// `requestState` is bound to it. A request that carries it more than
    /// once is refused (400): a proxy that adds its value after the
    /// client's own would otherwise leave the client's first. `None` (the
    /// default): no principal.
    pub principal_header: Option<String>,
    /// Legacy (2025-11-25) sessions idle longer than this are dropped (default 30 minutes).
    pub session_idle: Duration,
    /// At most this many legacy sessions at once (default 10 000): past it,
    /// the longest idle session of the caller with the most makes room.
    pub max_sessions: usize,
    /// At most this many legacy sessions per caller (the principal, else
    /// the client's address; default 64): past it, that caller's own longest
    /// idle session makes room, so a caller opening sessions in a loop never
    /// ends another's (`MCP_MAX_SESSIONS_PER_CALLER`). 0: no bound per
    /// caller (behind a proxy that hides the clients' addresses, with no
    /// principal to tell them apart, every client is one caller).
    pub max_sessions_per_caller: usize,
    /// How long a stopping [`HttpServer`] waits for requests in flight to
    /// finish before it returns anyway (default 30 s).
    pub shutdown_grace: Duration,
    /// Put before every legacy session id this server mints (default none):
    /// a load balancer routes a session's requests to the replica that
    /// holds it by this prefix (`MCP_SESSION_PREFIX` on the command line).
    pub session_prefix: String,
    /// OAuth 2.1 authorization (default none): every request needs a bearer
    /// token the [`ResourceServer`](crate::auth::ResourceServer)'s verifier
    /// accepts, and the RFC 9728 metadata is served at
    /// `/.well-known/oauth-protected-resource` (and its path-suffixed form).
    pub auth: Option<crate::auth::ResourceServer>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            hosts: HostPolicy {
                allowed_hosts: Vec::new(),
                loopback_only: true,
            },
            max_body: 4 * 1024 * 1024,
            body_read_timeout: Duration::from_secs(30),
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(75),
            max_connections: 4096,
            max_connections_per_peer: 256,
            max_in_flight: 0,
            keep_alive: Duration::from_secs(15),
            path: "/mcp".into(),
            principal_header: None,
            session_idle: Duration::from_secs(30 * 60),
            max_sessions: 10_000,
            max_sessions_per_caller: 64,
            shutdown_grace: Duration::from_secs(30),
            session_prefix: String::new(),
            auth: None,
        }
    }
}

/// The MCP endpoint as a tower `Service` over `http` requests.
#[derive(Clone)]
pub struct McpService {
    server: Server,
    config: Arc<HttpConfig>,
    sessions: Arc<SessionStore>,
    /// Requests being served, counted when `max_in_flight` bounds them.
    in_flight: Arc<std::sync::atomic::AtomicUsize>,
}

/// A request's place among those being served; given back when dropped.
struct Admitted(Arc<std::sync::atomic::AtomicUsize>);

impl Drop for Admitted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

impl McpService {
    /// The endpoint of `server` with the default settings: loopback hosts
    /// only, so a request naming any other host is refused with 403. A
    /// deployment under its own name uses [`McpService::with_config`] with
    /// [`HostPolicy::allowing`] that name.
    pub fn new(server: Server) -> Self {
        McpService::with_config(server, HttpConfig::default())
    }

    /// The endpoint with these settings.
    pub fn with_config(server: Server, config: HttpConfig) -> Self {
        McpService {
            server,
            sessions: Arc::new(SessionStore::new(
                config.session_idle,
                config.max_sessions,
                config.max_sessions_per_caller,
            )),
            config: Arc::new(config),
            in_flight: Arc::default(),
        }
    }

    /// Handles one HTTP request: the returned future answers it. The
    /// client's address is the request's [`ClientAddr`] extension, when the
    /// embedding server put one there.
    pub fn handle<B>(&self, request: Request<B>) -> impl Future<Output = Response<McpBody>> + Send + '_
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let peer = request.extensions().get::<ClientAddr>().map(|c| c.0);
        self.serve(request, peer)
    }

    /// Handles one HTTP request from `peer`, the client's address when the
    /// stand-alone server knows it: the introspecting verifier bounds
    /// unknown-token checks per address, and anonymous callers' tasks are
    /// counted per address.
    // Not an `async fn`: the request is taken apart before the future is
    // made, so that the future (which hyper keeps in a box of its own for
    // every connection, busy or idle) holds its parts once, not also the
    // whole request they came from.
    #[allow(clippy::manual_async_fn)]
    pub(crate) fn serve<B>(
        &self,
        request: Request<B>,
        peer: Option<std::net::IpAddr>,
    ) -> impl Future<Output = Response<McpBody>> + Send + '_
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        // Taken apart so that nothing holding the connection's read buffer
        // outlives the checks (a listen stream may stay open for hours).
        let (parts, body) = request.into_parts();
        let http::request::Parts {
            method,
            uri,
            version,
            mut headers,
            extensions,
            ..
        } = parts;
        let via = Via {
            peer,
            http: version_text(version),
            // Which answers the client takes: a JSON body, an event stream.
            accepts: accept::Accepts::of(&headers),
        };
        drop(extensions);
        async move {
            // RFC 9112 section 3.2: a request without Host is a bad request.
            let Some(host) =
                header_text(&headers, &header::HOST).or_else(|| uri.authority().map(|a| a.as_str().into()))
            else {
                let e = crate::error::McpError::invalid_request("Bad Request: missing Host header");
                return error_response(StatusCode::BAD_REQUEST, &e);
            };
            let origin = headers.get(header::ORIGIN).cloned();
            if let Err(why) = self
                .config
                .hosts
                .check(Some(&host), origin.as_ref().map(crate::headers::text).as_deref())
            {
                return forbidden(why);
            }
            drop(host);
            // A browser's preflight: answered before authorization, which
            // it carries none of.
            if origin.is_some() && cors::is_preflight(&method, &headers) {
                return cors::shown(cors::preflight(&headers), origin);
            }
            // Past the bound, refused at once: a queue without end helps nobody.
            let _admitted = match self.config.max_in_flight {
                0 => None,
                max => match self.admit(max) {
                    Some(admitted) => Some(admitted),
                    None => return cors::shown(shed(), origin),
                },
            };
            // Answered from here on, then shown to the page of its origin.
            let response = 'answer: {
                let identity = match &self.config.auth {
                    None => None,
                    Some(auth) => {
                        if uri.path().starts_with(auth::WELL_KNOWN_METADATA) {
                            break 'answer auth::metadata(auth, &method, uri.path());
                        }
                        match auth::authorize(auth, &headers, via.peer).await {
                            Ok(token) => Some(token),
                            Err(refusal) => break 'answer refusal,
                        }
                    }
                };
                // The token is for this server alone: nothing below sees it. A
                // stream it opens ends when its verifier refuses it later on.
                let bearer = headers.remove(header::AUTHORIZATION);
                let watch = |bearer: Option<http::HeaderValue>| {
                    let auth = self.config.auth.as_ref()?;
                    auth.watch(crate::auth::bearer_value(bearer.as_ref()?).ok()??)
                };
                // Who is asking: the token's subject, or what the authenticating
                // proxy in front says in `principal_header`.
                let principal = match &identity {
                    Some(token) => Some(token.subject.clone()),
                    None => match self.config.principal_header.as_deref() {
                        // Twice: a proxy that adds its own after the client's
                        // would leave the client's first. Neither is trusted.
                        Some(h) if headers.get_all(h).iter().nth(1).is_some() => {
                            let e = crate::error::McpError::invalid_request(format!(
                                "Bad Request: the {h} header was sent more than once"
                            ));
                            break 'answer error_response(StatusCode::BAD_REQUEST, &e);
                        }
                        Some(h) => header_text(&headers, h).map(Cow::into_owned),
                        None => None,
                    },
                };
                // A legacy session named by `Mcp-Session-Id`: found, unknown, or none.
                let (session, unknown_session) = match header_text(&headers, &SESSION_ID) {
                    None => (None, false),
                    // Another principal's session is as good as unknown.
                    Some(id) => match self.sessions.get(&id, principal.as_deref()) {
                        Some(s) => (Some(s), false),
                        None => (None, true),
                    },
                };
                // A session's GET and DELETE speak its revision.
                if let (&Method::GET | &Method::DELETE, Some(_)) = (&method, &session) {
                    if let Some(refused) = legacy_version_refused(&headers) {
                        break 'answer refused;
                    }
                }
                let accepts = via.accepts;
                match (&method, &session) {
                    (&Method::POST, _) if !accepts.any() => {
                        break 'answer not_acceptable("application/json or text/event-stream")
                    }
                    (&Method::POST, _) => {}
                    (&Method::GET, Some(_)) if !accepts.sse => break 'answer not_acceptable("text/event-stream"),
                    (&Method::GET, Some(s)) => {
                        let mut stream = self.session_stream(s.clone(), identity);
                        if let Some(until) = watch(bearer) {
                            stream.body_mut().end_when(until);
                        }
                        break 'answer stream;
                    }
                    (&Method::DELETE, Some(s)) => {
                        if let Some(id) = &s.id {
                            self.sessions.remove(id);
                        }
                        break 'answer status(StatusCode::OK);
                    }
                    (&Method::GET | &Method::DELETE, None) if unknown_session => break 'answer session_not_found(),
                    _ => {
                        let mut r = status(StatusCode::METHOD_NOT_ALLOWED);
                        r.headers_mut()
                            .insert(header::ALLOW, http::HeaderValue::from_static("POST"));
                        break 'answer r;
                    }
                }
                let json = b"application/json";
                let is_json = headers.get(header::CONTENT_TYPE).is_some_and(|ct| {
                    ct.as_bytes()
                        .get(..json.len())
                        .is_some_and(|p| p.eq_ignore_ascii_case(json))
                });
                if !is_json {
                    let e = crate::error::McpError::invalid_request("Content-Type must be application/json");
                    break 'answer error_response(StatusCode::UNSUPPORTED_MEDIA_TYPE, &e);
                }
                let bytes = match body::read(body, self.config.max_body, self.config.body_read_timeout).await {
                    Ok(bytes) => bytes,
                    Err(e) => break 'answer e.response(),
                };
                let parsed = jsonrpc::parse(&bytes);
                // A message of a session (not a modern request) speaks its revision.
                if session.is_some() && parsed.as_ref().is_ok_and(|m| !is_modern(m)) {
                    if let Some(refused) = legacy_version_refused(&headers) {
                        break 'answer refused;
                    }
                }
                let (request, session) = match parsed {
                    Err(rejected) => {
                        let mut r = json_reply(Reply::error(rejected.id.as_ref(), &rejected.error));
                        *r.status_mut() = StatusCode::BAD_REQUEST;
                        break 'answer r;
                    }
                    Ok(_) if unknown_session && !modern_request(&bytes) => break 'answer session_not_found(),
                    Ok(Message::Notification(n)) => {
                        let of = session.as_ref().map(|s| (s.id.as_deref(), s.version));
                        crate::telemetry::notification(
                            &n.method,
                            n.params.as_deref(),
                            "tcp",
                            Some((via.http, &headers)),
                            of,
                            || {
                                // A session's client cancels its request with a notification
                                // (2025-11-25); a 2026-07-28 client closes the request's stream.
                                if let (Some(session), Some(id)) = (&session, crate::jsonrpc::cancelled_request(&n)) {
                                    if session.cancel_request(&id) {
                                        tracing::debug!(%id, "request cancelled by the client");
                                    }
                                }
                            },
                        );
                        break 'answer status(StatusCode::ACCEPTED);
                    }
                    Ok(Message::Response(r)) => {
                        // Only a legacy session's server-to-client request awaits an answer.
                        let id = r.id.clone();
                        if session.is_some_and(|s| s.deliver(r)) {
                            break 'answer status(StatusCode::ACCEPTED);
                        }
                        let e = crate::error::McpError::invalid_request("No request is waiting for this response");
                        // One without a usable id (`jsonrpc::parse` names it "") is answered without one.
                        let id = Some(&id).filter(|id| **id != crate::protocol::RequestId::String(String::new()));
                        let mut reply = json_reply(Reply::error(id, &e));
                        *reply.status_mut() = StatusCode::BAD_REQUEST;
                        break 'answer reply;
                    }
                    // A modern request is served statelessly, whatever session
                    // header an earlier legacy exchange left on it.
                    Ok(Message::Request(r))
                        if session.is_some() && crate::meta::has_protocol_version(r.params.as_deref()) =>
                    {
                        (r, None)
                    }
                    Ok(Message::Request(r)) => (r, session),
                };
                // The request owns what it needs; the body's buffer goes back now.
                drop(bytes);
                // On a live session, `initialize` is the session's to refuse
                // (it is initialized already), not a second session.
                if request.method == "initialize"
                    && session.is_none()
                    && !crate::meta::has_protocol_version(request.params.as_deref())
                {
                    break 'answer self.initialize(&request, principal.as_deref(), via, &headers);
                }
                drop((method, uri));
                let listen = request.method == "subscriptions/listen";
                if listen && !accepts.sse {
                    break 'answer not_acceptable("text/event-stream");
                }
                let until = match listen {
                    true => watch(bearer),
                    false => None,
                };
                let mut response = self
                    .respond(request, HeaderFacts::http(headers), principal, session, identity, via)
                    .await;
                if let Some(until) = until {
                    response.body_mut().end_when(until);
                }
                response
            };
            cors::shown(response, origin)
        }
    }

    /// Opens a legacy session: its id goes back in `Mcp-Session-Id`.
    /// It belongs to `principal` (the token's subject, or the
    /// `principal_header`'s value), if any.
    fn initialize(
        &self,
        request: &jsonrpc::Request,
        principal: Option<&str>,
        via: Via,
        headers: &http::HeaderMap,
    ) -> Response<McpBody> {
        let id = format!("{}{}", self.config.session_prefix, SessionStore::new_id());
        match crate::legacy::initialize(&self.server, request, Some(id.clone()), Some((via.http, headers))) {
            Ok((session, body)) => {
                if let Some(principal) = principal {
                    session.set_owner(principal);
                }
                self.sessions
                    .insert(session, &crate::tasks::caller_key(principal, via.peer));
                let reply = Reply {
                    body: jsonrpc::encode_result_raw(&request.id, &body),
                    status: 200,
                    retry_after: None,
                };
                let mut r = answer(reply, via.accepts, self.config.keep_alive);
                if let Ok(v) = http::HeaderValue::from_str(&id) {
                    r.headers_mut().insert("mcp-session-id", v);
                }
                r
            }
            Err(e) => json_reply(Reply::error(Some(&request.id), &e)),
        }
    }

    /// The GET stream of a legacy session: list changes and subscribed
    /// resource updates, until the client goes away, the access token it
    /// was opened with expires, another GET of the session takes its place,
    /// or the session ends (DELETE, idle).
    fn session_stream(
        &self,
        session: Arc<Session>,
        identity: Option<Arc<crate::auth::AccessToken>>,
    ) -> Response<McpBody> {
        // Counted among the server's streams (capped in total and per principal).
        let slot = match crate::legacy::events::admit(&self.server, &session) {
            Ok(slot) => slot,
            Err(e) => return error_response(StatusCode::TOO_MANY_REQUESTS, &e),
        };
        let (tx, rx) = crate::outbound::stream();
        let server = self.server.clone();
        // The session's one stream: an earlier one ends now.
        let open = session.open_stream();
        let forward: body::ReplyFuture = Box::pin(async move {
            let _slot = slot;
            let _open = crate::telemetry::Held::new(crate::telemetry::Gauge::ListenStreams);
            // Until the access token it was opened with expires, if any,
            // another GET takes its place, or the session ends.
            tokio::select! {
                _ = crate::legacy::events::forward(server, session, tx) => {}
                _ = crate::auth::expired(identity.as_deref()) => {}
                _ = open.ends().cancelled() => {}
            }
            // The server stops (or the bus closed): the stream ends, with
            // no message of its own.
            Reply {
                body: Vec::new(),
                status: 200,
                retry_after: None,
            }
        });
        sse(McpBody::sse(
            Vec::new(),
            rx,
            Some(forward),
            None,
            Cancellation::new(),
            self.config.keep_alive,
        ))
    }

    async fn respond(
        &self,
        request: jsonrpc::Request,
        headers: HeaderFacts,
        principal: Option<String>,
        session: Option<Arc<Session>>,
        identity: Option<Arc<crate::auth::AccessToken>>,
        via: Via,
    ) -> Response<McpBody> {
        let accepts = via.accepts;
        let (tx, mut rx) = crate::outbound::stream();
        let cancel = Cancellation::new();
        // A 2025-11-25 session's JSON-RPC errors go with 200, as that era's
        // clients read them (a 4xx there is a transport failure; a 404 ends
        // the session); authorization's and the rate limit's keep theirs.
        let legacy = session.is_some();
        let mut scope = Scope {
            headers,
            // A client that takes no event stream hears only the answer.
            outbound: accepts.sse.then_some(tx),
            cancel: cancel.clone(),
            principal,
            session,
            identity,
            hide_unreachable: self.config.auth.as_ref().is_some_and(|a| a.hide_unauthorized),
            transport: crate::dispatch::Transport::Http(via.http),
            peer: via.peer,
        };
        let server = self.server.clone();
        let guard = CancelOnDrop(Some(cancel.clone()));
        // The box owns the scope and lends it: held once, not also by value
        // in the dispatcher's future (a listen stream keeps this box open).
        let mut reply: body::ReplyFuture = match scope.session.clone() {
            None => {
                crate::boxed::boxed!(async move { crate::dispatch::handle_in(&server, &request, &mut scope).await })
            }
            // A session's request stops at its `notifications/cancelled`,
            // and is not answered then (its stream ends, or 202).
            Some(session) => {
                let Some(running) = session.running(request.id.clone(), cancel.clone()) else {
                    let error = crate::error::McpError::id_in_flight(&request.id);
                    // A session's JSON-RPC errors go with 200 (see above).
                    let mut refused = Reply::error(Some(&request.id), &error);
                    refused.status = 200;
                    return json_reply(refused);
                };
                let cancelled = cancel.clone();
                crate::boxed::boxed!(async move {
                    let _running = running;
                    tokio::select! {
                        reply = crate::dispatch::handle_in(&server, &request, &mut scope) => reply,
                        () = cancelled.cancelled() => Reply { body: Vec::new(), status: 200, retry_after: None },
                    }
                })
            }
        };
        tokio::select! {
            biased;
            first = rx.recv() => {
                let first = vec![first];
                guard.disarm();
                sse(McpBody::sse(first, rx, Some(reply), None, cancel, self.config.keep_alive))
            }
            done = &mut reply => {
                guard.disarm();
                let mut done = done;
                if legacy && !matches!(done.status, 401 | 403 | 429) {
                    done.status = 200;
                }
                let queued = rx.drain();
                if legacy && done.body.is_empty() {
                    // Cancelled by the client: nothing to answer.
                    return status(StatusCode::ACCEPTED);
                }
                if queued.is_empty() && !accepts.json && done.status == 200 {
                    answer(done, accepts, self.config.keep_alive)
                } else if queued.is_empty() {
                    let challenge = match &self.config.auth {
                        Some(auth) if done.status == 403 => auth::insufficient_scope(auth, &done.body),
                        _ => None,
                    };
                    let mut response = json_reply(done);
                    if let Some(value) = challenge {
                        response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
                    }
                    response
                } else {
                    sse(McpBody::sse(queued, rx, None, Some(done), cancel, self.config.keep_alive))
                }
            }
        }
    }
}

/// How a request came: the client's address, when the stand-alone server
/// knows it, the version of HTTP, and the answers the client takes.
#[derive(Clone, Copy)]
struct Via {
    peer: Option<std::net::IpAddr>,
    http: &'static str,
    accepts: accept::Accepts,
}

/// An HTTP version as `network.protocol.version` names it.
fn version_text(version: http::Version) -> &'static str {
    match version {
        http::Version::HTTP_09 => "0.9",
        http::Version::HTTP_10 => "1.0",
        http::Version::HTTP_2 => "2",
        http::Version::HTTP_3 => "3",
        _ => "1.1",
    }
}

/// Cancels the request if the service future is dropped (client gone)
/// before a response was chosen.
struct CancelOnDrop(Option<Cancellation>);

impl CancelOnDrop {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            c.cancel();
        }
    }
}

/// 404 for a legacy session id this server does not know (expired or
/// never issued): the client starts a new session.
#[cold]
#[inline(never)]
fn session_not_found() -> Response<McpBody> {
    let e = crate::error::McpError::invalid_request("Session not found: initialize a new session");
    error_response(StatusCode::NOT_FOUND, &e)
}

/// The 400 a session's message gets when its `MCP-Protocol-Version` is
/// not a revision of that era (2025-11-25: "invalid or unsupported"); none
/// when it is one, or absent (a client of 2025-03-26 sends none).
fn legacy_version_refused(headers: &HeaderMap) -> Option<Response<McpBody>> {
    let sent = header_text(headers, &crate::headers::PROTOCOL_VERSION)?;
    let sent = sent.trim();
    if crate::legacy::LEGACY_VERSIONS.contains(&sent) {
        return None;
    }
    let e = crate::error::McpError::invalid_request(format!(
        "Bad Request: unsupported MCP-Protocol-Version {sent:?} for this session (it speaks {})",
        crate::legacy::LEGACY_VERSIONS.join(", ")
    ));
    Some(error_response(StatusCode::BAD_REQUEST, &e))
}

/// Whether a message is a request with a modern `_meta` protocol version.
fn is_modern(message: &Message) -> bool {
    matches!(message, Message::Request(r) if crate::meta::has_protocol_version(r.params.as_deref()))
}

/// Whether a message is a request with a modern `_meta` protocol version
/// (read again only when an unknown session id came with it).
fn modern_request(bytes: &[u8]) -> bool {
    jsonrpc::parse(bytes).is_ok_and(|m| is_modern(&m))
}

static SESSION_ID: http::HeaderName = http::HeaderName::from_static("mcp-session-id");

/// A header's value as text (invalid UTF-8 replaced), borrowed from the map.
fn header_text(headers: &HeaderMap, name: impl header::AsHeaderName) -> Option<Cow<'_, str>> {
    headers.get(name).map(crate::headers::text)
}

impl McpService {
    /// Takes a place among the requests being served, if one is free.
    fn admit(&self, max: usize) -> Option<Admitted> {
        let before = self.in_flight.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        let admitted = Admitted(self.in_flight.clone());
        (before < max).then_some(admitted)
    }

    /// Whether requests are being refused for want of room (`/readyz`).
    pub(crate) fn is_shedding(&self) -> bool {
        let max = self.config.max_in_flight;
        max > 0 && self.in_flight.load(std::sync::atomic::Ordering::Acquire) >= max
    }

    /// The server this endpoint serves.
    pub(crate) fn server(&self) -> &Server {
        &self.server
    }
}

/// 403 for a request whose `Host` or `Origin` this server does not serve.
#[cold]
#[inline(never)]
fn forbidden(why: String) -> Response<McpBody> {
    tracing::warn!("{why}");
    error_response(StatusCode::FORBIDDEN, &crate::error::McpError::invalid_request(why))
}

/// 406 for a request whose `Accept` allows none of the answers it could get.
#[cold]
#[inline(never)]
fn not_acceptable(wanted: &str) -> Response<McpBody> {
    let e = crate::error::McpError::invalid_request(format!("Not Acceptable: the Accept header must allow {wanted}"));
    error_response(StatusCode::NOT_ACCEPTABLE, &e)
}

/// A 200 answer as the client takes it: a JSON body, or for a client that
/// takes only event streams the one event of a stream.
fn answer(reply: Reply, accepts: accept::Accepts, keep_alive: Duration) -> Response<McpBody> {
    if accepts.json || reply.status != 200 {
        return json_reply(reply);
    }
    let (_tx, rx) = crate::outbound::stream();
    sse(McpBody::sse(
        Vec::new(),
        rx,
        None,
        Some(reply),
        Cancellation::new(),
        keep_alive,
    ))
}

/// 503 for a request past `max_in_flight`.
#[cold]
#[inline(never)]
fn shed() -> Response<McpBody> {
    let e = crate::error::McpError::internal("Server busy: too many requests in flight; retry in a second");
    let mut r = error_response(StatusCode::SERVICE_UNAVAILABLE, &e);
    r.headers_mut()
        .insert(http::header::RETRY_AFTER, http::HeaderValue::from_static("1"));
    r
}

fn status(code: StatusCode) -> Response<McpBody> {
    let mut r = Response::new(McpBody::empty());
    *r.status_mut() = code;
    r
}

fn json_reply(reply: Reply) -> Response<McpBody> {
    let mut r = Response::new(McpBody::full(reply.body));
    *r.status_mut() = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut()
        .insert(header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    if let Some(seconds) = reply.retry_after {
        r.headers_mut()
            .insert(header::RETRY_AFTER, http::HeaderValue::from(seconds));
    }
    r
}

#[cold]
#[inline(never)]
fn error_response(code: StatusCode, error: &crate::error::McpError) -> Response<McpBody> {
    let mut r = json_reply(Reply::error(None, error));
    *r.status_mut() = code;
    r
}

fn sse(body: McpBody) -> Response<McpBody> {
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, http::HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", http::HeaderValue::from_static("no"));
    r
}

impl<B> tower_service::Service<Request<B>> for McpService
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<McpBody>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { Ok(this.handle(request).await) })
    }
}

/// The client's address, for a server that embeds [`McpService`] to put in
/// each request's extensions (from its connection info) before the service
/// handles it. Anonymous callers are then told apart by address, as the
/// stand-alone server tells them: per-caller rate limits, calls in progress
/// and running tasks, and the introspecting verifier's budget of unknown
/// tokens. Without it, every anonymous caller of an embedded service counts
/// as one.
///
/// ```
/// use mcp_runtime::transport::http::ClientAddr;
/// let mut request = http::Request::new(());
/// request.extensions_mut().insert(ClientAddr([192, 0, 2, 7].into()));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddr(pub std::net::IpAddr);

/// Binds `addr` and serves the MCP endpoint at `/mcp` until the process is
/// asked to stop (see [`HttpServer::serve`]).
pub fn serve<'a>(server: Server, addr: &'a str) -> impl Future<Output = std::io::Result<()>> + Send + 'a {
    serve_at(server, addr)
}

/// [`serve`], compiled here (see [`crate::boxed::BoxFuture`]).
#[inline(never)]
fn serve_at(server: Server, addr: &str) -> crate::boxed::BoxFuture<'_, std::io::Result<()>> {
    Box::pin(async move {
        let http = HttpServer::bind(server, addr, HttpConfig::default()).await?;
        let local = http.local_addr()?;
        tracing::info!("serving MCP over Streamable HTTP at http://{local}/mcp");
        http.serve().await
    })
}
