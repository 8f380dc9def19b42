//! Transports move bytes and nothing else: they know no method or tool names.

pub mod http;
pub mod stdio;

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
