//! The client resumes a 2025-11-25 response stream that the server closed
//! before the answer (SSE polling): after the server's `retry`, a GET with
//! `Last-Event-ID` and the session's id brings the rest of the stream; a
//! server whose resumed streams bring nothing more fails the call after a
//! bounded number of attempts. The official SDKs' servers are exercised the
//! same way by `scripts/gateway-e2e.sh` (the `hop` check); here a scripted
//! HTTP/1.1 peer on a loopback port says exactly what each case needs.

mod support;

use mcp_runtime::client::{Calls, Client, Era};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::peer::{self, Script, Seen};

/// A 2025-11-25 server that answers `initialize`, closes the stream of a
/// `tools/call` after its priming event (`id: call-1`, `retry: 20`), and
/// answers a GET naming `Last-Event-ID: call-1` with the call's result when
/// `answers` is set, or with nothing new when not. Every request it read is
/// kept in order.
async fn scripted(answers: bool) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let call_id = Arc::new(Mutex::new(Value::Null));
    peer::serve(move |request| match (request.method.as_str(), request.rpc()) {
        ("POST", "initialize") => peer::legacy_initialize(request),
        ("POST", "tools/call") => {
            *call_id.lock().unwrap() = request.body["id"].clone();
            Script::Reply(
                "200 OK",
                "text/event-stream",
                "id: call-1\nretry: 20\ndata: \n\n".into(),
            )
        }
        ("POST", _) => Script::Reply("202 Accepted", "application/json", String::new()),
        ("GET", _) if request.header("last-event-id").is_some() => {
            let id = call_id.lock().unwrap().clone();
            let body = if answers {
                let result = json!({"jsonrpc": "2.0", "id": id, "result": {
                    "content": [{"type": "text", "text": "resumed"}]}});
                format!("id: call-2\ndata: {result}\n\n")
            } else {
                String::new()
            };
            Script::Reply("200 OK", "text/event-stream", body)
        }
        // No stream for what the server sends unasked.
        _ => Script::Reply("405 Method Not Allowed", "text/plain", String::new()),
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_closed_before_the_answer_is_resumed_after_its_last_event() {
    let (url, seen) = scripted(true).await;
    let client = Client::http(url).era(Era::Legacy).connect().await.expect("connects");
    let result = tokio::time::timeout(Duration::from_secs(10), client.call_tool("hop", json!({})))
        .await
        .expect("answered in time")
        .expect("the resumed stream's answer");
    assert_eq!(result.text(), "resumed");
    let seen = seen.lock().unwrap().clone();
    let resumed: Vec<&Seen> = seen.iter().filter(|s| s.header("last-event-id").is_some()).collect();
    assert_eq!(resumed.len(), 1, "{seen:?}");
    assert_eq!(resumed[0].method, "GET");
    assert_eq!(resumed[0].header("last-event-id"), Some("call-1"));
    assert_eq!(resumed[0].header("mcp-session-id"), Some("s1"));
    assert_eq!(resumed[0].header("mcp-protocol-version"), Some("2025-11-25"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resumptions_that_bring_nothing_fail_the_call_after_five() {
    let (url, seen) = scripted(false).await;
    let client = Client::http(url).era(Era::Legacy).connect().await.expect("connects");
    let e = tokio::time::timeout(Duration::from_secs(10), client.call_tool("hop", json!({})))
        .await
        .expect("failed in time, not after the client's timeout")
        .expect_err("no answer ever comes");
    assert!(e.to_string().contains("attempts to resume"), "{e}");
    let seen = seen.lock().unwrap();
    let resumed = seen
        .iter()
        .filter(|s| s.header("last-event-id") == Some("call-1"))
        .count();
    assert_eq!(resumed, 5, "{seen:?}");
}
