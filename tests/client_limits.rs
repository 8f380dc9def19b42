//! What the client does with a server that misbehaves: a result that is not
//! an object, an event or an error body without end, a message it never
//! answers, a `ping`. Each case is a scripted HTTP/1.1 peer on a loopback
//! port (`tests/support/peer.rs`) saying exactly that one thing; the client
//! must fail the call with a clear error, in bounded time and memory, and
//! never panic.

mod support;

use mcp_runtime::client::{Calls, Client, Era};
use serde_json::json;
use std::time::Duration;
use support::peer::{self, Script};

/// A 2025-11-25 peer that answers `initialize`, accepts what carries no id,
/// and answers `method` with `answer`.
async fn legacy_peer(method: &'static str, answer: impl Fn(&peer::Seen) -> Script + Send + Sync + 'static) -> String {
    let (url, _) = peer::serve(move |request| match request.rpc() {
        "initialize" => peer::legacy_initialize(request),
        m if m == method => answer(request),
        _ => Script::Reply("202 Accepted", "application/json", String::new()),
    })
    .await;
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_that_is_not_an_object_is_an_error_not_a_panic() {
    let url = legacy_peer("tools/list", |request| {
        peer::json(json!({"jsonrpc": "2.0", "id": request.body["id"], "result": []}))
    })
    .await;
    let client = Client::http(url).era(Era::Legacy).connect().await.expect("connects");
    let e = tokio::time::timeout(Duration::from_secs(10), client.list_tools())
        .await
        .expect("answered in time")
        .expect_err("an array is no list result");
    assert!(e.to_string().contains("not a JSON object"), "{e}");
}

/// Polls `seen` until a request matches `found`, for at most 5 s.
async fn wait_for(
    seen: &std::sync::Arc<std::sync::Mutex<Vec<peer::Seen>>>,
    found: impl Fn(&peer::Seen) -> bool,
) -> peer::Seen {
    for _ in 0..100 {
        if let Some(s) = seen.lock().unwrap().iter().find(|s| found(s)) {
            return s.clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("not sent within 5 s: {:?}", seen.lock().unwrap());
}

/// The server's `ping` is answered by the client itself, with `{}`, even
/// when an answerer of asks is installed (a gateway's refuses what it cannot
/// route to a caller).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ping_is_answered_by_the_client_not_the_answerer() {
    let ping = json!({"jsonrpc": "2.0", "id": "p1", "method": "ping"});
    let (url, seen) = peer::serve(move |request| match request.rpc() {
        "initialize" => peer::legacy_initialize(request),
        "tools/call" => Script::Stream(vec![format!("data: {ping}\n\n")]),
        _ => Script::Reply("202 Accepted", "application/json", String::new()),
    })
    .await;
    let client = Client::http(url)
        .era(Era::Legacy)
        .on_ask(|_| async { Err(mcp_runtime::McpError::internal("asks are refused")) })
        .connect()
        .await
        .expect("connects");
    let call = tokio::spawn(async move { client.call_tool("slow", json!({})).await });
    let answer = wait_for(&seen, |s| s.body["id"] == "p1").await;
    call.abort();
    assert_eq!(answer.body, json!({"jsonrpc": "2.0", "id": "p1", "result": {}}));
}

/// A server that never takes a notification (no 202, the connection held
/// open) holds up nothing for longer than the client's timeout: not the
/// connection (`notifications/initialized`), not a timed-out call (its
/// `notifications/cancelled`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_the_server_never_takes_is_not_waited_for_without_end() {
    // Takes nothing after `initialize`: the session never opens.
    let (url, _) = peer::serve(|request| match request.rpc() {
        "initialize" => peer::legacy_initialize(request),
        _ => Script::Hang,
    })
    .await;
    let connecting = Client::http(url)
        .era(Era::Legacy)
        .timeout(Duration::from_millis(500))
        .connect();
    let e = tokio::time::timeout(Duration::from_secs(5), connecting)
        .await
        .expect("gave up in time")
        .expect_err("the session never opened");
    assert!(e.to_string().contains("notifications/initialized"), "{e}");

    // Takes `notifications/initialized`, then neither the call nor its cancellation.
    let (url, seen) = peer::serve(|request| match request.rpc() {
        "initialize" => peer::legacy_initialize(request),
        "notifications/initialized" => Script::Reply("202 Accepted", "application/json", String::new()),
        _ => Script::Hang,
    })
    .await;
    let client = Client::http(url)
        .era(Era::Legacy)
        .timeout(Duration::from_millis(500))
        .connect()
        .await
        .expect("connects");
    let e = tokio::time::timeout(Duration::from_secs(5), client.call_tool("stuck", json!({})))
        .await
        .expect("the call failed in time")
        .expect_err("never answered");
    assert!(e.to_string().contains("no answer to tools/call"), "{e}");
    wait_for(&seen, |s| s.rpc() == "notifications/cancelled").await;
}

/// A refusal whose body never ends (500, chunked, without end) fails the
/// call at once with the status: only its first bytes are read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_without_end_is_read_only_as_far_as_it_needs() {
    let url = legacy_peer("tools/call", |_| {
        Script::Endless("500 Internal Server Error", "text/plain", "x".repeat(4096))
    })
    .await;
    let client = Client::http(url).era(Era::Legacy).connect().await.expect("connects");
    let e = tokio::time::timeout(Duration::from_secs(10), client.call_tool("broken", json!({})))
        .await
        .expect("refused in time")
        .expect_err("a 500");
    assert!(e.to_string().contains("HTTP 500"), "{e}");
}
