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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// A connection on which no request has come yet is not closed by a stop
/// before it is this old: a proxy that opened it has sent, or is sending, a
/// request it will not re-send elsewhere (a POST is not idempotent), so
/// closing it unread would fail that request.
const FIRST_REQUEST_WINDOW: Duration = Duration::from_millis(500);

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
    /// accept queue) are still served, and a connection accepted less than
    /// half a second before the stop may deliver its first request: behind a
    /// load balancer, a replica restarted this way fails no request.
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
        let mut errors = 0;
        while let Some(accepted) = accept_now(&listener).await {
            match accepted {
                Ok((stream, peer)) => connection(&mut open, stream, peer, &service, stop.watch()),
                Err(e) if errors < 16 => {
                    errors += 1;
                    tracing::warn!("accept failed while stopping: {e}");
                }
                Err(_) => break,
            }
        }
        drop(listener);
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
    /// [`HttpServer::serve_until`]).
    pub async fn serve(self) -> std::io::Result<()> {
        self.serve_until(super::super::stop_signal()).await
    }
}

/// A connection waiting in the listener's queue, without waiting for one.
async fn accept_now(listener: &TcpListener) -> Option<std::io::Result<(TcpStream, SocketAddr)>> {
    std::future::poll_fn(|cx| match listener.poll_accept(cx) {
        Poll::Ready(accepted) => Poll::Ready(Some(accepted)),
        Poll::Pending => Poll::Ready(None),
    })
    .await
}

/// Serves one accepted connection on its own task until it closes; on a
/// stop, it finishes the response in progress and closes. A connection on
/// which no request has come yet first gets [`FIRST_REQUEST_WINDOW`] from
/// its accept to deliver one.
fn connection(open: &mut JoinSet<()>, stream: TcpStream, peer: SocketAddr, service: &McpService, mut watch: Watch) {
    let accepted = tokio::time::Instant::now();
    // Small SSE frames must not wait for delayed ACKs (Nagle).
    let _ = stream.set_nodelay(true);
    let service = service.clone();
    // Whether a request has come on this connection.
    let used = Arc::new(AtomicBool::new(false));
    let seen = used.clone();
    open.spawn(async move {
        let svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
            seen.store(true, Ordering::Relaxed);
            let service = service.clone();
            async move {
                let path = req.uri().path();
                let metadata = service.config.auth.is_some() && path.starts_with(super::auth::WELL_KNOWN_METADATA);
                if path == service.config.path || metadata {
                    Ok::<_, Infallible>(service.handle(req).await)
                } else {
                    Ok(status(StatusCode::NOT_FOUND))
                }
            }
        });
        let conn = hyper::server::conn::http1::Builder::new()
            .keep_alive(true)
            .serve_connection(hyper_util::rt::TokioIo::new(stream), svc);
        tokio::pin!(conn);
        let mut graceful = false;
        // Made only once the server stops: the request path pays nothing.
        let mut window: Option<Pin<Box<tokio::time::Sleep>>> = None;
        let ended = std::future::poll_fn(|cx| {
            if !graceful && watch.poll_stopped(cx) {
                let ready = used.load(Ordering::Relaxed) || {
                    let window = window
                        .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(accepted + FIRST_REQUEST_WINDOW)));
                    window.as_mut().poll(cx).is_ready()
                };
                if ready {
                    // Finish the response in progress (telling the client
                    // the connection closes), then close.
                    conn.as_mut().graceful_shutdown();
                    graceful = true;
                }
            }
            let polled = conn.as_mut().poll(cx);
            // A request that came in the window: close after it, not at the window's end.
            if !graceful && window.is_some() && used.load(Ordering::Relaxed) {
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
