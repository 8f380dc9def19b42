//! What a server waits for before it is ready: dependencies that were down
//! at start (an authorization server, a database). The stand-alone HTTP
//! server's `/readyz` answers 503 naming them while any is awaited. And what
//! runs when it starts: the builder's `on_start` hooks.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A hook run once when the server starts (`ServerBuilder::on_start`).
pub(crate) type StartHook = Box<dyn FnOnce(&crate::server::Server) + Send>;

/// The dependencies awaited, by a number of their own, and the hooks not
/// run yet.
#[derive(Default)]
pub(crate) struct Readiness {
    next: AtomicU64,
    awaited: Mutex<BTreeMap<u64, String>>,
    on_start: Mutex<Vec<StartHook>>,
}

impl Readiness {
    /// Nothing awaited, these hooks to run at start.
    pub(crate) fn with_hooks(hooks: Vec<StartHook>) -> Self {
        Readiness {
            on_start: Mutex::new(hooks),
            ..Readiness::default()
        }
    }

    /// The hooks not run yet, taken (so each runs once).
    pub(crate) fn take_hooks(&self) -> Vec<StartHook> {
        self.on_start
            .lock()
            .map(|mut h| std::mem::take(&mut *h))
            .unwrap_or_default()
    }

    pub(crate) fn awaited(&self) -> Vec<String> {
        self.awaited
            .lock()
            .map(|a| a.values().cloned().collect())
            .unwrap_or_default()
    }
}

/// A dependency the server waits for, from [`Server::awaiting`](crate::Server::awaiting):
/// until this is dropped (or [`ready`](Awaiting::ready) is called), `/readyz`
/// answers 503 `{"status":"waiting","for":[...]}` naming it, so a load
/// balancer sends no traffic to the replica while the process stays up and
/// keeps retrying.
pub struct Awaiting {
    readiness: Arc<Readiness>,
    id: u64,
}

impl std::fmt::Debug for Awaiting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Awaiting").field("id", &self.id).finish()
    }
}

impl Awaiting {
    pub(crate) fn new(readiness: &Arc<Readiness>, what: String) -> Self {
        let id = readiness.next.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut awaited) = readiness.awaited.lock() {
            awaited.insert(id, what);
        }
        Awaiting {
            readiness: readiness.clone(),
            id,
        }
    }

    /// The dependency is there: the server no longer waits for it.
    pub fn ready(self) {}
}

impl Drop for Awaiting {
    fn drop(&mut self) {
        if let Ok(mut awaited) = self.readiness.awaited.lock() {
            awaited.remove(&self.id);
        }
    }
}
