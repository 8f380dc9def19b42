//! The resources this process's callers follow now, counted by URI: each
//! `resourceSubscriptions` entry of an open listen stream and each
//! `resources/subscribe` of a legacy session holds one [`Following`] while
//! it lasts. A gateway reads the set to follow upstream the resources its
//! upstreams serve, and learns of each change to it (a URI followed by a
//! first caller, or by none any more).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// The followed URIs and how many follow each.
#[derive(Debug)]
pub(crate) struct Followed {
    uris: Mutex<HashMap<String, usize>>,
    /// Bumped when a URI comes into the set or leaves it.
    changed: watch::Sender<u64>,
}

impl Default for Followed {
    fn default() -> Self {
        Followed {
            uris: Mutex::default(),
            changed: watch::channel(0).0,
        }
    }
}

impl Followed {
    /// Counts one more follower of `uri` until the result is dropped.
    pub(crate) fn follow(self: &Arc<Self>, uri: &str) -> Following {
        let first = {
            let mut uris = self.uris.lock().unwrap_or_else(|p| p.into_inner());
            let n = uris.entry(uri.to_owned()).or_insert(0);
            *n = n.saturating_add(1);
            *n == 1
        };
        if first {
            self.changed.send_modify(|g| *g = g.wrapping_add(1));
        }
        Following {
            followed: self.clone(),
            uri: uri.to_owned(),
        }
    }

    /// The URIs followed now.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn uris(&self) -> Vec<String> {
        let uris = self.uris.lock().unwrap_or_else(|p| p.into_inner());
        uris.keys().cloned().collect()
    }

    /// Changes when a URI comes into the set or leaves it.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn changes(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }
}

/// One caller following one URI, counted until dropped.
#[derive(Debug)]
pub(crate) struct Following {
    followed: Arc<Followed>,
    uri: String,
}

impl Drop for Following {
    fn drop(&mut self) {
        let last = {
            let mut uris = self.followed.uris.lock().unwrap_or_else(|p| p.into_inner());
            match uris.get_mut(&self.uri) {
                Some(n) if *n > 1 => {
                    *n -= 1;
                    false
                }
                Some(_) => {
                    uris.remove(&self.uri);
                    true
                }
                None => false,
            }
        };
        if last {
            self.followed.changed.send_modify(|g| *g = g.wrapping_add(1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uri_is_followed_while_anyone_follows_it() {
        let followed = Arc::new(Followed::default());
        let changes = followed.changes();
        let a = followed.follow("r://x");
        let b = followed.follow("r://x");
        assert_eq!(followed.uris(), ["r://x"]);
        assert_eq!(*changes.borrow(), 1, "changed once, by the first follower");
        drop(a);
        assert_eq!(followed.uris(), ["r://x"]);
        drop(b);
        assert!(followed.uris().is_empty());
        assert_eq!(*changes.borrow(), 2, "and once more by the last one leaving");
    }
}
