//! Tool timeouts and concurrency bounds. `#[tool(timeout = "..")]` and the
//! server's default stop a call that runs too long; the handler's
//! cancellation token fires before its future is dropped, the caller gets a
//! tool error saying so, and the stream goes on. (A task tool's timeout:
//! `tests/tasks.rs`.) `#[tool(max_concurrency = N)]`: one call more waits
//! for a place at most the server's `busy_wait`, then is told the tool is
//! busy.

mod support;

use mcp_runtime::prelude::*;
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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

/// Holds one of four places for `ms`.
#[tool(max_concurrency = 4)]
async fn scarce(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("held a place {ms} ms")
}

#[tokio::test]
async fn a_fifth_call_waits_for_a_place_then_is_told_the_tool_is_busy() {
    let server = Server::builder().busy_wait(Duration::from_millis(200)).build().unwrap();
    let mut c = StdioClient::start(server);
    for id in 1..=5 {
        c.send(id, "tools/call", json!({"name": "scarce", "arguments": {"ms": 800}}))
            .await;
    }
    // The fifth waited 200 ms for a place and gave up, before any of the four ended.
    let first = c.recv().await;
    assert_eq!(first["id"], 5, "{first}");
    assert_eq!(first["result"]["isError"], true);
    assert_eq!(
        text(&first),
        "Tool `scarce` is busy: it runs a limited number of calls at once, and none ended within 200ms; retry shortly"
    );
    for _ in 1..=4 {
        let v = c.recv().await;
        assert_eq!(text(&v), "held a place 800 ms", "{v}");
    }
    c.close().await.unwrap();

    // With a longer wait, the fifth runs once a place is free.
    let server = Server::builder().busy_wait(Duration::from_secs(3)).build().unwrap();
    let mut c = StdioClient::start(server);
    let started = Instant::now();
    for id in 1..=5 {
        c.send(id, "tools/call", json!({"name": "scarce", "arguments": {"ms": 300}}))
            .await;
    }
    let mut last = json!(null);
    for _ in 1..=5 {
        last = c.recv().await;
        assert_eq!(text(&last), "held a place 300 ms", "{last}");
    }
    assert_eq!(last["id"], 5);
    assert!(
        started.elapsed() >= Duration::from_millis(600),
        "{:?}",
        started.elapsed()
    );
    c.close().await.unwrap();
}

static SCARCE_RUNNING: AtomicUsize = AtomicUsize::new(0);
static SCARCE_MOST: AtomicUsize = AtomicUsize::new(0);

/// Holds its thread (and a scarce connection, say) for `ms`; one at a time,
/// for 100 ms at most.
#[tool(blocking, max_concurrency = 1, timeout = "100ms")]
fn scarce_blocking(ms: u64) -> String {
    let running = SCARCE_RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
    SCARCE_MOST.fetch_max(running, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(ms));
    SCARCE_RUNNING.fetch_sub(1, Ordering::SeqCst);
    format!("held the thread {ms} ms")
}

/// A blocking function that timed out goes on on its thread: its place stays
/// taken until it returns, so the next call waits for it rather than run
/// beside it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_call_that_timed_out_keeps_its_place_until_its_function_returns() {
    let mut c = StdioClient::start(Server::builder().build().unwrap());
    let started = Instant::now();
    let first = c
        .call(
            1,
            "tools/call",
            json!({"name": "scarce_blocking", "arguments": {"ms": 600}}),
        )
        .await;
    assert_eq!(first["result"]["isError"], true, "{first}");
    assert_eq!(
        text(&first),
        "Tool `scarce_blocking` timed out after 100ms; its work runs on until it returns, and its result is dropped"
    );
    let second = c
        .call(
            2,
            "tools/call",
            json!({"name": "scarce_blocking", "arguments": {"ms": 1}}),
        )
        .await;
    assert_eq!(text(&second), "held the thread 1 ms", "{second}");
    assert!(
        started.elapsed() >= Duration::from_millis(550),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(SCARCE_MOST.load(Ordering::SeqCst), 1, "two calls ran at once");
    c.close().await.unwrap();
}

/// Holds its thread for `ms`, for 100 ms at most.
#[tool(blocking, timeout = "100ms")]
fn long_blocking(ms: u64) -> String {
    std::thread::sleep(Duration::from_millis(ms));
    format!("held the thread {ms} ms")
}

/// A blocking function that timed out holds its caller's place among its
/// calls in progress until it returns: with one call at once per caller,
/// the caller's next call is refused until then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_call_that_timed_out_holds_its_callers_place_until_its_function_returns() {
    let server = Server::builder()
        .max_calls_per_caller(1)
        .busy_wait(Duration::from_millis(50))
        .build()
        .unwrap();
    let mut c = StdioClient::start(server);
    // A call first: the client validates each answer against the schema,
    // and its validator is built at the first (half a second in a debug
    // build), which would otherwise delay the call beside the thread held
    // until the thread is free.
    let warm = c
        .call(0, "tools/call", json!({"name": "nap", "arguments": {"ms": 1}}))
        .await;
    assert_eq!(text(&warm), "slept 1 ms", "{warm}");
    let first = c
        .call(
            1,
            "tools/call",
            json!({"name": "long_blocking", "arguments": {"ms": 800}}),
        )
        .await;
    assert_eq!(first["result"]["isError"], true, "{first}");
    let second = c
        .call(2, "tools/call", json!({"name": "nap", "arguments": {"ms": 1}}))
        .await;
    assert!(
        second["error"]["data"]["retryAfterMs"].is_u64(),
        "a call beside the thread still held: {second}"
    );
    tokio::time::sleep(Duration::from_millis(900)).await;
    let third = c
        .call(3, "tools/call", json!({"name": "nap", "arguments": {"ms": 1}}))
        .await;
    assert_eq!(text(&third), "slept 1 ms", "{third}");
    c.close().await.unwrap();
}

/// Reports progress every 40 ms for `ms`, past its 100 ms timeout.
#[tool(blocking, timeout = "100ms")]
fn noisy_blocking(ms: u64, ctx: Context) -> String {
    let started = Instant::now();
    let mut step = 0.0;
    while started.elapsed() < Duration::from_millis(ms) {
        ctx.progress(step, None, None);
        step += 1.0;
        std::thread::sleep(Duration::from_millis(40));
    }
    "done".into()
}

/// A call that timed out sends no progress after its answer, though its
/// blocking function runs on and keeps reporting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_progress_follows_the_answer_of_a_call_that_timed_out() {
    let mut c = StdioClient::start(Server::builder().build().unwrap());
    let mut meta = support::meta_with(json!({}));
    meta["progressToken"] = json!("p1");
    let params = json!({"name": "noisy_blocking", "arguments": {"ms": 500}, "_meta": meta});
    let answer = c.call(1, "tools/call", params).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let after = tokio::time::timeout(Duration::from_millis(600), c.from_server.next_line()).await;
    assert!(after.is_err(), "a message after the answer: {after:?}");
    c.close().await.unwrap();
}
