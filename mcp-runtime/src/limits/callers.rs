//! Calls in progress per caller: a count per key, a bounded wait for a
//! place, and a permit that gives the place back when dropped (a call that
//! ends, fails or is cancelled alike).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// Callers kept with nothing in progress, at most.
const KEPT_IDLE: usize = 10_000;

/// The counts of one server.
pub(crate) struct Callers {
    max: usize,
    counts: Mutex<HashMap<Box<str>, usize>>,
    freed: Notify,
}

/// A place held by one call.
pub(crate) struct Place {
    callers: Arc<Callers>,
    key: String,
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
        if let Some(count) = counts.get_mut(key) {
            if *count >= self.max {
                return false;
            }
            *count += 1;
            return true;
        }
        // Callers with nothing in progress stay (a caller's next call
        // allocates nothing) until there are many.
        if counts.len() >= KEPT_IDLE {
            counts.retain(|_, n| *n > 0);
        }
        counts.insert(key.into(), 1);
        true
    }

    /// A place for `key` whatever its bound.
    pub(crate) fn force(self: &Arc<Self>, key: String) -> Place {
        {
            let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
            let count = counts.entry(key.as_str().into()).or_insert(0);
            *count = count.saturating_add(1);
        }
        Place {
            callers: self.clone(),
            key,
        }
    }

    /// A place for `key`, waiting at most `wait` for one; `None` when none
    /// came free in time.
    pub(crate) async fn take(self: &Arc<Self>, key: String, wait: Duration) -> Option<Place> {
        // A wait too long to be a time waits as long as it takes.
        let deadline = tokio::time::Instant::now().checked_add(wait);
        loop {
            // Registered before the check, so a place freed in between wakes it.
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if self.try_take(&key) {
                return Some(Place {
                    callers: self.clone(),
                    key,
                });
            }
            match deadline {
                Some(deadline) => {
                    if tokio::time::timeout_at(deadline, freed).await.is_err() {
                        return None;
                    }
                }
                None => freed.await,
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
        let was = counts.get_mut(self.key.as_str()).map(|count| {
            let was = *count;
            *count = count.saturating_sub(1);
            was
        });
        drop(counts);
        // Only a caller that was at its bound can have calls waiting.
        if was.is_some_and(|n| n >= self.callers.max) {
            self.callers.freed.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_caller_waits_for_its_own_place_only() {
        let callers = Callers::new(2);
        let a1 = callers.take("a".into(), Duration::ZERO).await.unwrap();
        let _a2 = callers.take("a".into(), Duration::ZERO).await.unwrap();
        assert!(
            callers.take("a".into(), Duration::from_millis(20)).await.is_none(),
            "a third place for a"
        );
        assert!(
            callers.take("b".into(), Duration::ZERO).await.is_some(),
            "b is not held up by a"
        );
        let waiter = {
            let callers = callers.clone();
            tokio::spawn(async move { callers.take("a".into(), Duration::from_secs(5)).await.is_some() })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(a1);
        assert!(waiter.await.unwrap(), "the waiter got the freed place");
        assert_eq!(callers.held("a"), 1);
    }

    #[tokio::test]
    async fn a_wait_too_long_to_be_a_time_waits_as_long_as_it_takes() {
        let callers = Callers::new(1);
        let held = callers.take("a".into(), Duration::MAX).await.unwrap();
        let waiter = {
            let callers = callers.clone();
            tokio::spawn(async move { callers.take("a".into(), Duration::MAX).await.is_some() })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(held);
        assert!(waiter.await.unwrap(), "the waiter got the freed place");
    }
}
