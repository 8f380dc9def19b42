//! The rate-limit cells replicas share: one key per cell holding its
//! theoretical arrival time, changed by one script per call.

use super::RedisShared;
use crate::limits::{Rate, RateFuture, RateStore, RateStoreError};
use std::time::Duration;

/// One step of the cell rate algorithm on Redis's own clock (replicas'
/// clocks may differ): KEYS[1] is the cell, ARGV[1] the interval and
/// ARGV[2] the tolerance, in microseconds. Returns 0 when the call is
/// admitted (and spent), else the microseconds to wait. The cell expires
/// when it holds nothing any more.
const SPEND: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]))
if not tat or tat < now then tat = now end
local wait = tat - tonumber(ARGV[2]) - now
if wait > 0 then return math.ceil(wait) end
local next = tat + tonumber(ARGV[1])
redis.call('SET', KEYS[1], string.format('%.0f', next), 'PX', math.ceil((next - now) / 1000) + 1)
return 0
";

/// Gives back one call of the cell KEYS[1] (ARGV[1] the interval, in
/// microseconds); a cell left holding nothing is removed.
const GIVE_BACK: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]))
if not tat then return 0 end
local back = tat - tonumber(ARGV[1])
if back <= now then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], string.format('%.0f', back), 'PX', math.ceil((back - now) / 1000) + 1)
end
return 0
";

impl RateStore for RedisShared {
    fn spend<'a>(&'a self, key: &'a str, rate: Rate) -> RateFuture<'a> {
        Box::pin(async move {
            let mut script = redis::cmd("EVAL");
            script
                .arg(SPEND)
                .arg(1)
                .arg(self.inner.names().rate_key(key))
                .arg(rate.interval_us())
                .arg(rate.tolerance_us());
            let wait: i64 = super::store::query(&self.inner.conn, &script)
                .await
                .map_err(|e| RateStoreError(e.to_string()))?;
            Ok((wait > 0).then(|| Duration::from_micros(wait.unsigned_abs())))
        })
    }

    fn give_back<'a>(
        &'a self,
        key: &'a str,
        rate: Rate,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'a>> {
        Box::pin(async move {
            let mut script = redis::cmd("EVAL");
            script
                .arg(GIVE_BACK)
                .arg(1)
                .arg(self.inner.names().rate_key(key))
                .arg(rate.interval_us());
            if let Err(e) = super::store::query::<i64>(&self.inner.conn, &script).await {
                tracing::debug!("rate limits: a spent call was not given back: {e}");
            }
        })
    }
}
