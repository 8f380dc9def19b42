//! The stand-alone HTTP server: a TCP listener, one hyper connection per
//! accepted socket, and a graceful stop that loses no request a client has
//! already sent.

use super::stop::{Stop, Watch};
use super::{status, HttpConfig, McpService};
use crate::server::Server;
use http::{Request, StatusCode};
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
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
    /// any other address accepts the configured hosts (or any host).
    pub async fn bind(server: Server, addr: &str, mut config: HttpConfig) -> std::io::Result<Self> {
        let listener = TcpListener::bind(addr).await?;
        let local = listener.local_addr()?;
        if !local.ip().is_loopback() && config.hosts.allowed_hosts.is_empty() {
            config.hosts.loopback_only = false;
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
    /// accept queue) are still served, and an idle connection stays open for
    /// half a second after the stop, closing after its next request if one
    /// comes: behind a load balancer that keeps connections alive, a replica
    /// restarted this way fails no request.
    pub async fn serve_until(self, shutdown: impl Future<Output = ()>) -> std::io::Result<()> {
        let HttpServer { listener, service } = self;
        let stop = Stop::default();
        // Every connection's task; finished ones are reaped as new ones come.
        let mut open = JoinSet::new();
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                _ = &mut shutdown => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, peer)) => {
                        connection(&mut open, stream, peer, &service, stop.watch());
                        while open.try_join_next().is_some() {}
                    }
                    Err(e) => {
                        tracing::warn!("accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
            }
        }
        // Closing the listener resets the connections still in its queue,
        // after their clients may have sent a request: take them in first.
        drain(listener, &mut open, &service, &stop);
        let grace = service.config.shutdown_grace;
        tracing::info!("stopping: no new connections; waiting up to {grace:?} for requests in flight");
        service.server.shutdown();
        stop.trigger();
        let all_closed = async { while open.join_next().await.is_some() {} };
        if tokio::time::timeout(grace, all_closed).await.is_err() {
            tracing::warn!("stopping: requests still in flight after {grace:?} are dropped");
            open.abort_all();
            while open.join_next().await.is_some() {}
        }
        Ok(())
    }

    /// Serves until the process is asked to stop (SIGTERM or SIGINT on
    /// Unix, Ctrl-C elsewhere), then stops gracefully (see
    /// [`HttpServer::serve_until`]). The signal handlers are in place
    /// before the first connection is accepted.
    pub async fn serve(self) -> std::io::Result<()> {
        let stop = super::super::stop_signal_installed().await;
        self.serve_until(stop).await
    }
}

/// Serves every connection waiting in the listener's queue, then closes
/// the listener. The kernel is asked directly until its queue is empty: the
/// reactor may not have reported the newest connections yet, and closing
/// the listener would reset them.
fn drain(listener: TcpListener, open: &mut JoinSet<()>, service: &McpService, stop: &Stop) {
    let listener = match listener.into_std() {
        Ok(listener) => listener,
        Err(e) => {
            tracing::warn!("stopping: cannot take in the connections still queued: {e}");
            return;
        }
    };
    let mut errors = 0;
    loop {
        let accepted = listener.accept().and_then(|(stream, peer)| {
            stream.set_nonblocking(true)?;
            Ok((TcpStream::from_std(stream)?, peer))
        });
        match accepted {
            Ok((stream, peer)) => connection(open, stream, peer, service, stop.watch()),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) if errors < 16 => {
                errors += 1;
                tracing::warn!("accept failed while stopping: {e}");
            }
            Err(_) => break,
        }
    }
}

/// Serves one accepted connection on its own task until it closes. On a
/// stop, a request in progress finishes; the connection then closes after
/// its next request (told `Connection: close`), or once it has stayed
/// [`STOP_WINDOW`] without one.
fn connection(open: &mut JoinSet<()>, stream: TcpStream, peer: SocketAddr, service: &McpService, mut watch: Watch) {
    // Small SSE frames must not wait for delayed ACKs (Nagle).
    let _ = stream.set_nodelay(true);
    let service = service.clone();
    // How many requests have come on this connection.
    let requests = Arc::new(AtomicU64::new(0));
    let counted = requests.clone();
    let stopping = watch.stopping();
    open.spawn(async move {
        let svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
            counted.fetch_add(1, Ordering::Relaxed);
            // A request that comes after the stop is the connection's last,
            // and its answer says so before the connection closes.
            let last = stopping.get();
            let service = service.clone();
            async move {
                let path = req.uri().path();
                let metadata = service.config.auth.is_some() && path.starts_with(super::auth::WELL_KNOWN_METADATA);
                let mut response = if path == service.config.path || metadata {
                    service.handle(req).await
                } else {
                    status(StatusCode::NOT_FOUND)
                };
                if last {
                    response
                        .headers_mut()
                        .insert(http::header::CONNECTION, http::HeaderValue::from_static("close"));
                }
                Ok::<_, Infallible>(response)
            }
        });
        let conn = hyper::server::conn::http1::Builder::new()
            .keep_alive(true)
            .serve_connection(hyper_util::rt::TokioIo::new(stream), svc);
        tokio::pin!(conn);
        let mut graceful = false;
        // Made only once the server stops: the request path pays nothing.
        // The requests seen when this connection saw the stop, and its window.
        let mut stopped: Option<(u64, Pin<Box<tokio::time::Sleep>>)> = None;
        let ended = std::future::poll_fn(|cx| {
            if !graceful && watch.poll_stopped(cx) {
                let (seen, window) = stopped.get_or_insert_with(|| {
                    let seen = requests.load(Ordering::Relaxed);
                    (seen, Box::pin(tokio::time::sleep(STOP_WINDOW)))
                });
                if requests.load(Ordering::Relaxed) > *seen || window.as_mut().poll(cx).is_ready() {
                    // Finish the response in progress (telling the client
                    // the connection closes), then close.
                    conn.as_mut().graceful_shutdown();
                    graceful = true;
                }
            }
            let polled = conn.as_mut().poll(cx);
            // A request that came after the stop: close after it, not at the window's end.
            if !graceful
                && stopped
                    .as_ref()
                    .is_some_and(|(seen, _)| requests.load(Ordering::Relaxed) > *seen)
            {
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
