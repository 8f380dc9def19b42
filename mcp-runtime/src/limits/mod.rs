//! Guardrails per caller, checked before a handler runs (by
//! `dispatch::guard`, the first link of the middleware chain): rate limits
//! (the cell rate algorithm, for the whole server and per tool) and calls in
//! progress per caller. A caller is its principal, else its address.
//!
//! The cells live in this process, or in a [`RateStore`] that replicas share
//! (Redis, the `redis` feature: one script, one round trip). When the shared
//! store fails, the limits hold per replica (said once in the log) and the
//! store is tried again a second later.

mod callers;
mod gcra;
mod rate;

pub use rate::{Rate, RateError};

use crate::error::McpError;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The future a [`RateStore`] returns: `Ok(None)` admitted, `Ok(Some(wait))`
/// refused until `wait` has passed.
pub type RateFuture<'a> = Pin<Box<dyn Future<Output = Result<Option<Duration>, RateStoreError>> + Send + 'a>>;

/// Why a [`RateStore`] could not answer.
#[derive(Debug, Clone, thiserror::Error)]
#[error("rate store unavailable: {0}")]
pub struct RateStoreError(pub String);

/// Where rate-limit cells live when replicas share them: one atomic step of
/// the cell rate algorithm per call (check and spend together, so two
/// replicas never both spend the last call of a burst).
pub trait RateStore: Send + Sync + 'static {
    /// Spends one call of `rate` from the cell named `key`.
    fn spend<'a>(&'a self, key: &'a str, rate: Rate) -> RateFuture<'a>;

    /// Gives back one call [`spend`](Self::spend) took from `key`'s cell,
    /// for a call a later limit refused (so a call refused by a tool's own
    /// rate does not use up its caller's rate for the whole server). The
    /// default gives nothing back.
    fn give_back<'a>(&'a self, key: &'a str, rate: Rate) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        let _ = (key, rate);
        Box::pin(std::future::ready(()))
    }
}

/// How long the shared store is left alone after it failed.
const RETRY_SHARED: Duration = Duration::from_secs(1);

/// How long a call waits for the shared store's verdict before it is
/// judged here instead (a store that is down may not fail at once: its
/// client may be reconnecting).
const SHARED_WAIT: Duration = Duration::from_millis(250);

/// A server's limits per caller.
pub(crate) struct Limits {
    /// Calls (tool calls, reads, gets) per caller for the whole server.
    server_rate: Option<Rate>,
    /// Calls in progress per caller.
    callers: Option<Arc<callers::Callers>>,
    /// Whether some tool has a rate of its own (then calls look it up).
    tool_rates: AtomicBool,
    local: gcra::Cells,
    shared: Option<Arc<dyn RateStore>>,
    /// 0 while the shared store answers; after it failed, the time (in
    /// milliseconds after `started`) when one call tries it again.
    degraded_until: AtomicU64,
    degraded: AtomicBool,
    started: Instant,
}

/// What an admitted call holds until it ends.
pub(crate) struct Admitted(#[allow(dead_code)] Option<callers::Place>);

impl Limits {
    pub(crate) fn new(
        server_rate: Option<Rate>,
        per_caller: Option<usize>,
        tool_rates: bool,
        shared: Option<Arc<dyn RateStore>>,
    ) -> Self {
        Limits {
            server_rate,
            callers: per_caller.map(callers::Callers::new),
            tool_rates: AtomicBool::new(tool_rates),
            local: gcra::Cells::new(),
            shared,
            degraded_until: AtomicU64::new(0),
            degraded: AtomicBool::new(false),
            started: Instant::now(),
        }
    }

    /// Whether a limit for every call is set (a rate per caller, or calls
    /// in progress per caller), as opposed to one tool's own rate.
    pub(crate) fn server_wide(&self) -> bool {
        self.server_rate.is_some() || self.callers.is_some()
    }

    /// Whether any limit is set: when not, nothing is looked up per call.
    pub(crate) fn any(&self) -> bool {
        self.server_rate.is_some() || self.callers.is_some() || self.tool_rates.load(Ordering::Relaxed)
    }

    /// Whether some tool's own rate is counted in a shared store.
    pub(crate) fn shares_tool_rates(&self) -> bool {
        self.shared.is_some() && self.tool_rates()
    }

    /// Whether tool calls look up their tool's own rate.
    pub(crate) fn tool_rates(&self) -> bool {
        self.tool_rates.load(Ordering::Relaxed)
    }

    /// A tool with a rate of its own was added at run time.
    pub(crate) fn note_tool_rate(&self) {
        self.tool_rates.store(true, Ordering::Relaxed);
    }

    /// Admits a call of `caller` (to `tool`, with its own rate, if it has
    /// one), or refuses it with the delay to wait (HTTP 429). A place in
    /// progress is waited for first, at most `wait`; then the rates are
    /// spent, the server's before the tool's, and a call the tool's rate
    /// refuses gives the server's back at once (so nothing spent since
    /// can be given back in its stead).
    pub(crate) async fn admit(
        &self,
        caller: String,
        tool: Option<(&str, Rate)>,
        wait: Duration,
    ) -> Result<Admitted, McpError> {
        let place = match &self.callers {
            None => None,
            Some(callers) => match callers.take(caller.clone(), wait).await {
                Some(place) => Some(place),
                None => {
                    return Err(McpError::rate_limited(
                        "Busy: this caller has too many calls in progress; retry when one ends",
                        Duration::from_secs(1),
                    ));
                }
            },
        };
        let mut spent = None;
        if let Some(rate) = self.server_rate {
            match self.spend(&caller, rate).await {
                (Some(delay), _) => {
                    return Err(McpError::rate_limited(
                        format!("Rate limited: over {rate} for this caller; retry in {}", seconds(delay)),
                        delay,
                    ))
                }
                (None, at) => spent = Some((rate, at)),
            }
        }
        if let Some((name, rate)) = tool {
            let key = format!("tool\u{1f}{name}\u{1f}{caller}");
            if let (Some(delay), _) = self.spend(&key, rate).await {
                if let Some((server_rate, at)) = spent {
                    self.give_back(&caller, server_rate, at).await;
                }
                return Err(McpError::rate_limited(
                    format!(
                        "Rate limited: over {rate} of {name} for this caller; retry in {}",
                        seconds(delay)
                    ),
                    delay,
                ));
            }
        }
        Ok(Admitted(place))
    }

    /// A place among `caller`'s calls in progress taken whatever its bound
    /// (none without that limit): a `#[tool(blocking)]` function that runs
    /// on after its call ended holds it until it returns, so a caller's
    /// calls at once count the threads its calls still hold.
    pub(crate) fn hold_on(&self, caller: String) -> Option<Admitted> {
        self.callers
            .as_ref()
            .map(|callers| Admitted(Some(callers.force(caller))))
    }

    /// Whether calls in progress are counted per caller.
    pub(crate) fn counts_callers(&self) -> bool {
        self.callers.is_some()
    }

    /// Gives back one call of `key`'s cell at `rate`, where it was spent (a
    /// shared store that does not answer in time keeps it).
    async fn give_back(&self, key: &str, rate: Rate, at: Where) {
        match (at, &self.shared) {
            (Where::Shared, Some(shared)) => {
                let _ = tokio::time::timeout(SHARED_WAIT, shared.give_back(key, rate)).await;
            }
            _ => self.local.give_back(key, rate),
        }
    }

    /// Spends one call from `key`'s cell: in the shared store unless it is
    /// down, else here. While it is down, one call a second tries it again.
    /// Says where it was judged.
    async fn spend(&self, key: &str, rate: Rate) -> (Option<Duration>, Where) {
        if let Some(shared) = &self.shared {
            let now = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
            let retry_at = now.saturating_add(u64::try_from(RETRY_SHARED.as_millis()).unwrap_or(1000));
            let until = self.degraded_until.load(Ordering::Acquire);
            // Up (0), or down and this call is the one that tries it again.
            let try_shared = until == 0
                || (now >= until
                    && self
                        .degraded_until
                        .compare_exchange(until, retry_at, Ordering::AcqRel, Ordering::Relaxed)
                        .is_ok());
            if try_shared {
                let verdict = match tokio::time::timeout(SHARED_WAIT, shared.spend(key, rate)).await {
                    Ok(verdict) => verdict,
                    Err(_) => Err(RateStoreError(format!("no answer within {SHARED_WAIT:?}"))),
                };
                match verdict {
                    Ok(verdict) => {
                        // Only the call that tried the store again says it is back:
                        // an answer to a call sent before it failed says nothing.
                        if until != 0 {
                            self.degraded_until.store(0, Ordering::Release);
                            if self.degraded.swap(false, Ordering::Relaxed) {
                                tracing::info!("rate limits: the shared store answers again; limits are shared again");
                            }
                        }
                        return (verdict, Where::Shared);
                    }
                    Err(e) => {
                        self.degraded_until.store(retry_at.max(1), Ordering::Release);
                        if !self.degraded.swap(true, Ordering::Relaxed) {
                            tracing::warn!("rate limits: {e}; each replica now limits on its own until it is back");
                        }
                    }
                }
            }
        }
        (self.local.spend(key, rate), Where::Here)
    }
}

/// Where a call's cell was spent.
#[derive(Clone, Copy)]
enum Where {
    Here,
    Shared,
}

/// A delay as the message says it: "0.3 s".
fn seconds(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64().max(0.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shared store that never answers (its client reconnecting forever).
    struct Silent;

    impl RateStore for Silent {
        fn spend<'a>(&'a self, _key: &'a str, _rate: Rate) -> RateFuture<'a> {
            Box::pin(std::future::pending())
        }
    }

    #[tokio::test]
    async fn a_call_refused_by_its_tools_rate_gives_back_the_servers() {
        let server: Rate = "2/min burst 2".parse().unwrap();
        let tool: Rate = "1/min burst 1".parse().unwrap();
        let limits = Limits::new(Some(server), Some(2), true, None);
        let first = limits.admit("a".into(), Some(("t", tool)), Duration::ZERO).await;
        assert!(first.is_ok());
        // The tool's own rate refuses it: the server's call is given back.
        let refused = limits.admit("a".into(), Some(("t", tool)), Duration::ZERO).await;
        assert!(refused.err().is_some_and(|e| e.message().contains("of t")));
        let second = limits.admit("a".into(), None, Duration::ZERO).await;
        assert!(second.is_ok(), "the server's second call");
        // Two calls in progress at most: refused before it spends anything.
        let busy = limits.admit("a".into(), None, Duration::ZERO).await;
        assert!(busy.err().is_some_and(|e| e.message().starts_with("Busy")));
        drop((first, second));
        let third = limits.admit("a".into(), None, Duration::ZERO).await;
        assert!(
            third.err().is_some_and(|e| e.message().contains("over 2/min")),
            "its third"
        );
    }

    #[tokio::test]
    async fn a_store_that_does_not_answer_is_replaced_by_local_cells_for_a_while() {
        let rate: Rate = "2/min".parse().unwrap();
        let limits = Limits::new(Some(rate), None, false, Some(Arc::new(Silent)));
        let started = Instant::now();
        assert!(limits.admit("a".into(), None, Duration::ZERO).await.is_ok());
        assert!(started.elapsed() >= SHARED_WAIT, "the first call waited for the store");
        let again = Instant::now();
        assert!(limits.admit("a".into(), None, Duration::ZERO).await.is_ok());
        let refused = limits
            .admit("a".into(), None, Duration::ZERO)
            .await
            .err()
            .expect("the local cell is spent");
        assert!(again.elapsed() < SHARED_WAIT, "the next calls did not wait for it");
        assert_eq!(refused.http_status(), 429);
        assert!(
            refused.retry_after().is_some_and(|d| d > Duration::from_secs(20)),
            "{refused:?}"
        );
    }
}
