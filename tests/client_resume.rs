//! The client resumes a 2025-11-25 response stream that the server closed
//! before the answer (SSE polling): after the server's `retry`, a GET with
//! `Last-Event-ID` and the session's id brings the rest of the stream; a
//! server whose resumed streams bring nothing more fails the call after a
//! bounded number of attempts. The official SDKs' servers are exercised the
//! same way by `scripts/gateway-e2e.sh` (the `hop` check); here a scripted
//! HTTP/1.1 peer on a loopback port says exactly what each case needs.

use mcp_runtime::client::{Calls, Client, Era};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request as the peer read it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

async fn read_request(conn: &mut TcpStream) -> Option<Seen> {
    let mut buf = Vec::new();
    let end = loop {
        let mut chunk = [0u8; 4096];
        let n = conn.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let method = lines.next()?.split(' ').next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < end + length {
        let mut chunk = [0u8; 4096];
        let n = conn.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&buf[end..end + length]).unwrap_or(Value::Null);
    Some(Seen { method, headers, body })
}

async fn reply(conn: &mut TcpStream, status: &str, content_type: &str, body: &str) {
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\nmcp-session-id: s1\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = conn.write_all(head.as_bytes()).await;
    let _ = conn.write_all(body.as_bytes()).await;
    let _ = conn.shutdown().await;
}

/// A 2025-11-25 server that answers `initialize`, closes the stream of a
/// `tools/call` after its priming event (`id: call-1`, `retry: 20`), and
/// answers a GET naming `Last-Event-ID: call-1` with the call's result when
/// `answers` is set, or with nothing new when not. Every request it read is
/// kept in order.
async fn scripted(answers: bool) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("an address"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        let call_id = Arc::new(Mutex::new(Value::Null));
        while let Ok((mut conn, _)) = listener.accept().await {
            let log = log.clone();
            let call_id = call_id.clone();
            tokio::spawn(async move {
                let Some(request) = read_request(&mut conn).await else {
                    return;
                };
                log.lock().unwrap().push(request.clone());
                let rpc = request.body.get("method").and_then(Value::as_str).unwrap_or("");
                match (request.method.as_str(), rpc) {
                    ("POST", "initialize") => {
                        let result = json!({"jsonrpc": "2.0", "id": request.body["id"], "result": {
                            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                            "serverInfo": {"name": "scripted", "version": "1.0.0"}}});
                        reply(&mut conn, "200 OK", "application/json", &result.to_string()).await;
                    }
                    ("POST", "tools/call") => {
                        *call_id.lock().unwrap() = request.body["id"].clone();
                        reply(
                            &mut conn,
                            "200 OK",
                            "text/event-stream",
                            "id: call-1\nretry: 20\ndata: \n\n",
                        )
                        .await;
                    }
                    ("POST", _) => reply(&mut conn, "202 Accepted", "application/json", "").await,
                    ("GET", _) if request.header("last-event-id").is_some() => {
                        let id = call_id.lock().unwrap().clone();
                        let body = if answers {
                            let result = json!({"jsonrpc": "2.0", "id": id, "result": {
                                "content": [{"type": "text", "text": "resumed"}]}});
                            format!("id: call-2\ndata: {result}\n\n")
                        } else {
                            String::new()
                        };
                        reply(&mut conn, "200 OK", "text/event-stream", &body).await;
                    }
                    // No stream for what the server sends unasked.
                    _ => reply(&mut conn, "405 Method Not Allowed", "text/plain", "").await,
                }
            });
        }
    });
    (url, seen)
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
