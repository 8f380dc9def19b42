//! A bounded cache of verified tokens: a token seen again within its
//! lifetime (and the cache's) is not verified again.

use super::AccessToken;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Verified tokens, each until the earlier of its `exp` and `ttl` after it
/// was verified; at most `capacity`, the oldest going first.
pub(crate) struct TokenCache {
    entries: Mutex<HashMap<String, (Arc<AccessToken>, Instant)>>,
    capacity: usize,
    ttl: Duration,
}

impl TokenCache {
    pub(crate) fn new(capacity: usize, ttl: Duration) -> Self {
        TokenCache {
            entries: Mutex::new(HashMap::new()),
            capacity,
            ttl,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Arc<AccessToken>, Instant)>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The verified token, if it is cached and still valid.
    pub(crate) fn get(&self, token: &str) -> Option<AccessToken> {
        let now = Instant::now();
        let mut entries = self.lock();
        match entries.get(token) {
            Some((verified, until)) if *until > now => Some(AccessToken::clone(verified)),
            Some(_) => {
                entries.remove(token);
                None
            }
            None => None,
        }
    }

    /// Keeps a verified token.
    pub(crate) fn put(&self, token: &str, verified: &AccessToken) {
        if self.capacity == 0 {
            return;
        }
        let now = Instant::now();
        let mut until = now + self.ttl;
        if let Some(exp) = verified.expires_at {
            let unix_now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs();
            let left = Duration::from_secs(exp.saturating_sub(unix_now));
            until = until.min(now + left);
        }
        let mut entries = self.lock();
        if entries.len() >= self.capacity {
            entries.retain(|_, (_, u)| *u > now);
        }
        if entries.len() >= self.capacity {
            if let Some(oldest) = entries.iter().min_by_key(|(_, (_, u))| *u).map(|(k, _)| k.clone()) {
                entries.remove(&oldest);
            }
        }
        entries.insert(token.to_owned(), (Arc::new(verified.clone()), until));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_and_the_cache_stays_bounded() {
        let cache = TokenCache::new(2, Duration::from_secs(60));
        let token = AccessToken {
            subject: "a".into(),
            ..AccessToken::default()
        };
        cache.put("t1", &token);
        cache.put("t2", &token);
        cache.put("t3", &token);
        assert_eq!(cache.lock().len(), 2);
        assert!(cache.get("t3").is_some());
        let expired = AccessToken {
            expires_at: Some(1),
            ..token
        };
        cache.put("old", &expired);
        assert!(
            cache.get("old").is_none(),
            "an expired token is not served from the cache"
        );
    }
}
