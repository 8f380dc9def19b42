//! Tool timeouts: `#[tool(timeout = "..")]` and the server's default stop a
//! call that runs too long; the handler's cancellation token fires before
//! its future is dropped, the caller gets a tool error saying so, and the
//! stream goes on. (A task tool's timeout: `tests/tasks.rs`.)

mod support;

use mcp_runtime::prelude::*;
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use support::StdioClient;

static SAW_CANCEL: AtomicBool = AtomicBool::new(false);

/// Waits for a minute, unless stopped.
#[tool(timeout = "200ms")]
async fn stuck(cancel: Cancellation) -> String {
    let watcher = cancel.clone();
    tokio::spawn(async move {
        watcher.cancelled().await;
        SAW_CANCEL.store(true, Ordering::SeqCst);
    });
    tokio::time::sleep(Duration::from_secs(60)).await;
    "never".into()
}

/// Sleeps `ms`; no timeout of its own.
#[tool]
async fn nap(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("slept {ms} ms")
}

/// Sleeps `ms`, within its own timeout, longer than the server's.
#[tool(timeout = "5s")]
async fn patient(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("waited {ms} ms")
}

fn text(v: &serde_json::Value) -> &str {
    v["result"]["content"][0]["text"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a_call_past_its_timeout_is_cancelled_then_answered_with_a_tool_error() {
    let mut c = StdioClient::start(Server::builder().build().unwrap());
    let started = Instant::now();
    let v = c.call(1, "tools/call", json!({"name": "stuck", "arguments": {}})).await;
    assert_eq!(v["result"]["isError"], true, "{v}");
    assert_eq!(text(&v), "Tool `stuck` timed out after 200ms and was stopped");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    support::eventually("the handler saw its token fire", || SAW_CANCEL.load(Ordering::SeqCst)).await;
    // The stream goes on.
    let v = c
        .call(2, "tools/call", json!({"name": "nap", "arguments": {"ms": 1}}))
        .await;
    assert_eq!(text(&v), "slept 1 ms");
    c.close().await.unwrap();
}

#[tokio::test]
async fn the_servers_default_applies_to_tools_without_their_own() {
    let server = Server::builder()
        .tool_timeout(Duration::from_millis(150))
        .build()
        .unwrap();
    let mut c = StdioClient::start(server);
    let v = c
        .call(1, "tools/call", json!({"name": "nap", "arguments": {"ms": 10000}}))
        .await;
    assert_eq!(text(&v), "Tool `nap` timed out after 150ms and was stopped", "{v}");
    let v = c
        .call(2, "tools/call", json!({"name": "nap", "arguments": {"ms": 5}}))
        .await;
    assert_eq!(text(&v), "slept 5 ms");
    // A tool's own timeout wins over the default.
    let v = c
        .call(3, "tools/call", json!({"name": "patient", "arguments": {"ms": 400}}))
        .await;
    assert_eq!(text(&v), "waited 400 ms", "{v}");
    c.close().await.unwrap();
}
