//! Transports move bytes and nothing else: they know no method or tool names.

pub mod http;
pub mod stdio;

use crate::boxed::BoxFuture;
use std::future::Future;
use std::pin::Pin;

/// Completes when the process is asked to stop: SIGTERM (what container
/// runtimes, systemd and Kubernetes send) or SIGINT (Ctrl-C) on Unix, and
/// Ctrl-C (or Ctrl-Break) elsewhere.
pub async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => tracing::info!("SIGTERM received"),
                    _ = int.recv() => tracing::info!("SIGINT received"),
                }
                return;
            }
            (Err(e), _) | (_, Err(e)) => tracing::warn!("cannot listen for SIGTERM/SIGINT ({e}); Ctrl-C only"),
        }
    }
    #[cfg(windows)]
    {
        if let Ok(mut brk) = tokio::signal::windows::ctrl_break() {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = brk.recv() => {}
            }
            return;
        }
    }
    if tokio::signal::ctrl_c().await.is_err() {
        // No way to be told: serve until the process is killed.
        std::future::pending::<()>().await;
    }
}

/// [`stop_signal`] with its handlers already in place: polled once before
/// it is returned, so that a signal that comes before the server's first
/// poll of it stops the server gracefully instead of ending the process.
/// Await it before saying where the server listens:
///
/// ```no_run
/// # async fn run(http: mcp_runtime::transport::http::HttpServer) -> std::io::Result<()> {
/// let stop = mcp_runtime::transport::stop_signal_installed().await;
/// eprintln!("serving at http://{}/mcp", http.local_addr()?);
/// http.serve_until(stop).await
/// # }
/// ```
pub fn stop_signal_installed() -> impl Future<Output = Pin<Box<dyn Future<Output = ()> + Send>>> + Send {
    install_stop_signal()
}

/// [`stop_signal_installed`], compiled here (see [`crate::boxed::BoxFuture`]).
#[inline(never)]
fn install_stop_signal() -> BoxFuture<'static, BoxFuture<'static, ()>> {
    Box::pin(installed())
}

async fn installed() -> BoxFuture<'static, ()> {
    let mut stop: BoxFuture<'static, ()> = Box::pin(stop_signal());
    let stopped = std::future::poll_fn(|cx| std::task::Poll::Ready(stop.as_mut().poll(cx).is_ready())).await;
    if stopped {
        Box::pin(std::future::ready(()))
    } else {
        stop
    }
}
