//! Telling open connections to stop: a flag and one waker per connection,
//! so that watching costs a connection one atomic load per poll (a channel
//! would take a lock on every poll of the request path).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Waker};

#[derive(Default)]
struct Inner {
    stopped: AtomicBool,
    next: AtomicU64,
    wakers: Mutex<HashMap<u64, Waker>>,
}

fn lock(m: &Mutex<HashMap<u64, Waker>>) -> std::sync::MutexGuard<'_, HashMap<u64, Waker>> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The stop signal of one HTTP server.
#[derive(Clone, Default)]
pub(crate) struct Stop {
    inner: Arc<Inner>,
}

impl Stop {
    /// Tells every watcher to stop, waking each.
    pub(crate) fn trigger(&self) {
        self.inner.stopped.store(true, Ordering::Release);
        let wakers: Vec<Waker> = lock(&self.inner.wakers).drain().map(|(_, w)| w).collect();
        for w in wakers {
            w.wake();
        }
    }

    /// A watcher for one connection.
    pub(crate) fn watch(&self) -> Watch {
        Watch {
            inner: self.inner.clone(),
            id: self.inner.next.fetch_add(1, Ordering::Relaxed),
            registered: false,
        }
    }
}

/// One connection's view of the stop signal.
pub(crate) struct Watch {
    inner: Arc<Inner>,
    id: u64,
    registered: bool,
}

impl Watch {
    /// Whether the server is stopping; the first call registers the task's
    /// waker (a spawned task's waker wakes that task whatever poll gave it).
    pub(crate) fn poll_stopped(&mut self, cx: &Context<'_>) -> bool {
        if self.inner.stopped.load(Ordering::Acquire) {
            return true;
        }
        if !self.registered {
            lock(&self.inner.wakers).insert(self.id, cx.waker().clone());
            self.registered = true;
            // A trigger between the load and the insert has drained already.
            return self.inner.stopped.load(Ordering::Acquire);
        }
        false
    }
}

impl Watch {
    /// The stop flag alone, to read without a task to wake.
    pub(crate) fn stopping(&self) -> Stopping {
        Stopping(self.inner.clone())
    }
}

/// Whether the server is stopping, read where no waker is at hand (one
/// atomic load).
pub(crate) struct Stopping(Arc<Inner>);

impl Stopping {
    /// Whether the stop has been triggered.
    pub(crate) fn get(&self) -> bool {
        self.0.stopped.load(Ordering::Acquire)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if self.registered {
            lock(&self.inner.wakers).remove(&self.id);
        }
    }
}
