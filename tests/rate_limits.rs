//! Rate and concurrency limits per caller: the server's rate, a tool's own
//! rate, calls in progress per caller. Over HTTP a call past a limit is 429
//! with `Retry-After`; on stdio it is the JSON-RPC error with
//! `data.retryAfterMs`; callers are told apart by principal, else address.
//! (Replicas sharing one limit through Redis: `scripts/scale_test.py`,
//! `shared_rate_limit`.)

mod support;

use mcp_runtime::prelude::*;
use mcp_runtime::protocol::Tool;
use mcp_runtime::transport::http::{HttpConfig, HttpServer};
use mcp_runtime::{Rate, ToolEntry};
use serde_json::{json, Value};
use std::time::Duration;
use support::http::*;
use support::StdioClient;

/// Says the word back.
#[tool]
fn say(word: String) -> String {
    word
}

/// Holds its place for `ms`.
#[tool]
async fn hold(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("held {ms} ms")
}

/// Spends a scarce quota: once a minute per caller.
#[tool(rate_limit = "1/min burst 1")]
fn quota() -> &'static str {
    "spent"
}

fn say_params(word: &str) -> Value {
    json!({"name": "say", "arguments": {"word": word}})
}

fn limited(v: &Value) -> u64 {
    assert_eq!(v["error"]["code"], -32603, "{v}");
    let ms = v["error"]["data"]["retryAfterMs"]
        .as_u64()
        .unwrap_or_else(|| panic!("no retryAfterMs: {v}"));
    assert!(ms > 0, "{v}");
    ms
}

async fn serve(server: Server) -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let http = HttpServer::bind(server, "127.0.0.1:0", HttpConfig::default())
        .await
        .unwrap();
    let addr = http.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(http.serve_until(async {
        let _ = stopped.await;
    }));
    (addr, stop)
}

/// One call from `from`: the whole answer, headers included.
async fn call_as(from: &str, addr: std::net::SocketAddr, id: i64, params: Value) -> (Answer, Value) {
    let mut conn = handshake(stream_from(from, addr).await).await;
    let name = params["name"].as_str().map(str::to_owned);
    let request = build(
        addr,
        hyper::Method::POST,
        "/mcp",
        &standard_headers("tools/call", name.as_deref()),
        rpc(id, "tools/call", params),
    );
    let answer = read_all(conn.send(request).await).await;
    let v = answer.json(Some("tools/call"));
    (answer, v)
}

#[tokio::test]
async fn http_answers_429_with_retry_after_and_other_callers_are_not_held_up() {
    let server = Server::builder().rate_limit("2/min".parse().unwrap()).build().unwrap();
    let (addr, _stop) = serve(server).await;
    for id in 1..=2 {
        let (a, v) = call_as("127.0.0.1", addr, id, say_params("hi")).await;
        assert_eq!(a.status, 200, "{v}");
        assert_eq!(v["result"]["content"][0]["text"], "hi", "{v}");
    }
    let (a, v) = call_as("127.0.0.1", addr, 3, say_params("hi")).await;
    assert_eq!(a.status, 429, "{v}");
    let ms = limited(&v);
    assert!(
        (25_000..=30_000).contains(&ms),
        "the next of 2/min comes in about 30 s: {ms} ms"
    );
    let retry: u64 = a.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert_eq!(
        retry,
        ms.div_ceil(1000),
        "Retry-After is the delay in whole seconds, rounded up"
    );
    assert_eq!(v["id"], 3);
    // Another address is another caller.
    let (a, v) = call_as("127.0.0.2", addr, 4, say_params("hi")).await;
    assert_eq!(a.status, 200, "{v}");
    // Lists are not counted: the limit is on calls.
    let (status, v) = call(addr, 5, "tools/list", None, json!({})).await;
    assert_eq!(status, 200, "{v}");
}

#[tokio::test]
async fn stdio_answers_the_error_with_the_delay_and_keeps_serving() {
    let server = Server::builder()
        .rate_limit(Rate::per_second(5).with_burst(2))
        .build()
        .unwrap();
    let mut c = StdioClient::start(server);
    assert_eq!(
        c.call(1, "tools/call", say_params("a")).await["result"]["content"][0]["text"],
        "a"
    );
    assert_eq!(
        c.call(2, "tools/call", say_params("b")).await["result"]["content"][0]["text"],
        "b"
    );
    let v = c.call(3, "tools/call", say_params("c")).await;
    let ms = limited(&v);
    assert!(ms <= 200, "one call every 200 ms: {ms}");
    assert!(
        v["error"]["message"].as_str().unwrap().starts_with("Rate limited"),
        "{v}"
    );
    tokio::time::sleep(Duration::from_millis(ms)).await;
    let v = c.call(4, "tools/call", say_params("d")).await;
    assert_eq!(
        v["result"]["content"][0]["text"], "d",
        "admitted after the delay it was given: {v}"
    );
    c.close().await.unwrap();
}

#[tokio::test]
async fn a_tool_may_have_a_rate_of_its_own() {
    let tool: Tool = serde_json::from_value(json!({"name": "costly", "inputSchema": {"type": "object"}})).unwrap();
    let costly = ToolEntry::dynamic(tool, |_args, _ctx| async { "spent" }).rate_limit("1/min".parse().unwrap());
    let server = Server::builder()
        .tool_entry(costly)
        .tool::<say>()
        .tool::<quota>()
        .build()
        .unwrap();
    let mut c = StdioClient::start(server);
    let v = c
        .call(1, "tools/call", json!({"name": "costly", "arguments": {}}))
        .await;
    assert_eq!(v["result"]["content"][0]["text"], "spent", "{v}");
    let v = c
        .call(2, "tools/call", json!({"name": "costly", "arguments": {}}))
        .await;
    limited(&v);
    assert!(v["error"]["message"].as_str().unwrap().contains("of costly"), "{v}");
    // The attribute says the same.
    let v = c
        .call(20, "tools/call", json!({"name": "quota", "arguments": {}}))
        .await;
    assert_eq!(v["result"]["content"][0]["text"], "spent", "{v}");
    let v = c
        .call(21, "tools/call", json!({"name": "quota", "arguments": {}}))
        .await;
    assert!(limited(&v) > 50_000, "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("over 1/min of quota"),
        "{v}"
    );
    // Other tools are not limited.
    for id in 3..10 {
        let v = c.call(id, "tools/call", say_params("free")).await;
        assert_eq!(v["result"]["content"][0]["text"], "free", "{v}");
    }
    c.close().await.unwrap();
}

#[tokio::test]
async fn a_caller_past_its_calls_in_progress_waits_then_is_refused() {
    let server = Server::builder()
        .max_calls_per_caller(2)
        .busy_wait(Duration::from_millis(200))
        .build()
        .unwrap();
    let (addr, _stop) = serve(server).await;
    let hold = |ms: u64| json!({"name": "hold", "arguments": {"ms": ms}});
    let a = tokio::spawn(call_as("127.0.0.1", addr, 1, hold(1500)));
    let b = tokio::spawn(call_as("127.0.0.1", addr, 2, hold(1500)));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = std::time::Instant::now();
    let (answer, v) = call_as("127.0.0.1", addr, 3, hold(10)).await;
    assert_eq!(answer.status, 429, "{v}");
    limited(&v);
    assert!(v["error"]["message"].as_str().unwrap().starts_with("Busy"), "{v}");
    assert!(
        started.elapsed() >= Duration::from_millis(200),
        "it waited for a place first"
    );
    // Another caller has places of its own.
    let (answer, v) = call_as("127.0.0.2", addr, 4, hold(10)).await;
    assert_eq!(answer.status, 200, "{v}");
    for done in [a, b] {
        let (answer, v) = done.await.unwrap();
        assert_eq!(
            (answer.status.as_u16(), &v["result"]["content"][0]["text"]),
            (200, &json!("held 1500 ms"))
        );
    }
    // Their places are free again.
    let (answer, v) = call_as("127.0.0.1", addr, 5, hold(10)).await;
    assert_eq!(answer.status, 200, "{v}");
}

#[tokio::test]
async fn a_place_is_given_back_when_the_caller_goes_away() {
    let server = Server::builder()
        .max_calls_per_caller(1)
        .busy_wait(Duration::from_millis(100))
        .build()
        .unwrap();
    let (addr, _stop) = serve(server).await;
    // A call whose client hangs up mid-way.
    let gone = tokio::spawn(call_as(
        "127.0.0.1",
        addr,
        1,
        json!({"name": "hold", "arguments": {"ms": 60_000}}),
    ));
    tokio::time::sleep(Duration::from_millis(300)).await;
    gone.abort();
    let _ = gone.await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (answer, v) = call_as("127.0.0.1", addr, 2, json!({"name": "hold", "arguments": {"ms": 10}})).await;
    assert_eq!(answer.status, 200, "the abandoned call's place came back: {v}");
}

/// Refuses every call as over its own limit.
struct Closed;

impl mcp_runtime::Middleware for Closed {
    fn before<'a>(
        &'a self,
        _call: &'a mcp_runtime::Call<'a>,
    ) -> mcp_runtime::MiddlewareFuture<'a, Result<(), mcp_runtime::McpError>> {
        Box::pin(std::future::ready(Err(mcp_runtime::McpError::rate_limited(
            "Quota spent for today",
            Duration::from_millis(1500),
        ))))
    }
}

#[tokio::test]
async fn a_middleware_refusing_as_rate_limited_is_answered_429_not_as_a_tool_error() {
    let (addr, _stop) = serve(Server::builder().middleware(Closed).build().unwrap()).await;
    let (a, v) = call_as("127.0.0.1", addr, 1, say_params("hi")).await;
    assert_eq!(a.status, 429, "{v}");
    assert_eq!(limited(&v), 1500);
    assert_eq!(a.headers["retry-after"], "2");
    assert_eq!(v["error"]["message"], "Quota spent for today");
}

#[test]
fn rates_are_read_as_operators_write_them() {
    let r: Rate = "100/min burst 20".parse().unwrap();
    assert_eq!(
        (r.count(), r.period(), r.burst_size()),
        (100, Duration::from_secs(60), 20)
    );
    let e = "100 per minute".parse::<Rate>().unwrap_err().to_string();
    assert!(e.contains("\"100 per minute\"") && e.contains("10/s"), "{e}");
}
