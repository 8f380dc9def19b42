//! The guardrails' peer: `ours` (the same `echo` tool, the same `main!`)
//! plus a `nap` tool, for `bash bench/guardrails.sh`. Its guardrails are set
//! from the environment as for any `main!` binary (`MCP_TOOL_TIMEOUT`,
//! `MCP_RATE_LIMIT`, `MCP_MAX_CALLS_PER_CALLER`, `MCP_MAX_IN_FLIGHT`; all off
//! when unset), so one binary measures what each costs on the `echo` path,
//! and `nap` holds a request in flight for a known time to measure shedding
//! under overload (`driver shed`). `guarded` serves stdio;
//! `guarded --http ADDR` serves Streamable HTTP at `http://ADDR/mcp`.

use mcp_runtime::prelude::*;

/// Echoes its text back.
#[tool(read_only, idempotent)]
fn echo(
    /// The text to echo.
    text: String,
) -> String {
    text
}

/// Sleeps `ms` milliseconds (without holding a thread), then says so.
#[tool(read_only, idempotent)]
async fn nap(
    /// How long to sleep, in milliseconds.
    ms: u64,
) -> String {
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    format!("slept {ms} ms")
}

mcp_runtime::main!();
