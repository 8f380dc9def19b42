//! The HTTP sessions of a server (2025-11-25's `Mcp-Session-Id`): bounded
//! in number in all and per caller, reaped when idle.
//!
//! Every `initialize` adds one, so adding does not look at every session:
//! each caller's sessions are listed apart (its bound is checked against
//! its own list, and its longest idle one is found there), and idle ones
//! are reaped by a task, by a lookup that finds one, and, when the store is
//! full, at most once a second before a live one is evicted.

use super::{lock, Session};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often a full store reaps its idle sessions before it evicts.
const FULL_REAP_EVERY: Duration = Duration::from_secs(1);

/// The sessions, by id and by the caller that opened them.
#[derive(Debug, Default)]
struct Sessions {
    /// Each session with the caller that opened it.
    by_id: HashMap<String, (Arc<Session>, Arc<str>)>,
    /// Each caller's session ids.
    by_caller: HashMap<Arc<str>, HashSet<String>>,
    /// The callers by their number of sessions: the busiest is the last.
    by_count: BTreeMap<usize, BTreeSet<Arc<str>>>,
    /// When a full store last reaped.
    reaped_at: Option<Instant>,
    /// Sessions looked at to reap or evict, for the test that bounds them.
    #[cfg(test)]
    visited: usize,
}

impl Sessions {
    fn add(&mut self, id: String, session: Arc<Session>, caller: &str) {
        // An id is 128 random bits: not seen twice; if it were, the session
        // it names ends (and leaves every index) rather than lingers.
        self.take(&id);
        let caller: Arc<str> = match self.by_caller.get_key_value(caller) {
            Some((known, _)) => known.clone(),
            None => Arc::from(caller),
        };
        let ids = self.by_caller.entry(caller.clone()).or_default();
        ids.insert(id.clone());
        let n = ids.len();
        self.recount(&caller, n.saturating_sub(1), n);
        self.by_id.insert(id, (session, caller));
    }

    /// Forgets (and ends) the session `id`; whether it was there.
    fn take(&mut self, id: &str) -> bool {
        let Some((session, caller)) = self.by_id.remove(id) else {
            return false;
        };
        if let Some(ids) = self.by_caller.get_mut(&caller) {
            if ids.remove(id) {
                let n = ids.len();
                if n == 0 {
                    self.by_caller.remove(&caller);
                }
                self.recount(&caller, n + 1, n);
            }
        }
        session.end();
        true
    }

    /// Moves `caller` from those with `from` sessions to those with `to`.
    fn recount(&mut self, caller: &Arc<str>, from: usize, to: usize) {
        if let Some(callers) = self.by_count.get_mut(&from) {
            callers.remove(caller);
            if callers.is_empty() {
                self.by_count.remove(&from);
            }
        }
        if to > 0 {
            self.by_count.entry(to).or_default().insert(caller.clone());
        }
    }

    /// A caller with the most sessions.
    fn busiest(&self) -> Option<Arc<str>> {
        self.by_count.last_key_value()?.1.first().cloned()
    }

    /// Ends and forgets every session idle for `idle` or longer.
    fn reap(&mut self, idle: Duration) {
        #[cfg(test)]
        {
            self.visited += self.by_id.len();
        }
        let expired: Vec<String> = self
            .by_id
            .iter()
            .filter(|(_, (s, _))| s.idle_for() >= idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            self.take(&id);
        }
    }

    /// Ends and forgets `caller`'s longest idle session.
    fn evict_from(&mut self, caller: &str) {
        #[cfg(test)]
        {
            self.visited += self.by_caller.get(caller).map_or(0, HashSet::len);
        }
        let oldest = self.by_caller.get(caller).and_then(|ids| {
            ids.iter()
                .filter_map(|id| Some((id, self.by_id.get(id)?.0.idle_for())))
                .max_by_key(|(_, idle)| *idle)
                .map(|(id, _)| id.clone())
        });
        if let Some(id) = oldest {
            self.take(&id);
        }
    }
}

/// The HTTP sessions of a server: bounded in number, reaped when idle.
#[derive(Debug)]
pub struct SessionStore {
    sessions: Arc<Mutex<Sessions>>,
    /// Whether the task that ends idle sessions runs (from the first one).
    sweeping: AtomicBool,
    /// Sessions idle longer than this are dropped.
    pub idle_timeout: Duration,
    /// At most this many sessions; the longest idle one of the caller with
    /// the most makes room.
    pub max_sessions: usize,
    /// At most this many sessions per caller (principal, else address);
    /// past it, that caller's own longest idle session makes room, never
    /// another caller's. 0: no bound per caller.
    pub max_per_caller: usize,
}

impl Default for SessionStore {
    fn default() -> Self {
        SessionStore::new(Duration::from_secs(30 * 60), 10_000, 64)
    }
}

/// 128 random bits from the operating system, hex: an unguessable id.
pub(crate) fn random_id() -> String {
    use chacha20poly1305::aead::rand_core::RngCore;
    let mut bytes = [0u8; 16];
    chacha20poly1305::aead::OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl SessionStore {
    /// A store with these bounds.
    pub fn new(idle_timeout: Duration, max_sessions: usize, max_per_caller: usize) -> Self {
        SessionStore {
            sessions: Arc::default(),
            sweeping: AtomicBool::new(false),
            idle_timeout,
            max_sessions: max_sessions.max(1),
            max_per_caller,
        }
    }

    /// A new unguessable session id: 128 random bits, hex (visible ASCII).
    pub fn new_id() -> String {
        random_id()
    }

    /// Adds a session opened by `caller`: past the caller's bound its own
    /// longest idle session makes room; past the store's (its idle ones
    /// reaped first), the longest idle one of the caller with the most
    /// sessions.
    pub fn insert(&self, session: Arc<Session>, caller: &str) {
        let Some(id) = session.id.clone() else { return };
        self.sweep_from_now_on();
        let mut map = lock(&self.sessions);
        let full = |map: &Sessions| map.by_id.len() >= self.max_sessions;
        if full(&map) && map.reaped_at.is_none_or(|at| at.elapsed() >= FULL_REAP_EVERY) {
            map.reap(self.idle_timeout);
            map.reaped_at = Some(Instant::now());
        }
        // Callers the transport cannot tell apart ("") are not bounded each.
        let own = match caller.is_empty() {
            true => 0,
            false => map.by_caller.get(caller).map_or(0, HashSet::len),
        };
        // 0: no bound per caller (the store's own bound still holds).
        if self.max_per_caller > 0 && own >= self.max_per_caller {
            map.evict_from(caller);
        } else if full(&map) {
            if let Some(busiest) = map.busiest() {
                map.evict_from(&busiest);
            }
        }
        map.add(id, session, caller);
    }

    /// The live session with this id, if `owner` opened it (another
    /// principal's session is as good as unknown, and its idle time is not
    /// reset by the asking).
    pub fn get(&self, id: &str, owner: Option<&str>) -> Option<Arc<Session>> {
        let mut map = lock(&self.sessions);
        let session = map.by_id.get(id)?.0.clone();
        if !session.owned_by(owner) {
            return None;
        }
        if session.idle_for() < self.idle_timeout {
            session.touch();
            return Some(session);
        }
        map.take(id);
        None
    }

    /// Ends a session (its stream and running requests stop); returns
    /// whether it existed.
    pub fn remove(&self, id: &str) -> bool {
        lock(&self.sessions).take(id)
    }

    /// Starts, once and when a runtime runs, the task that ends idle
    /// sessions every half idle time (at least 50 ms apart, at most a
    /// minute): a client that goes away without DELETE leaves nothing held,
    /// even when no other session opens after it. The task ends with the
    /// store.
    fn sweep_from_now_on(&self) {
        if self.sweeping.swap(true, Ordering::AcqRel) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.sweeping.store(false, Ordering::Release);
            return;
        };
        let sessions = Arc::downgrade(&self.sessions);
        let idle = self.idle_timeout;
        let every = (idle / 2).clamp(Duration::from_millis(50), Duration::from_secs(60));
        runtime.spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let Some(sessions) = sessions.upgrade() else {
                    return;
                };
                lock(&sessions).reap(idle);
            }
        });
    }

    /// How many sessions the store holds, of how many callers, and how
    /// many it has looked at to reap or evict.
    #[cfg(test)]
    fn counts(&self) -> (usize, usize, usize) {
        let map = lock(&self.sessions);
        let counted: usize = map.by_count.iter().map(|(n, callers)| n * callers.len()).sum();
        assert_eq!(counted, map.by_id.len(), "every session counted once");
        (map.by_id.len(), map.by_caller.len(), map.visited)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ClientCapabilities;

    fn with_id(id: &str) -> Arc<Session> {
        Arc::new(Session::new(
            Some(id.into()),
            "2025-11-25",
            ClientCapabilities::default(),
            None,
        ))
    }

    #[test]
    fn another_principals_session_is_not_found_nor_kept_alive() {
        let store = SessionStore::new(Duration::from_millis(150), 100, 0);
        let session = with_id("s");
        session.set_owner("alice");
        store.insert(session, "alice");
        assert!(store.get("s", None).is_none(), "anonymous");
        std::thread::sleep(Duration::from_millis(100));
        assert!(store.get("s", Some("bob")).is_none(), "bob");
        std::thread::sleep(Duration::from_millis(100));
        // Bob's asking did not reset its idle time: 200 ms idle is past 150.
        assert!(store.get("s", Some("alice")).is_none(), "expired");
        let fresh = with_id("t");
        fresh.set_owner("alice");
        store.insert(fresh, "alice");
        assert!(store.get("t", Some("alice")).is_some());
    }

    #[test]
    fn no_bound_per_caller_keeps_every_session_of_one_caller() {
        let store = SessionStore::new(Duration::from_secs(60), 100, 0);
        for id in ["a", "b", "c"] {
            store.insert(with_id(id), "10.0.0.1");
        }
        assert!(
            ["a", "b", "c"].iter().all(|id| store.get(id, None).is_some()),
            "0 bounds nothing"
        );
        let bounded = SessionStore::new(Duration::from_secs(60), 100, 2);
        for id in ["a", "b", "c"] {
            bounded.insert(with_id(id), "10.0.0.1");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(
            bounded.get("a", None).is_none() && bounded.get("c", None).is_some(),
            "2: the oldest made room"
        );
    }

    #[test]
    fn a_full_store_evicts_the_longest_idle_session_of_the_busiest_caller() {
        let store = SessionStore::new(Duration::from_secs(60), 4, 0);
        let mut kept = Vec::new();
        for (id, caller) in [("a1", "a"), ("b1", "b"), ("b2", "b"), ("b3", "b")] {
            let s = with_id(id);
            kept.push(s.clone());
            store.insert(s, caller);
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(
            store.get("b1", None).is_some(),
            "b1 is used again: b2 is b's longest idle"
        );
        store.insert(with_id("a2"), "a");
        assert!(store.get("b2", None).is_none());
        assert!(kept[2].ended.is_cancelled(), "the evicted session ended");
        for id in ["a1", "b1", "b3", "a2"] {
            assert!(store.get(id, None).is_some(), "{id}");
        }
        // The unknown caller ("") is bounded in all only, not each.
        let anonymous = SessionStore::new(Duration::from_secs(60), 100, 1);
        anonymous.insert(with_id("x1"), "");
        anonymous.insert(with_id("x2"), "");
        assert!(anonymous.get("x1", None).is_some() && anonymous.get("x2", None).is_some());
    }

    #[test]
    fn idle_sessions_make_room_before_a_live_one_and_leave_no_caller_behind() {
        let store = SessionStore::new(Duration::from_millis(200), 3, 0);
        store.insert(with_id("y1"), "y");
        std::thread::sleep(Duration::from_millis(120));
        store.insert(with_id("x1"), "x");
        store.insert(with_id("x2"), "x");
        std::thread::sleep(Duration::from_millis(120));
        // Full; y1 is idle past its time: it goes, not x's longest idle.
        store.insert(with_id("z1"), "z");
        assert!(store.get("x1", None).is_some() && store.get("x2", None).is_some());
        assert_eq!(store.counts().0, 3);
        assert_eq!(store.counts().1, 2, "y1 and its caller are gone");
        assert!(store.remove("z1") && !store.remove("z1"));
        assert_eq!(store.counts().0, 2);
        assert_eq!(store.counts().1, 1);
    }

    #[test]
    fn an_id_added_again_ends_the_session_it_named_and_leaves_no_trace() {
        let store = SessionStore::new(Duration::from_secs(60), 10, 0);
        let first = with_id("same");
        store.insert(first.clone(), "alice");
        store.insert(with_id("same"), "bob");
        assert!(first.ended.is_cancelled());
        // counts() checks every index against the sessions.
        let (sessions, callers, _) = store.counts();
        assert_eq!((sessions, callers), (1, 1));
        assert!(store.remove("same"));
        let (sessions, callers, _) = store.counts();
        assert_eq!((sessions, callers), (0, 0));
    }

    #[test]
    fn adding_to_a_large_store_does_not_visit_every_session() {
        // 10,000 callers with a session each, then 2,000 of one caller bound
        // to 64: each insert looks at that caller's sessions, not at all.
        let store = SessionStore::new(Duration::from_secs(600), 10_050, 64);
        for i in 0..10_000 {
            store.insert(with_id(&format!("s{i}")), &format!("10.0.{}.{}", i / 256, i % 256));
        }
        for i in 0..2_000 {
            store.insert(with_id(&format!("m{i}")), "mallory");
        }
        let (sessions, callers, visited) = store.counts();
        assert_eq!((sessions, callers), (10_050, 10_001));
        // Full from the 50th of mallory's: one reap of the whole store a
        // second at most, and the rest within mallory's 64.
        assert!(visited <= 2 * 10_050 + 2_000 * 64, "{visited} sessions looked at");
    }
}
