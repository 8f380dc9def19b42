//! Middleware of the desk: a per-caller rate limit on every tool call,
//! resource read and prompt get, and an audit line for each call.

use mcp_runtime::{Call, CallOutcome, McpError, Middleware, MiddlewareFuture};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// At most `calls` calls per `window` for each principal (callers without
/// one share the `anonymous` allowance).
pub struct RateLimit {
    calls: usize,
    window: Duration,
    seen: Mutex<HashMap<String, Vec<Instant>>>,
}

impl RateLimit {
    /// `calls` per `window`.
    pub fn new(calls: usize, window: Duration) -> Self {
        RateLimit {
            calls,
            window,
            seen: Mutex::default(),
        }
    }
}

impl Middleware for RateLimit {
    fn before<'a>(&'a self, call: &'a Call<'a>) -> MiddlewareFuture<'a, Result<(), McpError>> {
        let now = Instant::now();
        let who = call.principal.unwrap_or("anonymous").to_owned();
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let times = seen.entry(who).or_default();
        times.retain(|t| now.duration_since(*t) < self.window);
        let verdict = if times.len() >= self.calls {
            let wait = times
                .first()
                .map(|t| self.window.saturating_sub(now.duration_since(*t)))
                .unwrap_or(self.window);
            Err(McpError::invalid_request(format!(
                "Rate limited: at most {} calls per {} s; retry in {} s",
                self.calls,
                self.window.as_secs(),
                wait.as_secs().max(1)
            )))
        } else {
            times.push(now);
            Ok(())
        };
        Box::pin(std::future::ready(verdict))
    }
}

/// Logs every call and how it ended (to stderr, through `tracing`).
pub struct Audit;

impl Middleware for Audit {
    fn after<'a>(&'a self, call: &'a Call<'a>, outcome: &'a CallOutcome) -> MiddlewareFuture<'a, ()> {
        tracing::info!(kind = ?call.kind, name = call.name, principal = ?call.principal, ?outcome, "audit");
        Box::pin(std::future::ready(()))
    }
}
