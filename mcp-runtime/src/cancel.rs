//! Cooperative cancellation of one request: a token the transport cancels
//! and the handler may watch.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

/// Cooperative cancellation of one request.
///
/// Cancelled when the client sends `notifications/cancelled` (stdio) or closes
/// the response stream (HTTP). The framework also drops the handler's future,
/// so an `await` point is a cancellation point; long synchronous loops should
/// poll [`Cancellation::is_cancelled`].
#[derive(Debug, Clone, Default)]
pub struct Cancellation {
    inner: Arc<CancelInner>,
}

#[derive(Debug, Default)]
struct CancelInner {
    cancelled: AtomicBool,
    notify: Notify,
}

impl Cancellation {
    /// A new, not yet cancelled token.
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks the request cancelled and wakes every waiter.
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// Completes when the request is cancelled.
    pub async fn cancelled(&self) {
        loop {
            let notified = self.inner.notify.notified();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}
