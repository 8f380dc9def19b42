//! Calls in progress per caller: a count per key, a bounded wait for a
//! place, and a permit that gives the place back when dropped (a call that
//! ends, fails or is cancelled alike).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// The counts of one server.
pub(crate) struct Callers {
    max: usize,
    counts: Mutex<HashMap<Box<str>, usize>>,
    freed: Notify,
}

/// A place held by one call.
pub(crate) struct Place {
    callers: Arc<Callers>,
    key: Box<str>,
}

impl Callers {
    pub(crate) fn new(max: usize) -> Arc<Self> {
        Arc::new(Callers {
            max: max.max(1),
            counts: Mutex::new(HashMap::new()),
            freed: Notify::new(),
        })
    }

    fn try_take(&self, key: &str) -> bool {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let count = counts.entry(key.into()).or_insert(0);
        if *count >= self.max {
            return false;
        }
        *count += 1;
        true
    }

    /// A place for `key`, waiting at most `wait` for one; `None` when none
    /// came free in time.
    pub(crate) async fn take(self: &Arc<Self>, key: &str, wait: Duration) -> Option<Place> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            // Registered before the check, so a place freed in between wakes it.
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if self.try_take(key) {
                return Some(Place {
                    callers: self.clone(),
                    key: key.into(),
                });
            }
            if tokio::time::timeout_at(deadline, freed).await.is_err() {
                return None;
            }
        }
    }

    /// The calls `key` has in progress.
    #[cfg(test)]
    fn held(&self, key: &str) -> usize {
        self.counts
            .lock()
            .map(|c| c.get(key).copied().unwrap_or(0))
            .unwrap_or(0)
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut counts = self.callers.counts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(count) = counts.get_mut(&*self.key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                counts.remove(&*self.key);
            }
        }
        drop(counts);
        self.callers.freed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_caller_waits_for_its_own_place_only() {
        let callers = Callers::new(2);
        let a1 = callers.take("a", Duration::ZERO).await.unwrap();
        let _a2 = callers.take("a", Duration::ZERO).await.unwrap();
        assert!(
            callers.take("a", Duration::from_millis(20)).await.is_none(),
            "a third place for a"
        );
        assert!(
            callers.take("b", Duration::ZERO).await.is_some(),
            "b is not held up by a"
        );
        let waiter = {
            let callers = callers.clone();
            tokio::spawn(async move { callers.take("a", Duration::from_secs(5)).await.is_some() })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(a1);
        assert!(waiter.await.unwrap(), "the waiter got the freed place");
        assert_eq!(callers.held("a"), 1);
    }
}
