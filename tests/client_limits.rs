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

/// A 2025-11-25 server that answers one request with 404 (it no longer
/// knows the session) has that request sent again on a new session, and
/// only that one: a call in flight on the old session keeps waiting for its
/// own stream, and is not sent twice (it may be running).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_404_sends_again_only_the_request_it_refused() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let refused = AtomicBool::new(false);
    let (url, seen) = peer::serve(
        move |request| match (request.rpc(), request.body["params"]["name"].as_str()) {
            ("initialize", _) => peer::legacy_initialize(request),
            ("tools/call", Some("slow")) => Script::Stream(vec![": working\n\n".into()]),
            ("tools/call", Some("other")) if !refused.swap(true, Ordering::SeqCst) => {
                Script::Reply("404 Not Found", "application/json", String::new())
            }
            ("tools/call", Some("other")) => peer::json(json!({"jsonrpc": "2.0", "id": request.body["id"],
                "result": {"content": [{"type": "text", "text": "other"}]}})),
            _ => Script::Reply("202 Accepted", "application/json", String::new()),
        },
    )
    .await;
    let client = Client::http(url).era(Era::Legacy).connect().await.expect("connects");
    let slow = {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("slow", json!({})).await })
    };
    let is_call =
        |name: &'static str| move |s: &peer::Seen| s.rpc() == "tools/call" && s.body["params"]["name"] == name;
    wait_for(&seen, is_call("slow")).await;
    let other = tokio::time::timeout(Duration::from_secs(10), client.call_tool("other", json!({})))
        .await
        .expect("answered in time")
        .expect("sent again on a new session");
    assert_eq!(other.text(), "other");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!slow.is_finished(), "the slow call still waits for its own stream");
    slow.abort();
    let seen = seen.lock().unwrap();
    let count = |found: &dyn Fn(&peer::Seen) -> bool| seen.iter().filter(|s| found(s)).count();
    assert_eq!(count(&is_call("slow")), 1, "{seen:?}");
    assert_eq!(count(&is_call("other")), 2, "{seen:?}");
    assert_eq!(count(&|s: &peer::Seen| s.rpc() == "initialize"), 2, "{seen:?}");
}

/// An upstream's URL may carry secrets (a user and password, an API key in
/// the query): errors a gateway's callers read never show them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_never_show_the_secrets_of_an_upstreams_url() {
    // Nothing listens there: the connection is refused.
    let nowhere = Client::http("http://u:s3cret@127.0.0.1:1/mcp?key=s3cret")
        .era(Era::Legacy)
        .connect()
        .await
        .expect_err("nothing listens");
    // A server that refuses the call.
    let url = legacy_peer("tools/call", |_| {
        Script::Reply("502 Bad Gateway", "text/plain", "down".into())
    })
    .await;
    let url = url.replacen("http://", "http://u:s3cret@", 1) + "?key=s3cret";
    let client = Client::http(url).era(Era::Legacy).connect().await.expect("connects");
    assert!(!client.name().contains("s3cret"), "{}", client.name());
    let refused = client.call_tool("any", json!({})).await.expect_err("a 502");
    for e in [nowhere.to_string(), refused.to_string()] {
        assert!(!e.contains("s3cret"), "{e}");
        assert!(e.contains("127.0.0.1"), "the upstream is still named: {e}");
    }
}
