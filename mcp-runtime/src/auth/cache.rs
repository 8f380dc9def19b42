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

type Entries<V> = HashMap<u64, Vec<Entry<V>>>;

/// Answers about tokens (by default the verified token), each until the
/// earlier of the token's `exp` and `ttl` after it was given; at most
/// `capacity`, the oldest going first.
pub(crate) struct TokenCache<V = Arc<AccessToken>> {
    entries: Mutex<Entries<V>>,
    capacity: usize,
    ttl: Duration,
}

impl<V: Clone> TokenCache<V> {
    pub(crate) fn new(capacity: usize, ttl: Duration) -> Self {
        TokenCache {
            entries: Mutex::new(HashMap::new()),
            capacity,
            ttl,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries<V>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The verified token, if it is cached and still valid.
    pub(crate) fn get(&self, token: &str) -> Option<V> {
        if self.capacity == 0 {
            return None;
        }
        let now = Instant::now();
        let entries = self.lock();
        entries
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
        let mut until = now + self.ttl;
        if let Some(exp) = expires_at {
            let unix_now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs();
            let left = Duration::from_secs(exp.saturating_sub(unix_now));
            until = until.min(now + left);
        }
        let mut entries = self.lock();
        let mut len = entries.values().map(Vec::len).sum::<usize>();
        if len >= self.capacity {
            for bucket in entries.values_mut() {
                bucket.retain(|e| e.until > now);
            }
            entries.retain(|_, bucket| !bucket.is_empty());
            len = entries.values().map(Vec::len).sum();
        }
        if len >= self.capacity {
            let oldest = entries
                .iter()
                .flat_map(|(k, bucket)| bucket.iter().map(move |e| (*k, e.until)))
                .min_by_key(|(_, u)| *u);
            if let Some((key, u)) = oldest {
                if let Some(bucket) = entries.get_mut(&key) {
                    bucket.retain(|e| e.until != u);
                }
            }
        }
        let bucket = entries.entry(fingerprint(token)).or_default();
        bucket.retain(|e| &*e.token != token);
        bucket.push(Entry {
            token: token.into(),
            verified: verified.clone(),
            until,
        });
    }
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
        assert_eq!(cache.lock().values().map(Vec::len).sum::<usize>(), 2);
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
