//! The task records this process created and that are still kept (running,
//! or finished and not yet expired), per caller and in all, with the size
//! of the results they keep: what bounds the store's memory, since only
//! the running tasks are counted otherwise. Entries are dropped once their
//! expiry passes (looked at when a caller starts a task, and for all callers
//! when a bound is reached).

use std::collections::HashMap;

/// One kept record.
struct Entry {
    id: String,
    /// When the store drops it (milliseconds since the epoch; `u64::MAX`: never).
    expires_ms: u64,
    /// The size of the result it keeps (0 while running).
    bytes: usize,
}

/// The ledger.
#[derive(Default)]
pub(super) struct Kept {
    by_caller: HashMap<String, Vec<Entry>>,
    total: usize,
    bytes: usize,
}

/// Which bound a new task would pass.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Full {
    /// The caller keeps this many records.
    Caller(usize),
    /// This process keeps this many records.
    Total(usize),
    /// This process keeps this many bytes of results.
    Bytes(usize),
}

/// The bounds (from [`TaskConfig`](super::TaskConfig)).
#[derive(Clone, Copy)]
pub(super) struct Bounds {
    pub per_caller: usize,
    pub total: usize,
    pub bytes: usize,
}

impl Kept {
    /// Whether `caller` may start one more task at `now`.
    pub(super) fn check(&mut self, caller: &str, now: u64, bounds: Bounds) -> Result<(), Full> {
        let mine = self.prune(caller, now);
        if mine >= bounds.per_caller {
            return Err(Full::Caller(mine));
        }
        if self.total >= bounds.total || self.bytes >= bounds.bytes {
            self.prune_all(now);
        }
        if self.total >= bounds.total {
            return Err(Full::Total(self.total));
        }
        if self.bytes >= bounds.bytes {
            return Err(Full::Bytes(self.bytes));
        }
        Ok(())
    }

    /// Counts a new record of `caller`.
    pub(super) fn add(&mut self, caller: &str, id: &str, expires_ms: u64) {
        self.by_caller.entry(caller.to_owned()).or_default().push(Entry {
            id: id.to_owned(),
            expires_ms,
            bytes: 0,
        });
        self.total = self.total.saturating_add(1);
    }

    /// What a record became when its task ended: kept until `expires_ms`
    /// with `bytes` of result, or gone (`None`).
    pub(super) fn ended(&mut self, caller: &str, id: &str, kept: Option<(u64, usize)>) {
        let Some(entries) = self.by_caller.get_mut(caller) else {
            return;
        };
        let Some(at) = entries.iter().position(|e| e.id == id) else {
            return;
        };
        match kept {
            Some((expires_ms, bytes)) => {
                if let Some(entry) = entries.get_mut(at) {
                    self.bytes = self.bytes.saturating_sub(entry.bytes).saturating_add(bytes);
                    entry.expires_ms = expires_ms;
                    entry.bytes = bytes;
                }
            }
            None => {
                let entry = entries.swap_remove(at);
                self.total = self.total.saturating_sub(1);
                self.bytes = self.bytes.saturating_sub(entry.bytes);
                if entries.is_empty() {
                    self.by_caller.remove(caller);
                }
            }
        }
    }

    /// Drops `caller`'s expired entries; how many are left.
    fn prune(&mut self, caller: &str, now: u64) -> usize {
        let Some(entries) = self.by_caller.get_mut(caller) else {
            return 0;
        };
        let (mut gone, mut freed) = (0usize, 0usize);
        entries.retain(|e| {
            let live = e.expires_ms > now;
            if !live {
                gone = gone.saturating_add(1);
                freed = freed.saturating_add(e.bytes);
            }
            live
        });
        let left = entries.len();
        if left == 0 {
            self.by_caller.remove(caller);
        }
        self.total = self.total.saturating_sub(gone);
        self.bytes = self.bytes.saturating_sub(freed);
        left
    }

    fn prune_all(&mut self, now: u64) {
        let callers: Vec<String> = self.by_caller.keys().cloned().collect();
        for caller in callers {
            self.prune(&caller, now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOUNDS: Bounds = Bounds {
        per_caller: 2,
        total: 3,
        bytes: 100,
    };

    #[test]
    fn each_bound_refuses_until_records_expire_or_go() {
        let mut kept = Kept::default();
        kept.add("a", "1", 1_000);
        kept.add("a", "2", 1_000);
        assert_eq!(kept.check("a", 10, BOUNDS), Err(Full::Caller(2)));
        assert_eq!(kept.check("b", 10, BOUNDS), Ok(()));
        kept.add("b", "3", 5_000);
        assert_eq!(kept.check("c", 10, BOUNDS), Err(Full::Total(3)));
        // A finished task kept for less time: it expires at 20.
        kept.ended("a", "1", Some((20, 40)));
        assert_eq!(kept.check("c", 30, BOUNDS), Ok(()));
        assert_eq!(kept.check("a", 30, BOUNDS), Ok(()));
        kept.ended("b", "3", Some((5_000, 120)));
        assert_eq!(kept.check("c", 30, BOUNDS), Err(Full::Bytes(120)));
        kept.ended("b", "3", None);
        assert_eq!(kept.check("c", 30, BOUNDS), Ok(()));
        assert_eq!((kept.total, kept.bytes), (1, 0));
    }
}
