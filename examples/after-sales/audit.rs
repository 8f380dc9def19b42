//! Middleware of the desk: a log line for each tool call, resource read
//! and prompt get, on stderr. (What the desk did, by whom, is the database's
//! `audit_log`, written in the transaction that does it: `desk.rs`. Its rate
//! limit per caller is the framework's own: `ServerBuilder::rate_limit` in
//! `main.rs`.)

use mcp_runtime::{Call, CallOutcome, Middleware, MiddlewareFuture};

/// Logs every call and how it ended (to stderr, through `tracing`).
pub struct Audit;

impl Middleware for Audit {
    fn after<'a>(&'a self, call: &'a Call<'a>, outcome: &'a CallOutcome) -> MiddlewareFuture<'a, ()> {
        tracing::info!(kind = ?call.kind, name = call.name, principal = ?call.principal, ?outcome, "audit");
        Box::pin(std::future::ready(()))
    }
}
