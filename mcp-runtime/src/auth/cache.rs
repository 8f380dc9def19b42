//! A bounded cache of verified tokens: a token seen again within its
//! lifetime (and the cache's) is not verified again.

use super::AccessToken;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A token's fingerprint: its length and its last 64 bytes (a JWT's
/// signature), hashed, so that a lookup does not hash the whole of a
/// kilobyte-long token. Entries under one fingerprint are told apart by the
/// whole token.
fn fingerprint(token: &str) -> u64 {
    let bytes = token.as_bytes();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.len().hash(&mut h);
    bytes[bytes.len().saturating_sub(64)..].hash(&mut h);
    h.finish()
}

struct Entry<V> {
    token: Box<str>,
    verified: V,
    until: Instant,
}

/// The entries by fingerprint, and how many there are.
struct Entries<V> {
    map: HashMap<u64, Vec<Entry<V>>>,
    len: usize,
}

/// Answers about tokens (by default the verified token), each until the
/// earlier of the token's `exp` and `ttl` after it was given; at most
/// `capacity`: when full, the expired go, then the eighth that expires
/// soonest.
pub(crate) struct TokenCache<V = Arc<AccessToken>> {
    entries: Mutex<Entries<V>>,
    capacity: usize,
    ttl: Duration,
}

impl<V: Clone> TokenCache<V> {
    pub(crate) fn new(capacity: usize, ttl: Duration) -> Self {
        TokenCache {
            entries: Mutex::new(Entries {
                map: HashMap::new(),
                len: 0,
            }),
            capacity,
            ttl,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries<V>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The answer about `token`, if it is cached and still valid.
    pub(crate) fn get(&self, token: &str) -> Option<V> {
        if self.capacity == 0 {
            return None;
        }
        let now = Instant::now();
        let entries = self.lock();
        entries
            .map
            .get(&fingerprint(token))?
            .iter()
            .find(|e| &*e.token == token && e.until > now)
            .map(|e| e.verified.clone())
    }

    /// Keeps an answer about a token that expires at `expires_at` (Unix seconds).
    pub(crate) fn put(&self, token: &str, verified: &V, expires_at: Option<u64>) {
        if self.capacity == 0 {
            return;
        }
        let now = Instant::now();
        // A ttl too long to add (Duration::MAX: "keep") keeps until the token expires.
        let mut until = now.checked_add(self.ttl);
        if let Some(exp) = expires_at {
            let unix_now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs();
            let left = now.checked_add(Duration::from_secs(exp.saturating_sub(unix_now)));
            until = match (until, left) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        // Neither bound fits an Instant: a year is as good as forever here.
        let until = until.unwrap_or_else(|| now + Duration::from_secs(365 * 24 * 3600));
        let mut entries = self.lock();
        if entries.len >= self.capacity {
            evict(&mut entries, now, self.capacity / 8 + 1);
        }
        let fp = fingerprint(token);
        let bucket = entries.map.entry(fp).or_default();
        let before = bucket.len();
        bucket.retain(|e| &*e.token != token);
        let replaced = before.saturating_sub(bucket.len());
        bucket.push(Entry {
            token: token.into(),
            verified: verified.clone(),
            until,
        });
        entries.len = entries.len.saturating_sub(replaced).saturating_add(1);
    }
}

/// Drops the expired entries, then (if that freed fewer than `at_least`)
/// the ones that expire soonest, `at_least` in all.
fn evict<V>(entries: &mut Entries<V>, now: Instant, at_least: usize) {
    for bucket in entries.map.values_mut() {
        bucket.retain(|e| e.until > now);
    }
    entries.map.retain(|_, bucket| !bucket.is_empty());
    let len: usize = entries.map.values().map(Vec::len).sum();
    let freed = entries.len.saturating_sub(len);
    entries.len = len;
    if freed >= at_least {
        return;
    }
    let mut untils: Vec<Instant> = entries.map.values().flatten().map(|e| e.until).collect();
    let cut = at_least.saturating_sub(freed).min(untils.len());
    if cut == 0 {
        return;
    }
    untils.select_nth_unstable(cut - 1);
    let Some(&limit) = untils.get(cut - 1) else { return };
    for bucket in entries.map.values_mut() {
        bucket.retain(|e| e.until > limit);
    }
    entries.map.retain(|_, bucket| !bucket.is_empty());
    entries.len = entries.map.values().map(Vec::len).sum();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_and_the_cache_stays_bounded() {
        let cache: TokenCache = TokenCache::new(2, Duration::from_secs(60));
        let token = Arc::new(AccessToken {
            subject: "a".into(),
            ..AccessToken::default()
        });
        cache.put("t1", &token, None);
        cache.put("t2", &token, None);
        cache.put("t3", &token, None);
        assert!(cache.lock().len <= 2, "bounded");
        assert!(cache.get("t3").is_some());
        let expired = Arc::new(AccessToken {
            expires_at: Some(1),
            ..AccessToken::clone(&token)
        });
        cache.put("old", &expired, expired.expires_at);
        assert!(
            cache.get("old").is_none(),
            "an expired token is not served from the cache"
        );
    }
}
