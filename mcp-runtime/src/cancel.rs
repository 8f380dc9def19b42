//! Cooperative cancellation of one request: a token the transport cancels
//! and the handler may watch.

use std::future::Future;
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
    /// The tokens this one was made from ([`Cancellation::child`]): it is
    /// cancelled when any of them is.
    parents: Vec<Arc<CancelInner>>,
}

impl Cancellation {
    /// A new, not yet cancelled token.
    pub fn new() -> Self {
        Self::default()
    }

    /// A token cancelled when this one is, or by itself (a tool call past
    /// its timeout), without cancelling this one.
    pub(crate) fn child(&self) -> Cancellation {
        let mut parents = self.inner.parents.clone();
        parents.push(self.inner.clone());
        Cancellation {
            inner: Arc::new(CancelInner {
                parents,
                ..CancelInner::default()
            }),
        }
    }

    fn parents(&self) -> &[Arc<CancelInner>] {
        &self.inner.parents
    }

    /// Marks the request cancelled and wakes every waiter.
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst) || self.parents().iter().any(|p| p.cancelled.load(Ordering::SeqCst))
    }

    /// Completes when the request is cancelled.
    pub async fn cancelled(&self) {
        if self.inner.parents.is_empty() {
            loop {
                let notified = self.inner.notify.notified();
                if self.is_cancelled() {
                    return;
                }
                notified.await;
            }
        }
        loop {
            // Created before the flags are read: a cancellation in between still wakes one.
            let mut waits: Vec<_> = std::iter::once(&self.inner)
                .chain(self.parents().iter())
                .map(|i| Box::pin(i.notify.notified()))
                .collect();
            if self.is_cancelled() {
                return;
            }
            std::future::poll_fn(|cx| {
                if waits.iter_mut().any(|w| w.as_mut().poll(cx).is_ready()) {
                    std::task::Poll::Ready(())
                } else {
                    std::task::Poll::Pending
                }
            })
            .await;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::cancel::Cancellation;

    #[tokio::test]
    async fn a_child_is_cancelled_with_its_parent_or_alone() {
        let parent = Cancellation::new();
        let child = parent.child();
        let grandchild = child.child();
        child.cancel();
        assert!(child.is_cancelled() && grandchild.is_cancelled() && !parent.is_cancelled());
        grandchild.cancelled().await;
        let other = parent.child();
        let waiting = tokio::spawn({
            let other = other.clone();
            async move { other.cancelled().await }
        });
        tokio::task::yield_now().await;
        parent.cancel();
        tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
            .await
            .expect("woken by the parent")
            .expect("the waiter ran");
        assert!(other.is_cancelled());
    }
}
