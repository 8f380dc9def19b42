//! An upstream's rate limit reaches the gateway's caller as it was: a 429
//! with `Retry-After` and `data.retryAfterMs`, not a 500. The upstream is a
//! server of this crate on a loopback port, reached over the wire, and so
//! is the gateway.

mod support;

use mcp_runtime::client::Client;
use mcp_runtime::prelude::*;
use mcp_runtime::transport::http::HttpConfig;
use serde_json::json;
use std::time::{Duration, Instant};
use support::http::{call, post, rpc, standard_headers};

/// Spends a scarce quota: once a minute per caller.
#[tool(rate_limit = "1/min burst 1")]
fn quota() -> &'static str {
    "spent"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstreams_rate_limit_reaches_the_caller_as_a_429() {
    let upstream = Server::builder().name("upstream").build().expect("the upstream builds");
    let upstream = support::http::serve_with(upstream, HttpConfig::default()).await;
    let url = format!("http://{}/mcp", upstream.addr);
    let gateway = Server::builder()
        .empty()
        .name("gateway")
        .proxy("up", Client::http(&url))
        .build()
        .expect("the gateway builds");
    gateway.start();
    let front = support::http::serve_with(gateway, HttpConfig::default()).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, listed) = call(front.addr, 1, "tools/list", None, json!({})).await;
        if listed.to_string().contains("up_quota") {
            break;
        }
        assert!(Instant::now() < deadline, "up_quota listed within 10 s: {listed}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let params = json!({"name": "up_quota", "arguments": {}});
    let (status, first) = call(front.addr, 2, "tools/call", Some("up_quota"), params.clone()).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["result"]["content"][0]["text"], "spent", "{first}");
    let second = post(
        front.addr,
        &standard_headers("tools/call", Some("up_quota")),
        rpc(3, "tools/call", params),
    )
    .await;
    let body = second.json(Some("tools/call"));
    assert_eq!(second.status, 429, "{body}");
    let ms = body["error"]["data"]["retryAfterMs"]
        .as_u64()
        .unwrap_or_else(|| panic!("no retryAfterMs: {body}"));
    assert!(ms > 50_000, "{body}");
    let retry = second.headers.get("retry-after").expect("a Retry-After header");
    assert_eq!(retry.to_str().unwrap(), ms.div_ceil(1000).to_string());
}
