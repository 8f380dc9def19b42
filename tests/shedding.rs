//! Load shedding and the health probes of the stand-alone HTTP server: past
//! `max_in_flight` a request is answered 503 with `Retry-After` at once
//! while the admitted ones are served, `/readyz` says `shedding` meanwhile
//! and `stopping` once the server stops, `/healthz` answers while it lives.

mod support;

use hyper::StatusCode;
use mcp_runtime::prelude::*;
use mcp_runtime::transport::http::HttpConfig;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use support::http::{call, post, raw_exchange, rpc, standard_headers, start_with, with_header};

/// Sleeps `ms`, then answers.
#[tool]
async fn held(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("held {ms} ms")
}

/// A GET of `path`: the status and the body.
async fn probe(addr: SocketAddr, path: &str) -> (u16, Value) {
    let head = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    let (status, body) = raw_exchange(addr, head).await;
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

#[tokio::test]
async fn past_max_in_flight_a_request_is_shed_at_once_and_readyz_says_so() {
    let server = start_with(HttpConfig {
        max_in_flight: 2,
        ..HttpConfig::default()
    })
    .await;
    let addr = server.addr;
    assert_eq!(probe(addr, "/healthz").await, (200, json!({"status": "alive"})));
    assert_eq!(probe(addr, "/readyz").await, (200, json!({"status": "ready"})));
    let admitted: Vec<_> = (0..2)
        .map(|i| {
            tokio::spawn(async move {
                call(
                    addr,
                    i,
                    "tools/call",
                    Some("held"),
                    json!({"name": "held", "arguments": {"ms": 800}}),
                )
                .await
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(5);
    while probe(addr, "/readyz").await.1 != json!({"status": "shedding"}) {
        assert!(Instant::now() < deadline, "never shedding");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let started = Instant::now();
    let params = json!({"name": "held", "arguments": {"ms": 1}});
    let shed = post(
        addr,
        &standard_headers("tools/call", Some("held")),
        rpc(9, "tools/call", params.clone()),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(shed.status, StatusCode::SERVICE_UNAVAILABLE, "{}", shed.text);
    assert_eq!(shed.headers.get("retry-after").map(|v| v.as_bytes()), Some(&b"1"[..]));
    let v: Value = serde_json::from_str(&shed.text).unwrap();
    assert_eq!(v["error"]["code"], -32603, "{v}");
    // A browser page of an origin let in can read it, and when to retry.
    let page = "http://localhost:5173";
    let from_page = with_header(standard_headers("tools/call", Some("held")), "origin", Some(page));
    let shed = post(addr, &from_page, rpc(11, "tools/call", params)).await;
    assert_eq!(shed.status, StatusCode::SERVICE_UNAVAILABLE, "{}", shed.text);
    let allowed = shed.headers.get("access-control-allow-origin");
    assert_eq!(allowed.map(|v| v.as_bytes()), Some(page.as_bytes()));
    for answer in admitted {
        let (status, v) = answer.await.unwrap();
        assert_eq!(status, StatusCode::OK);
        assert_eq!(v["result"]["content"][0]["text"], "held 800 ms", "{v}");
    }
    assert_eq!(probe(addr, "/readyz").await, (200, json!({"status": "ready"})));
    let (status, _) = call(
        addr,
        10,
        "tools/call",
        Some("held"),
        json!({"name": "held", "arguments": {"ms": 1}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    server.server.shutdown();
    assert_eq!(probe(addr, "/readyz").await, (503, json!({"status": "stopping"})));
    assert_eq!(probe(addr, "/healthz").await, (200, json!({"status": "alive"})));
}
