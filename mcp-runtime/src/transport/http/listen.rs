//! The stand-alone HTTP server: a TCP listener, one hyper connection per
//! accepted socket, and a graceful stop that loses no request a client has
//! already sent.

use super::body::McpBody;
use super::conns::{Activity, Closed, Connections, Limits, Metered, RefusalLog, Refusing, Slot, Sparse};
use super::handshakes;
use super::stop::{Stop, Stopping, Watch};
use super::{status, HttpConfig, McpService};
use crate::boxed::BoxFuture;
use crate::server::Server;
use bytes::Bytes;
use http::{Request, StatusCode};
use http_body::{Body, Frame, SizeHint};
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// After a stop, an idle connection stays open this long, or until its next
/// request (answered with `Connection: close`): a proxy that keeps it alive
/// may be sending a request on it at that very moment, which it will not
/// re-send elsewhere (a POST is not idempotent), so closing it at once would
/// fail that request.
const STOP_WINDOW: Duration = Duration::from_millis(500);

/// A bound HTTP listener serving the MCP endpoint at `config.path`.
pub struct HttpServer {
    listener: TcpListener,
    service: McpService,
}

impl HttpServer {
    /// Binds `addr`. A loopback address keeps the loopback-only host policy;
    /// any other address accepts the configured hosts (or, when none is
    /// configured, any `Host`, while an `Origin` must still be loopback).
    pub fn bind(
        server: Server,
        addr: &str,
        config: HttpConfig,
    ) -> impl Future<Output = std::io::Result<Self>> + Send + '_ {
        Self::bind_boxed(server, addr, config)
    }

    /// [`HttpServer::bind`], compiled here (see [`crate::boxed::BoxFuture`]).
    #[inline(never)]
    fn bind_boxed(server: Server, addr: &str, config: HttpConfig) -> BoxFuture<'_, std::io::Result<Self>> {
        Box::pin(Self::bind_in(server, addr, config))
    }

    async fn bind_in(server: Server, addr: &str, mut config: HttpConfig) -> std::io::Result<Self> {
        let listener = TcpListener::bind(addr).await?;
        let local = listener.local_addr()?;
        if !local.ip().is_loopback() && config.hosts.allowed_hosts.is_empty() {
            config.hosts.loopback_only = false;
        }
        if let Some(files) = super::conns::open_file_limit() {
            // Each connection is a file, and so are the listener, the
            // lingering refusals and what the process holds besides.
            let needed = (config.max_connections as u64)
                .saturating_add(super::conns::MAX_REFUSING as u64)
                .saturating_add(64);
            if config.max_connections > 0 && files < needed {
                tracing::warn!(
                    "the open-file limit ({files}) is below what {} connections need (about {needed}): \
                     past it, connections fail at accept instead of being refused with 503; \
                     raise it (ulimit -n) or lower MCP_MAX_CONNECTIONS",
                    config.max_connections
                );
            }
        }
        server.warn_if_ephemeral_key();
        Ok(HttpServer {
            listener,
            service: McpService::with_config(server, config),
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until `shutdown` completes, then stops gracefully: no new
    /// connection is accepted, open `subscriptions/listen` streams end with
    /// their final result, legacy GET streams end, idle connections close,
    /// and requests in flight finish, for at most
    /// [`HttpConfig::shutdown_grace`]. Returns when every connection is
    /// closed or the grace period is over.
    ///
    /// Connections the kernel had completed before the stop (waiting in the
    /// accept queue) are still served; on Linux the listener first ignores new
    /// connection requests and, for a millisecond, takes in the handshakes
    /// already under way, so that its close resets none (a client that asked
    /// meanwhile finds the port closed when it asks again, a second later).
    /// An idle connection stays open for
    /// half a second after the stop, closing after its next request if one
    /// comes: behind a load balancer that keeps connections alive, a replica
    /// restarted this way fails no request.
    ///
    /// Meanwhile the caps and timeouts of [`HttpConfig`] hold: a connection
    /// past [`HttpConfig::max_connections`] or
    /// [`HttpConfig::max_connections_per_peer`] is answered 503 and closed, one
    /// that does not send a complete request head within
    /// [`HttpConfig::header_read_timeout`] or stays idle longer than
    /// [`HttpConfig::idle_timeout`] is closed.
    ///
    /// The serving itself is compiled in this crate, not in the caller's:
    /// `shutdown` is boxed, and so is the future returned.
    pub fn serve_until<'a>(
        self,
        shutdown: impl Future<Output = ()> + Send + 'a,
    ) -> impl Future<Output = std::io::Result<()>> + Send + 'a {
        self.serve_boxed(Box::pin(shutdown))
    }

    /// [`HttpServer::serve_until`] with nothing generic: never inlined into
    /// the caller, so the future it boxes is compiled here.
    #[inline(never)]
    fn serve_boxed<'a>(self, shutdown: BoxFuture<'a, ()>) -> BoxFuture<'a, std::io::Result<()>> {
        Box::pin(self.run_until(shutdown))
    }

    async fn run_until(self, shutdown: BoxFuture<'_, ()>) -> std::io::Result<()> {
        let HttpServer { listener, service } = self;
        let stop = Stop::default();
        let config = &service.config;
        let mut gate = Gate {
            conns: Connections::new(Limits {
                max_connections: config.max_connections,
                max_per_peer: config.max_connections_per_peer,
                header_read: config.header_read_timeout,
                idle: config.idle_timeout,
            }),
            refusing: Refusing::default(),
            log: RefusalLog::default(),
        };
        // Tells the connections past a deadline to close, while serving.
        let sweeper = AbortOnDrop(tokio::spawn(gate.conns.clone().sweep()));
        // Every connection's task; finished ones are reaped as new ones come.
        let mut open = JoinSet::new();
        tokio::pin!(shutdown);
        let mut failures = AcceptFailures::default();
        loop {
            tokio::select! {
                _ = &mut shutdown => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, peer)) => {
                        gate.accept(&mut open, stream, peer, &service, &stop);
                        while open.try_join_next().is_some() {}
                    }
                    Err(e) => {
                        failures.note(&e);
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
            }
        }
        // Closing the listener resets the connections still in its queue,
        // after their clients may have sent a request: take them in first.
        drain(listener, &mut open, &service, &stop, &mut gate).await;
        let grace = service.config.shutdown_grace;
        tracing::info!("stopping: no new connections; waiting up to {grace:?} for requests in flight");
        service.server.shutdown();
        stop.trigger();
        let started = tokio::time::Instant::now();
        let all_closed = async { while open.join_next().await.is_some() {} };
        if tokio::time::timeout(grace, all_closed).await.is_err() {
            tracing::warn!("stopping: requests still in flight after {grace:?} are dropped");
            open.abort_all();
            while open.join_next().await.is_some() {}
        }
        // Tasks run on past their requests: what is left of the grace is theirs.
        let stopped = service.server.stop_tasks(grace.saturating_sub(started.elapsed())).await;
        if stopped > 0 {
            tracing::warn!("stopping: {stopped} task(s) still running were recorded failed");
        }
        drop(sweeper);
        Ok(())
    }

    /// Serves until the process is asked to stop (SIGTERM or SIGINT on
    /// Unix, Ctrl-C elsewhere), then stops gracefully (see
    /// [`HttpServer::serve_until`]). The signal handlers are in place
    /// before the first connection is accepted.
    pub fn serve(self) -> impl Future<Output = std::io::Result<()>> + Send {
        self.serve_on_signal()
    }

    /// [`HttpServer::serve`], compiled here (see [`crate::boxed::BoxFuture`]).
    #[inline(never)]
    fn serve_on_signal(self) -> BoxFuture<'static, std::io::Result<()>> {
        Box::pin(async move {
            let stop = super::super::stop_signal_installed().await;
            self.run_until(stop).await
        })
    }
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Failed accepts (out of file descriptors, most often), said at most once a
/// minute: the accept loop retries every 50 ms.
#[derive(Default)]
struct AcceptFailures(Sparse);

impl AcceptFailures {
    fn note(&mut self, e: &std::io::Error) {
        if let Some((more, _)) = self.0.due() {
            tracing::warn!("accept failed: {e} ({more} more failures since the last line; said at most once a minute)");
        }
    }
}

/// Admission of accepted connections: the caps, and the refusals.
struct Gate {
    conns: Arc<Connections>,
    refusing: Refusing,
    log: RefusalLog,
}

impl Gate {
    /// Serves an accepted connection, or answers it 503 when a cap is reached.
    fn accept(
        &mut self,
        open: &mut JoinSet<()>,
        stream: TcpStream,
        peer: SocketAddr,
        service: &McpService,
        stop: &Stop,
    ) {
        match self.conns.admit(peer) {
            Ok(slot) => connection(open, stream, peer, service, stop.watch(), slot, *self.conns.limits()),
            Err(refused) => {
                self.log.note(&refused);
                self.refusing.refuse(open, stream, &refused);
            }
        }
    }
}

/// Serves every connection waiting in the listener's queue, then closes
/// the listener. The kernel is asked directly until its queue is empty: the
/// reactor may not have reported the newest connections yet, and closing
/// the listener would reset them. Where new connection requests can be
/// ignored first (Linux, [`handshakes::ignore_new`]), the queue is asked
/// again after [`HANDSHAKE_WAIT`], so that the handshakes under way complete
/// into it rather than in the moment between the last look and the close;
/// elsewhere one completed in that moment is reset.
async fn drain(listener: TcpListener, open: &mut JoinSet<()>, service: &McpService, stop: &Stop, gate: &mut Gate) {
    let listener = match listener.into_std() {
        Ok(listener) => listener,
        Err(e) => {
            tracing::warn!("stopping: cannot take in the connections still queued: {e}");
            return;
        }
    };
    let ignoring = match handshakes::ignore_new(&listener) {
        Ok(()) => true,
        Err(e) => {
            if e.kind() != std::io::ErrorKind::Unsupported {
                tracing::debug!("stopping: new connections are not ignored before the close: {e}");
            }
            false
        }
    };
    take_queued(&listener, open, service, stop, gate);
    if ignoring {
        // A connection requested from now on waits for its client's next
        // try (and finds the port closed), so this wait is short.
        tokio::time::sleep(HANDSHAKE_WAIT).await;
        take_queued(&listener, open, service, stop, gate);
    }
}

/// How long a stopping listener that ignores new connection requests stays
/// open for the handshakes already under way: one round trip completes
/// each, and from a load balancer on the same host or network that takes
/// far less.
const HANDSHAKE_WAIT: Duration = Duration::from_millis(1);

/// Serves the connections in `listener`'s queue, until it is empty.
fn take_queued(
    listener: &std::net::TcpListener,
    open: &mut JoinSet<()>,
    service: &McpService,
    stop: &Stop,
    gate: &mut Gate,
) {
    let mut errors = 0;
    loop {
        let accepted = listener.accept().and_then(|(stream, peer)| {
            stream.set_nonblocking(true)?;
            Ok((TcpStream::from_std(stream)?, peer))
        });
        match accepted {
            Ok((stream, peer)) => gate.accept(open, stream, peer, service, stop),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) if errors < 16 => {
                errors += 1;
                tracing::warn!("accept failed while stopping: {e}");
            }
            Err(_) => break,
        }
    }
}

/// What every request of one connection shares (one `Arc` clone per request).
struct Conn {
    service: McpService,
    activity: Arc<Activity>,
    stopping: Stopping,
}

/// A response body that tells the connection's [`Activity`] when it ends
/// (written or dropped): the connection is busy until then.
struct Answer {
    body: McpBody,
    conn: Arc<Conn>,
}

impl Drop for Answer {
    fn drop(&mut self) {
        self.conn.activity.ended();
    }
}

impl Body for Answer {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Serves one accepted connection on its own task until it closes. On a
/// stop, a request in progress finishes; the connection then closes after
/// its next request (told `Connection: close`), or once it has stayed
/// [`STOP_WINDOW`] without one. The sweeper of `conns` may close it sooner:
/// a request head too slow, or idle too long.
fn connection(
    open: &mut JoinSet<()>,
    stream: TcpStream,
    peer: SocketAddr,
    service: &McpService,
    mut watch: Watch,
    slot: Slot,
    limits: Limits,
) {
    // Small SSE frames must not wait for delayed ACKs (Nagle).
    let _ = stream.set_nodelay(true);
    let activity = slot.activity.clone();
    let shared = Arc::new(Conn {
        service: service.clone(),
        activity: activity.clone(),
        stopping: watch.stopping(),
    });
    let io = Metered {
        stream,
        activity: activity.clone(),
    };
    open.spawn(async move {
        // Counted among the open connections until this task ends.
        let _slot = slot;
        let svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
            let conn = shared.clone();
            conn.activity.head();
            // A request that comes after the stop is the connection's last,
            // and its answer says so before the connection closes.
            let last = conn.stopping.get();
            async move {
                let path = req.uri().path();
                let service = &conn.service;
                let metadata = service.config.auth.is_some() && path.starts_with(super::auth::WELL_KNOWN_METADATA);
                let mut response = if path == service.config.path || metadata {
                    service.serve(req, Some(peer.ip())).await
                } else if path == HEALTHZ || path == READYZ {
                    health(service, path == READYZ, conn.stopping.get())
                } else {
                    status(StatusCode::NOT_FOUND)
                };
                if last {
                    response
                        .headers_mut()
                        .insert(http::header::CONNECTION, http::HeaderValue::from_static("close"));
                }
                Ok::<_, Infallible>(response.map(|body| Answer { body, conn }))
            }
        });
        let conn = hyper::server::conn::http1::Builder::new()
            .keep_alive(true)
            .serve_connection(hyper_util::rt::TokioIo::new(io), svc);
        tokio::pin!(conn);
        let mut graceful = false;
        // Made only once the server stops: the request path pays nothing.
        // The requests seen when this connection saw the stop, and its window.
        let mut stopped: Option<(u64, Pin<Box<tokio::time::Sleep>>)> = None;
        let mut registered = false;
        let ended = std::future::poll_fn(|cx| {
            if !registered {
                // Registered before the first look: a sweep in between wakes it.
                activity.register(cx.waker());
                registered = true;
            }
            if activity.expired() {
                return Poll::Ready(Err(activity.why(&limits)));
            }
            if !graceful && watch.poll_stopped(cx) {
                let (seen, window) =
                    stopped.get_or_insert_with(|| (activity.heads(), Box::pin(tokio::time::sleep(STOP_WINDOW))));
                if activity.heads() > *seen || window.as_mut().poll(cx).is_ready() {
                    // Finish the response in progress (telling the client
                    // the connection closes), then close.
                    conn.as_mut().graceful_shutdown();
                    graceful = true;
                }
            }
            let polled = conn.as_mut().poll(cx).map_err(Closed::from);
            // A request that came after the stop: close after it, not at the window's end.
            if !graceful && stopped.as_ref().is_some_and(|(seen, _)| activity.heads() > *seen) {
                conn.as_mut().graceful_shutdown();
                graceful = true;
            }
            polled
        })
        .await;
        if let Err(e) = ended {
            tracing::debug!(%peer, "connection ended: {e}");
        }
    });
}

/// Liveness: answered 200 while the process serves at all.
pub const HEALTHZ: &str = "/healthz";
/// Readiness: 200 `ready`, or 503 `stopping` (the server was asked to stop),
/// `waiting` (a dependency is awaited: `for` names them) or `shedding`
/// (requests past `max_in_flight` are being refused).
pub const READYZ: &str = "/readyz";

/// The answer of `/healthz` (`ready` false) or `/readyz`: a small JSON
/// object, `{"status":"..."}`, never cached.
fn health(service: &McpService, ready: bool, stopping: bool) -> http::Response<McpBody> {
    let stopping = stopping || service.server().is_shutting_down();
    let awaited = if ready && !stopping {
        service.server().awaited()
    } else {
        Vec::new()
    };
    let (code, said) = if !ready {
        (StatusCode::OK, "alive")
    } else if stopping {
        (StatusCode::SERVICE_UNAVAILABLE, "stopping")
    } else if !awaited.is_empty() {
        (StatusCode::SERVICE_UNAVAILABLE, "waiting")
    } else if service.is_shedding() {
        (StatusCode::SERVICE_UNAVAILABLE, "shedding")
    } else {
        (StatusCode::OK, "ready")
    };
    let body = if awaited.is_empty() {
        format!("{{\"status\":\"{said}\"}}")
    } else {
        serde_json::json!({"status": said, "for": awaited}).to_string()
    };
    let mut r = http::Response::new(McpBody::full(body));
    *r.status_mut() = code;
    let headers = r.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    headers.insert(http::header::CACHE_CONTROL, http::HeaderValue::from_static("no-store"));
    r
}
