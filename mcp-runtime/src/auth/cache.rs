//! A bounded cache of verified tokens: a token seen again within its
//! lifetime (and the cache's) is not verified again.
//!
//! Entries are keyed by the SHA-256 digest of the token, and the token
//! itself is not kept: a dump of the process's memory does not hand out
//! bearer tokens, and a lookup compares 32 bytes. The digest must resist
//! collisions, since nothing else tells two tokens apart: SHA-256 is the
//! usual choice for tokens at rest, and the `sha2` crate (already built for
//! `jsonwebtoken`) uses the CPU's SHA extensions where there are some, so
//! a kilobyte-long JWT costs well under a microsecond, against the tens of
//! microseconds of the request it authorizes (`bench/auth.sh`). The map
//! hashes the digest again with the standard library's randomly keyed
//! hasher, so that tokens ground to share a bucket cannot slow lookups.

use super::AccessToken;
use sha2::Digest as _;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The SHA-256 digest of a token: what the caches keep instead of it.
pub(crate) type TokenDigest = [u8; 32];

/// The digest a cache keys `token` by.
pub(crate) fn digest(token: &str) -> TokenDigest {
    sha2::Sha256::digest(token.as_bytes()).into()
}

struct Entry<V> {
    verified: V,
    until: Instant,
}

/// The entries by digest.
struct Entries<V> {
    map: HashMap<TokenDigest, Entry<V>>,
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
            entries: Mutex::new(Entries { map: HashMap::new() }),
            capacity,
            ttl,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries<V>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The answer about the token of `digest`, if it is cached and still valid.
    pub(crate) fn get(&self, digest: &TokenDigest) -> Option<V> {
        if self.capacity == 0 {
            return None;
        }
        let now = Instant::now();
        let entries = self.lock();
        entries
            .map
            .get(digest)
            .filter(|e| e.until > now)
            .map(|e| e.verified.clone())
    }

    /// Keeps an answer about the token of `digest`, which expires at
    /// `expires_at` (Unix seconds).
    pub(crate) fn put(&self, digest: &TokenDigest, verified: &V, expires_at: Option<u64>) {
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
        if entries.map.len() >= self.capacity && !entries.map.contains_key(digest) {
            evict(&mut entries, now, self.capacity / 8 + 1);
        }
        entries.map.insert(
            *digest,
            Entry {
                verified: verified.clone(),
                until,
            },
        );
    }
}

/// Drops the expired entries, then (if that freed fewer than `at_least`)
/// the ones that expire soonest, `at_least` in all.
fn evict<V>(entries: &mut Entries<V>, now: Instant, at_least: usize) {
    let before = entries.map.len();
    entries.map.retain(|_, e| e.until > now);
    let freed = before.saturating_sub(entries.map.len());
    if freed >= at_least {
        return;
    }
    let mut untils: Vec<Instant> = entries.map.values().map(|e| e.until).collect();
    let cut = at_least.saturating_sub(freed).min(untils.len());
    if cut == 0 {
        return;
    }
    untils.select_nth_unstable(cut - 1);
    let Some(&limit) = untils.get(cut - 1) else { return };
    entries.map.retain(|_, e| e.until > limit);
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
        cache.put(&digest("t1"), &token, None);
        cache.put(&digest("t2"), &token, None);
        cache.put(&digest("t3"), &token, None);
        assert!(cache.lock().map.len() <= 2, "bounded");
        assert!(cache.get(&digest("t3")).is_some());
        assert!(cache.get(&digest("t4")).is_none());
        let expired = Arc::new(AccessToken {
            expires_at: Some(1),
            ..AccessToken::clone(&token)
        });
        cache.put(&digest("old"), &expired, expired.expires_at);
        assert!(
            cache.get(&digest("old")).is_none(),
            "an expired token is not served from the cache"
        );
    }
}
