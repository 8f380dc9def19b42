//! OpenTelemetry end to end: the `everything` example binary, serving HTTP
//! with `OTEL_EXPORTER_OTLP_ENDPOINT` set, exports its spans and metrics over
//! OTLP/HTTP (protobuf) to a real receiver (`tests/support/otlp.rs`), and
//! what arrives follows the OpenTelemetry MCP semantic conventions: span
//! names, kinds, attributes, parents from a `traceparent`, links between MRTR
//! rounds and between a task and its call, CLIENT spans for a legacy
//! session's asks, the resource, and the metrics (over OTLP and as
//! Prometheus text). The batch exporter waits a minute between exports, so
//! the spans arrive only because the server sends what it holds when it
//! stops on SIGTERM. A second test stops the server with a collector that
//! never answers and one that refuses: serving goes on all the same and the
//! process still exits.
//!
//! `scripts/otel-e2e.sh` runs this file with every feature combination of
//! the root package that includes `otel`; the example is built with the
//! same features as this test.
#![cfg(all(unix, feature = "otel"))]

mod support;

#[path = "support/otlp.rs"]
mod otlp;

use hyper::Method;
use otlp::{MetricPoint, Receiver, Span};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::http::{build, call, connect, error_code, post, read_all, rpc, standard_headers, RawReply, VERSION};
use support::{meta_with, validate_legacy};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

/// The caller's trace and span, sent as `_meta.traceparent` by the first call.
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";
/// The trace and span an HTTP `traceparent` header names (an ingress's).
const HEADER_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const HEADER_SPAN: &str = "b7ad6b7169203331";
const LEGACY: &str = "2025-11-25";
const TASKS: &str = "io.modelcontextprotocol/tasks";
/// The conventions' bucket boundaries for `mcp.server.operation.duration`.
const BOUNDS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

// ------------------------------------------------------------ the binary

/// Builds `examples/everything` with the root package's features this test
/// was built with (so that `--no-default-features --features otel,auth`
/// tests that combination's binary) and returns the binary's path.
fn everything() -> PathBuf {
    example("everything")
}

/// Builds `examples/NAME` with the features this test was built with.
fn example(name: &str) -> PathBuf {
    let features: Vec<&str> = [
        ("otel", cfg!(feature = "otel")),
        ("auth", cfg!(feature = "auth")),
        ("redis", cfg!(feature = "redis")),
    ]
    .into_iter()
    .filter_map(|(feature, on)| on.then_some(feature))
    .collect();
    support::example_binary_with(name, &features.join(","))
}

/// The example serving HTTP on an ephemeral port, exporting to a receiver;
/// killed if a test fails before it exits.
struct Served {
    child: Child,
    addr: SocketAddr,
    metrics: Option<SocketAddr>,
    log: Arc<Mutex<String>>,
}

impl Served {
    fn start(receiver: &Receiver, env: &[(&str, &str)]) -> Served {
        Served::launch(&everything(), &["--http", "127.0.0.1:0"], receiver, env)
    }

    /// Starts `exe` with `args`, exporting to `receiver`.
    fn launch(exe: &std::path::Path, args: &[&str], receiver: &Receiver, env: &[(&str, &str)]) -> Served {
        let mut command = Command::new(exe);
        command
            .args(args)
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
            .env("OTEL_SERVICE_NAME", "otel-e2e")
            .env("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=ci")
            .env("MCP_METRICS_ADDR", "127.0.0.1:0")
            .env_remove("MCP_REDIS_URL")
            .env_remove("MCP_AUTH_ISSUER")
            .env_remove("MCP_AUTH_RESOURCE")
            .env_remove("OTEL_EXPORTER_OTLP_PROTOCOL")
            .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .env_remove("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
            .env_remove("OTEL_TRACES_EXPORTER")
            .env_remove("OTEL_METRICS_EXPORTER")
            .env_remove("OTEL_TRACES_SAMPLER")
            .env_remove("MCP_SHUTDOWN_GRACE");
        for (name, _) in std::env::vars() {
            if name.starts_with("MCP_AUTH_") {
                command.env_remove(name);
            }
        }
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
        // Every stderr line goes to the log and, while someone listens, to the channel.
        let log = Arc::new(Mutex::new(String::new()));
        let (lines, said) = mpsc::channel::<String>();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let kept = log.clone();
        std::thread::spawn(move || {
            for line in stderr.lines() {
                let Ok(line) = line else { break };
                kept.lock().unwrap().push_str(&format!("{line}\n"));
                let _ = lines.send(line);
            }
        });
        let (mut addr, mut metrics) = (None, None);
        let deadline = Instant::now() + Duration::from_secs(60);
        while addr.is_none() || metrics.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = said.recv_timeout(left).unwrap_or_else(|_| {
                let _ = child.kill();
                panic!(
                    "the server did not say where it serves and where its metrics are; stderr:\n{}",
                    log.lock().unwrap()
                )
            });
            if let Some(rest) = line.split("MCP server on Streamable HTTP at http://").nth(1) {
                addr = Some(rest.split('/').next().unwrap().parse::<SocketAddr>().unwrap());
            }
            if let Some(rest) = line.split("metrics: Prometheus text at http://").nth(1) {
                metrics = Some(rest.split('/').next().unwrap().parse::<SocketAddr>().unwrap());
            }
        }
        Served {
            child,
            addr: addr.unwrap(),
            metrics,
            log,
        }
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Sends SIGTERM and waits (at most `within`) for the process to exit.
    fn terminate(&mut self, within: Duration) -> ExitStatus {
        let killed = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not exit within {within:?} of SIGTERM; stderr:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

// ------------------------------------------------------------ requests

fn with_caps(mut params: Value, caps: Value) -> Value {
    params["_meta"] = meta_with(caps);
    params
}

/// A tools/call over HTTP with the standard headers; the answer, validated.
async fn tool(addr: SocketAddr, id: i64, name: &str, params: Value) -> Value {
    let (status, v) = call(addr, id, "tools/call", Some(name), params).await;
    assert!(status.is_success() || v.get("error").is_some(), "{status}: {v}");
    v
}

fn legacy_head(addr: SocketAddr, method: &str, session: Option<&str>, body: &str, close: bool) -> String {
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    if close {
        head.push_str("Connection: close\r\n");
    }
    if let Some(id) = session {
        head.push_str(&format!("Mcp-Session-Id: {id}\r\n"));
    }
    head.push_str("\r\n");
    head.push_str(body);
    head
}

/// One legacy request on a fresh connection (the way a 2025-11-25 client
/// sends it: no `_meta`, no MCP routing headers).
async fn legacy(addr: SocketAddr, method: &str, session: Option<&str>, body: &str) -> RawReply {
    legacy_raw(addr, &legacy_head(addr, method, session, body, true)).await
}

/// One request, written as it is given, on a fresh connection that closes.
async fn legacy_raw(addr: SocketAddr, request: &str) -> RawReply {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(request.as_bytes()).await.unwrap();
    let mut raw = String::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_string(&mut raw))
        .await
        .expect("the server answers and closes")
        .unwrap();
    RawReply::parse(&raw)
}

fn legacy_rpc(id: i64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// The next event's message on a call's stream.
async fn next_event(reader: &mut tokio::io::BufReader<tokio::net::TcpStream>) -> Value {
    let mut line = String::new();
    loop {
        line.clear();
        let n = tokio::time::timeout(Duration::from_secs(10), reader.read_line(&mut line))
            .await
            .expect("the call's stream goes on")
            .unwrap();
        assert!(n > 0, "the call's stream ended early");
        if let Some(data) = line.trim_end().strip_prefix("data:") {
            return serde_json::from_str::<Value>(data.trim_start()).unwrap();
        }
    }
}

/// A legacy call whose handler asks the client (elicitation/create on the
/// call's stream), answered with a separate POST; the ask and the result.
async fn legacy_call_that_asks(addr: SocketAddr, session: &str, id: i64, name: &str) -> (Value, Value) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let body = legacy_rpc(id, "tools/call", json!({"name": name, "arguments": {}}));
    s.write_all(legacy_head(addr, "POST", Some(session), &body, true).as_bytes())
        .await
        .unwrap();
    let mut reader = tokio::io::BufReader::new(s);
    let ask = next_event(&mut reader).await;
    validate_legacy(&ask, None);
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let answer =
        json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Grace"}}});
    let r = legacy(addr, "POST", Some(session), &answer.to_string()).await;
    assert_eq!(r.status, 202, "{}", r.body);
    let result = loop {
        let m = next_event(&mut reader).await;
        if m["id"] == json!(id) {
            break m;
        }
        validate_legacy(&m, None);
    };
    validate_legacy(&result, Some("tools/call"));
    (ask, result)
}

// ------------------------------------------------------------ checks

/// The request span of `method` whose `jsonrpc.request.id` is `id`.
fn request_span<'a>(spans: &'a [Span], method: &str, id: &str) -> &'a Span {
    let found: Vec<&Span> = spans
        .iter()
        .filter(|s| {
            s.kind == "SERVER" && s.attr("mcp.method.name") == Some(method) && s.attr("jsonrpc.request.id") == Some(id)
        })
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one SERVER span of {method} with request id {id}: {spans:#?}"
    );
    found[0]
}

/// What every request span over HTTP carries.
fn assert_http_request_span(s: &Span, name: &str, version: &str, era: &str) {
    assert_eq!(s.name, name, "{s:#?}");
    assert_eq!(s.kind, "SERVER", "{s:#?}");
    assert_eq!(s.attr("mcp.protocol.version"), Some(version), "{s:#?}");
    assert_eq!(s.attr("network.transport"), Some("tcp"), "{s:#?}");
    assert_eq!(s.attr("network.protocol.name"), Some("http"), "{s:#?}");
    assert_eq!(s.attr("network.protocol.version"), Some("1.1"), "{s:#?}");
    assert_eq!(s.attr("mcp_runtime.era"), Some(era), "{s:#?}");
    assert_eq!(s.attr("mcp_runtime.principal"), None, "no token, no principal: {s:#?}");
    assert_eq!(s.trace_id.len(), 32, "{s:#?}");
    assert_eq!(s.span_id.len(), 16, "{s:#?}");
    assert_eq!(
        s.resource.get("service.name").map(String::as_str),
        Some("otel-e2e"),
        "{s:#?}"
    );
    assert_eq!(
        s.resource.get("deployment.environment").map(String::as_str),
        Some("ci"),
        "{s:#?}"
    );
    if era == "modern" {
        assert_eq!(s.attr("mcp.session.id"), None, "no session in 2026-07-28: {s:#?}");
    }
}

fn assert_ok(s: &Span) {
    assert_ne!(s.status_code, "ERROR", "{s:#?}");
    assert_eq!(s.attr("error.type"), None, "{s:#?}");
    assert_eq!(s.attr("rpc.response.status_code"), None, "{s:#?}");
}

fn attrs(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

/// The points whose attributes include all of `pairs` and none of `absent`.
fn points_with<'a>(points: &'a [MetricPoint], pairs: &[(&str, &str)], absent: &[&str]) -> Vec<&'a MetricPoint> {
    let want = attrs(pairs);
    points
        .iter()
        .filter(|p| want.iter().all(|(k, v)| p.attributes.get(k) == Some(v)))
        .filter(|p| absent.iter().all(|k| !p.attributes.contains_key(*k)))
        .collect()
}

// ------------------------------------------------------------ the tests

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_and_metrics_reach_a_real_otlp_receiver_after_the_conventions() {
    let receiver = Receiver::start();
    let mut server = Served::start(
        &receiver,
        &[
            // A minute between exports: what arrives, arrives because the
            // server sends what it holds when it stops.
            ("OTEL_BSP_SCHEDULE_DELAY", "60000"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "60000"),
        ],
    );
    let addr = server.addr;

    // A plain tool, in the caller's trace.
    let mut meta = meta_with(json!({}));
    meta["traceparent"] = json!(format!("00-{TRACE_ID}-{CALLER_SPAN}-01"));
    let v = tool(
        addr,
        1,
        "greet",
        json!({"name": "greet", "arguments": {"name": "Ada"}, "_meta": meta}),
    )
    .await;
    assert_eq!(v["result"]["content"][0]["text"], "Hello, Ada!", "{v}");
    // A tool error (isError).
    let v = tool(
        addr,
        2,
        "test_error_handling",
        json!({"name": "test_error_handling", "arguments": {}}),
    )
    .await;
    assert_eq!(v["result"]["isError"], true, "{v}");
    // A JSON-RPC error: a tool that does not exist.
    let v = tool(
        addr,
        3,
        "no_such_tool",
        json!({"name": "no_such_tool", "arguments": {}}),
    )
    .await;
    let bad_params = error_code(&v);
    let bad_params_message = v["error"]["message"].as_str().unwrap().to_owned();
    // An MRTR round that asks, and its retry with the answer.
    let mrtr = "test_input_required_result_elicitation";
    let caps = json!({"elicitation": {}});
    let v = tool(
        addr,
        4,
        mrtr,
        with_caps(json!({"name": mrtr, "arguments": {}}), caps.clone()),
    )
    .await;
    assert_eq!(v["result"]["resultType"], "input_required", "{v}");
    let state = v["result"]["requestState"].as_str().expect("a requestState").to_owned();
    let retry = json!({"name": mrtr, "arguments": {}, "requestState": state,
        "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Ada"}}}});
    let v = tool(addr, 5, mrtr, with_caps(retry, caps)).await;
    assert_eq!(v["result"]["resultType"], "complete", "{v}");
    assert_eq!(v["result"]["content"][0]["text"], "Hello, Ada!", "{v}");
    // A task, polled until it completes.
    let task_caps = json!({"extensions": {TASKS: {}}});
    let v = tool(
        addr,
        6,
        "slow_compute",
        with_caps(
            json!({"name": "slow_compute", "arguments": {"seconds": 1}}),
            task_caps.clone(),
        ),
    )
    .await;
    assert_eq!(v["result"]["resultType"], "task", "{v}");
    let task_id = v["result"]["taskId"].as_str().expect("a task id").to_owned();
    let mut polls = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let id = 7 + polls.len() as i64;
        let (_, v) = call(
            addr,
            id,
            "tasks/get",
            Some(&task_id),
            with_caps(json!({"taskId": task_id}), task_caps.clone()),
        )
        .await;
        polls.push(id);
        let status = v["result"]["status"]
            .as_str()
            .unwrap_or_else(|| panic!("{v}"))
            .to_owned();
        if status == "completed" {
            break;
        }
        assert!(status == "working", "{v}");
        assert!(Instant::now() < deadline, "the task did not complete: {v}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Two tasks that end badly: a tool error, and a protocol error.
    let mut more_polls = 0;
    for (id, name) in [(600, "failing_job"), (601, "protocol_error_job")] {
        let v = tool(
            addr,
            id,
            name,
            with_caps(json!({"name": name, "arguments": {}}), task_caps.clone()),
        )
        .await;
        let task_id = v["result"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("{v}"))
            .to_owned();
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let get = with_caps(json!({"taskId": task_id}), task_caps.clone());
            let (_, v) = call(addr, id + 100, "tasks/get", Some(&task_id), get).await;
            more_polls += 1;
            if v["result"]["status"] != "working" {
                break;
            }
            assert!(Instant::now() < deadline, "the task did not end: {v}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    // A prompt and a resource.
    let (_, v) = call(
        addr,
        200,
        "prompts/get",
        Some("test_simple_prompt"),
        json!({"name": "test_simple_prompt"}),
    )
    .await;
    assert!(v["result"]["messages"].is_array(), "{v}");
    let uri = "test://static-text";
    let (_, v) = call(addr, 201, "resources/read", Some(uri), json!({"uri": uri})).await;
    assert!(v["result"]["contents"].is_array(), "{v}");
    // A call whose client goes away before it is answered (half a second
    // into thirty): it ends unanswered, cancelled.
    {
        let mut conn = connect(addr).await;
        let params = json!({"name": "slow_compute", "arguments": {"seconds": 30}});
        let headers = standard_headers("tools/call", Some("slow_compute"));
        let request = build(addr, Method::POST, "/mcp", &headers, rpc(202, "tools/call", params));
        let _ = tokio::time::timeout(Duration::from_millis(500), conn.send(request)).await;
    }

    // The trace context of the HTTP request (an ingress's): a call without
    // one in `_meta` continues it; a call with one in `_meta` as well
    // continues that one (the conventions' carrier).
    let header_trace = ("traceparent".to_owned(), format!("00-{HEADER_TRACE}-{HEADER_SPAN}-01"));
    for (id, meta) in [
        (400, meta_with(json!({}))),
        (401, {
            let mut meta = meta_with(json!({}));
            meta["traceparent"] = json!(format!("00-{TRACE_ID}-{CALLER_SPAN}-01"));
            meta
        }),
    ] {
        let mut headers = standard_headers("tools/call", Some("greet"));
        headers.push(header_trace.clone());
        headers.push(("tracestate".to_owned(), "ingress=1".to_owned()));
        headers.push(("tracestate".to_owned(), "more=2".to_owned()));
        let params = json!({"name": "greet", "arguments": {"name": "Ada"}, "_meta": meta});
        let a = post(addr, &headers, rpc(id, "tools/call", params)).await;
        let v = a.json(Some("tools/call"));
        assert_eq!(v["result"]["content"][0]["text"], "Hello, Ada!", "{v}");
    }

    // A legacy session: initialize, a call, a call that asks, then DELETE.
    let init = legacy_rpc(
        300,
        "initialize",
        json!({"protocolVersion": LEGACY, "capabilities": {"elicitation": {}},
               "clientInfo": {"name": "legacy-client", "version": "1.0.0"}}),
    );
    // Opened in the trace of the HTTP request's headers (it is answered by
    // the transport, not the dispatcher).
    let traced = format!("\r\ntraceparent: 00-{HEADER_TRACE}-{HEADER_SPAN}-01\r\n\r\n");
    let r = legacy_raw(
        addr,
        &legacy_head(addr, "POST", None, &init, true).replacen("\r\n\r\n", &traced, 1),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    validate_legacy(&r.messages()[0], Some("initialize"));
    let session = r.header("mcp-session-id").expect("a session id").to_owned();
    // A notification in the caller's trace.
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized",
        "params": {"_meta": {"traceparent": format!("00-{TRACE_ID}-{CALLER_SPAN}-01")}}});
    support::assert_valid(LEGACY, "InitializedNotification", &initialized);
    let r = legacy(addr, "POST", Some(&session), &initialized.to_string()).await;
    assert_eq!(r.status, 202, "{}", r.body);
    let r = legacy(
        addr,
        "POST",
        Some(&session),
        &legacy_rpc(
            301,
            "tools/call",
            json!({"name": "greet", "arguments": {"name": "Lin"}}),
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let m = r
        .messages()
        .into_iter()
        .find(|m| m["id"] == 301)
        .expect("the call's answer");
    validate_legacy(&m, Some("tools/call"));
    assert_eq!(m["result"]["content"][0]["text"], "Hello, Lin!", "{m}");
    let (ask, result) = legacy_call_that_asks(addr, &session, 302, mrtr).await;
    assert_eq!(result["result"]["content"][0]["text"], "Hello, Grace!", "{result}");
    let r = legacy(addr, "DELETE", Some(&session), "").await;
    assert!(
        (200..300).contains(&r.status),
        "DELETE ends the session: {} {}",
        r.status,
        r.body
    );

    // The Prometheus text, scraped while the server runs.
    let metrics_addr = server.metrics.expect("the metrics address");
    let mut conn = connect(metrics_addr).await;
    let scraped = read_all(
        conn.send(build(metrics_addr, Method::GET, "/metrics", &[], Vec::new()))
            .await,
    )
    .await;
    assert_eq!(scraped.status, 200, "{}", scraped.text);
    let text = scraped.text;
    let lines: Vec<&str> = text.lines().collect();
    let has = |prefix: &str, parts: &[&str]| {
        lines
            .iter()
            .any(|l| l.starts_with(prefix) && parts.iter().all(|p| l.contains(p)))
    };
    for (prefix, parts) in [
        (
            "mcp_server_operation_duration_seconds_bucket{",
            &[
                r#"mcp_method_name="tools/call""#,
                r#"gen_ai_tool_name="greet""#,
                r#"le="0.01""#,
            ][..],
        ),
        (
            "mcp_server_operation_duration_seconds_bucket{",
            &[r#"mcp_method_name="tools/call""#, r#"le="+Inf""#][..],
        ),
        (
            "mcp_server_operation_duration_seconds_bucket{",
            &[
                r#"mcp_method_name="prompts/get""#,
                r#"gen_ai_prompt_name="test_simple_prompt""#,
            ][..],
        ),
        (
            "mcp_server_operation_duration_seconds_bucket{",
            &[r#"error_type="tool_error""#][..],
        ),
        (
            "mcp_server_operation_duration_seconds_count{",
            &[r#"gen_ai_tool_name="slow_compute""#, r#"error_type="cancelled""#][..],
        ),
        (
            "mcp_server_operation_duration_seconds_sum{",
            &[r#"mcp_method_name="tools/call""#][..],
        ),
        (
            "mcp_server_operation_duration_seconds_count{",
            &[r#"mcp_method_name="tools/call""#, r#"network_transport="tcp""#][..],
        ),
        (
            "mcp_server_operation_duration_seconds_count{",
            &[r#"mcp_protocol_version="2025-11-25""#][..],
        ),
        ("mcp_server_session_duration_seconds_count", &[][..]),
        ("mcp_runtime_server_active_requests", &[][..]),
        ("mcp_runtime_server_active_listen_streams", &[][..]),
        ("mcp_runtime_server_active_tasks", &[][..]),
        ("mcp_runtime_server_active_sessions", &[][..]),
    ] {
        assert!(
            has(prefix, parts),
            "no line {prefix}...{parts:?} in the Prometheus text:\n{text}"
        );
    }
    assert!(
        !lines.iter().any(|l| !l.starts_with('#') && l.contains("mcp.")),
        "Prometheus names have no dots:\n{text}"
    );
    assert!(
        !text.contains("no_such_tool"),
        "a made-up tool name is a series of the metric:\n{text}"
    );

    // Nothing exported yet: the batch waits a minute.
    assert_eq!(
        receiver.trace_requests(),
        0,
        "no span before the stop (OTEL_BSP_SCHEDULE_DELAY=60000): {:#?}",
        receiver.spans()
    );

    let status = server.terminate(Duration::from_secs(30));
    let log = server.log();
    assert_eq!(status.code(), Some(0), "exit status after SIGTERM; stderr:\n{log}");
    // The process has exited: what it sent at the stop is all there is.
    let arrived = receiver.wait_for(
        |r| r.trace_requests() > 0 && r.metric_requests() > 0,
        Duration::from_secs(10),
    );
    assert!(
        arrived,
        "the spans and metrics arrive with the stop: requests {:#?}, {} undecodable, spans {:#?}, metrics {:#?}; stderr:\n{log}",
        receiver.seen(),
        receiver.undecodable(),
        receiver.spans(),
        receiver.metrics()
    );
    assert_eq!(receiver.undecodable(), 0, "every body is an OTLP protobuf message");
    let spans = receiver.spans();

    // The plain call: a child of the caller's span.
    let greet = request_span(&spans, "tools/call", "1");
    assert_http_request_span(greet, "tools/call greet", VERSION, "modern");
    assert_eq!(greet.trace_id, TRACE_ID, "the caller's trace: {greet:#?}");
    assert_eq!(
        greet.parent_span_id, CALLER_SPAN,
        "the caller's span is the parent: {greet:#?}"
    );
    assert_eq!(greet.attr("gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(greet.attr("gen_ai.tool.name"), Some("greet"));
    assert_ok(greet);
    // The handler's own span (the example's, not the runtime's) is exported
    // as the request's child.
    let compose = spans
        .iter()
        .find(|s| s.name == "compose" && s.parent_span_id == greet.span_id)
        .unwrap_or_else(|| panic!("the handler's span `compose` was not exported as the call's child: {spans:#?}"));
    assert_eq!(compose.trace_id, TRACE_ID, "{compose:#?}");

    // The calls with the HTTP request's trace context.
    let ingress = request_span(&spans, "tools/call", "400");
    assert_eq!(
        (ingress.trace_id.as_str(), ingress.parent_span_id.as_str()),
        (HEADER_TRACE, HEADER_SPAN),
        "no traceparent in _meta: the header's span is the parent: {ingress:#?}"
    );
    assert_eq!(
        ingress.trace_state, "ingress=1,more=2",
        "both tracestate headers: {ingress:#?}"
    );
    let both = request_span(&spans, "tools/call", "401");
    assert_eq!(
        (both.trace_id.as_str(), both.parent_span_id.as_str()),
        (TRACE_ID, CALLER_SPAN),
        "a traceparent in _meta and in the header: _meta's wins: {both:#?}"
    );

    // The tool error.
    let failed = request_span(&spans, "tools/call", "2");
    assert_http_request_span(failed, "tools/call test_error_handling", VERSION, "modern");
    assert_eq!(failed.attr("gen_ai.tool.name"), Some("test_error_handling"));
    assert_eq!(failed.attr("error.type"), Some("tool_error"), "{failed:#?}");
    assert_eq!(failed.status_code, "ERROR", "{failed:#?}");
    assert_eq!(failed.attr("rpc.response.status_code"), None, "{failed:#?}");
    assert_ne!(failed.trace_id, TRACE_ID, "no traceparent: a trace of its own");
    assert_eq!(failed.parent_span_id, "", "no traceparent: a root span");

    // The JSON-RPC error.
    let code = bad_params.to_string();
    let refused = request_span(&spans, "tools/call", "3");
    // A name the server does not serve does not name the span (nor a
    // series of the metric, below).
    assert_http_request_span(refused, "tools/call", VERSION, "modern");
    assert_eq!(refused.attr("error.type"), Some(code.as_str()), "{refused:#?}");
    assert_eq!(
        refused.attr("rpc.response.status_code"),
        Some(code.as_str()),
        "{refused:#?}"
    );
    assert_eq!(refused.status_code, "ERROR", "{refused:#?}");
    assert_eq!(refused.status_message, bad_params_message, "{refused:#?}");

    // The call its client left: unanswered, cancelled.
    let left = request_span(&spans, "tools/call", "202");
    assert_http_request_span(left, "tools/call slow_compute", VERSION, "modern");
    assert_eq!(left.attr("error.type"), Some("cancelled"), "{left:#?}");
    assert_eq!(left.status_code, "ERROR", "{left:#?}");
    assert_eq!(left.attr("rpc.response.status_code"), None, "{left:#?}");

    // The MRTR rounds: the retry links to the round that asked.
    let name = format!("tools/call {mrtr}");
    let asked = request_span(&spans, "tools/call", "4");
    assert_http_request_span(asked, &name, VERSION, "modern");
    assert!(asked.links.is_empty(), "the first round links nowhere: {asked:#?}");
    assert_eq!(asked.attr("mcp_runtime.mrtr.round"), None, "{asked:#?}");
    assert_ok(asked);
    let answered = request_span(&spans, "tools/call", "5");
    assert_http_request_span(answered, &name, VERSION, "modern");
    assert_eq!(
        answered.links,
        [asked.context()],
        "the retry links to the round that asked"
    );
    assert_eq!(answered.attr("mcp_runtime.mrtr.round"), Some("1"), "{answered:#?}");
    assert_ok(answered);

    // The task: its work in an INTERNAL span linked to its call, and each
    // tasks/get linked to that call too.
    let created = request_span(&spans, "tools/call", "6");
    assert_http_request_span(created, "tools/call slow_compute", VERSION, "modern");
    let work: Vec<&Span> = spans.iter().filter(|s| s.name == "execute_tool slow_compute").collect();
    assert_eq!(work.len(), 1, "one span for the task's work: {spans:#?}");
    let work = work[0];
    assert_eq!(work.kind, "INTERNAL", "{work:#?}");
    assert_eq!(work.attr("gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(work.attr("gen_ai.tool.name"), Some("slow_compute"));
    assert_eq!(work.attr("mcp_runtime.task.id"), Some(task_id.as_str()), "{work:#?}");
    assert_eq!(
        work.links,
        [created.context()],
        "the task links to the call that created it"
    );
    assert_ok(work);
    // A task that ends badly says so on its span, as a request does.
    for (name, error) in [("failing_job", "tool_error"), ("protocol_error_job", "-32603")] {
        let work = spans
            .iter()
            .find(|s| s.name == format!("execute_tool {name}"))
            .unwrap_or_else(|| panic!("no span of {name}'s work: {spans:#?}"));
        assert_eq!(work.attr("error.type"), Some(error), "{work:#?}");
        assert_eq!(work.status_code, "ERROR", "{work:#?}");
    }
    for id in &polls {
        let poll = request_span(&spans, "tasks/get", &id.to_string());
        assert_http_request_span(poll, "tasks/get", VERSION, "modern");
        assert_eq!(poll.attr("mcp_runtime.task.id"), Some(task_id.as_str()), "{poll:#?}");
        assert_eq!(
            poll.links,
            [created.context()],
            "tasks/get links to the call: {poll:#?}"
        );
        assert_ok(poll);
    }

    // The prompt and the resource.
    let prompt = request_span(&spans, "prompts/get", "200");
    assert_http_request_span(prompt, "prompts/get test_simple_prompt", VERSION, "modern");
    assert_eq!(prompt.attr("gen_ai.prompt.name"), Some("test_simple_prompt"));
    assert_eq!(prompt.attr("gen_ai.tool.name"), None);
    assert_ok(prompt);
    let read = request_span(&spans, "resources/read", "201");
    assert_http_request_span(read, "resources/read", VERSION, "modern");
    assert_eq!(read.attr("mcp.resource.uri"), Some(uri), "{read:#?}");
    assert_ok(read);

    // The legacy session's requests, and the CLIENT span of its ask.
    // `initialize` is a request like any other: it has its span too.
    let initialize = request_span(&spans, "initialize", "300");
    assert_http_request_span(initialize, "initialize", LEGACY, "legacy");
    assert_ok(initialize);
    assert_eq!(
        (initialize.trace_id.as_str(), initialize.parent_span_id.as_str()),
        (HEADER_TRACE, HEADER_SPAN),
        "{initialize:#?}"
    );
    let legacy_call = request_span(&spans, "tools/call", "301");
    assert_http_request_span(legacy_call, "tools/call greet", LEGACY, "legacy");
    assert_eq!(
        legacy_call.attr("mcp.session.id"),
        Some(session.as_str()),
        "{legacy_call:#?}"
    );
    assert_eq!(legacy_call.attr("gen_ai.tool.name"), Some("greet"));
    assert_ok(legacy_call);
    let asking = request_span(&spans, "tools/call", "302");
    assert_http_request_span(asking, &name, LEGACY, "legacy");
    assert_eq!(asking.attr("mcp.session.id"), Some(session.as_str()));
    let ask_id = match &ask["id"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let outbound: Vec<&Span> = spans.iter().filter(|s| s.kind == "CLIENT").collect();
    assert_eq!(outbound.len(), 1, "one CLIENT span, for the legacy ask: {outbound:#?}");
    let outbound = outbound[0];
    assert_eq!(outbound.name, "elicitation/create", "{outbound:#?}");
    assert_eq!(outbound.trace_id, asking.trace_id, "in the call's trace: {outbound:#?}");
    assert_eq!(
        outbound.parent_span_id, asking.span_id,
        "a child of the call's span: {outbound:#?}"
    );
    assert_eq!(outbound.attr("mcp.method.name"), Some("elicitation/create"));
    assert_eq!(
        outbound.attr("jsonrpc.request.id"),
        Some(ask_id.as_str()),
        "{outbound:#?}"
    );
    assert_eq!(outbound.attr("mcp.session.id"), Some(session.as_str()), "{outbound:#?}");
    assert_eq!(outbound.attr("mcp.protocol.version"), Some(LEGACY), "{outbound:#?}");
    // The ask carries its span's trace, for the client's span of the answer.
    assert_eq!(
        ask["params"]["_meta"]["traceparent"],
        format!("00-{}-{}-01", outbound.trace_id, outbound.span_id),
        "{ask}"
    );

    // The notification has its SERVER span too, under the caller's.
    let notified: Vec<&Span> = spans
        .iter()
        .filter(|s| s.attr("mcp.method.name") == Some("notifications/initialized"))
        .collect();
    assert_eq!(notified.len(), 1, "one span of the notification: {spans:#?}");
    let notified = notified[0];
    assert_eq!(notified.name, "notifications/initialized", "{notified:#?}");
    assert_eq!(notified.kind, "SERVER", "{notified:#?}");
    assert_eq!(
        (notified.trace_id.as_str(), notified.parent_span_id.as_str()),
        (TRACE_ID, CALLER_SPAN),
        "{notified:#?}"
    );
    assert_eq!(notified.attr("mcp.session.id"), Some(session.as_str()), "{notified:#?}");
    assert_eq!(notified.attr("mcp.protocol.version"), Some(LEGACY), "{notified:#?}");
    assert_eq!(notified.attr("network.protocol.version"), Some("1.1"), "{notified:#?}");
    assert_eq!(notified.attr("jsonrpc.request.id"), None, "{notified:#?}");
    assert_ok(notified);

    // Every request span has the attributes every request carries.
    for s in spans.iter().filter(|s| s.kind == "SERVER") {
        let method = s.attr("mcp.method.name").unwrap_or_else(|| panic!("{s:#?}"));
        let notification = method.starts_with("notifications/");
        assert_eq!(s.attr("jsonrpc.request.id").is_some(), !notification, "{s:#?}");
        assert!(s.name == method || s.name.starts_with(&format!("{method} ")), "{s:#?}");
        assert_eq!(s.attr("network.transport"), Some("tcp"), "{s:#?}");
    }

    // The metrics over OTLP.
    let duration = receiver.latest("mcp.server.operation.duration");
    for p in &duration {
        assert_eq!(p.kind, "histogram", "{p:#?}");
        assert_eq!(p.unit, "s", "{p:#?}");
        assert_eq!(p.bounds, BOUNDS, "the conventions' buckets: {p:#?}");
        assert_eq!(p.resource.get("service.name").map(String::as_str), Some("otel-e2e"));
        assert_eq!(p.resource.get("deployment.environment").map(String::as_str), Some("ci"));
        assert!(p.attributes.contains_key("mcp.method.name"), "{p:#?}");
        assert!(p.attributes.contains_key("mcp.protocol.version"), "{p:#?}");
        assert_eq!(
            p.attributes.get("network.transport").map(String::as_str),
            Some("tcp"),
            "{p:#?}"
        );
        assert_eq!(
            p.attributes.get("network.protocol.name").map(String::as_str),
            Some("http"),
            "{p:#?}"
        );
        assert!(p.count >= 1, "{p:#?}");
        assert_eq!(p.bucket_counts.iter().sum::<u64>(), p.count, "{p:#?}");
    }
    let modern = [
        ("mcp.protocol.version", VERSION),
        ("network.transport", "tcp"),
        ("network.protocol.name", "http"),
    ];
    let call_ok = [
        &modern[..],
        &[
            ("mcp.method.name", "tools/call"),
            ("gen_ai.tool.name", "greet"),
            ("gen_ai.operation.name", "execute_tool"),
        ],
    ]
    .concat();
    assert!(
        !points_with(&duration, &call_ok, &["error.type", "rpc.response.status_code"]).is_empty(),
        "a successful greet: {duration:#?}"
    );
    let notification = [
        ("mcp.method.name", "notifications/initialized"),
        ("mcp.protocol.version", LEGACY),
        ("network.transport", "tcp"),
    ];
    assert!(
        !points_with(&duration, &notification, &["error.type"]).is_empty(),
        "the notification's duration: {duration:#?}"
    );
    let call_refused = [
        &modern[..],
        &[
            ("mcp.method.name", "tools/call"),
            ("error.type", code.as_str()),
            ("rpc.response.status_code", code.as_str()),
        ],
    ]
    .concat();
    assert!(
        !points_with(&duration, &call_refused, &[]).is_empty(),
        "a call of an unknown tool: {duration:#?}"
    );
    let tool_error = [
        &modern[..],
        &[
            ("gen_ai.tool.name", "test_error_handling"),
            ("error.type", "tool_error"),
        ],
    ]
    .concat();
    assert!(
        !points_with(&duration, &tool_error, &["rpc.response.status_code"]).is_empty(),
        "a tool error: {duration:#?}"
    );
    let prompt_point = [
        &modern[..],
        &[
            ("mcp.method.name", "prompts/get"),
            ("gen_ai.prompt.name", "test_simple_prompt"),
        ],
    ]
    .concat();
    assert!(
        !points_with(&duration, &prompt_point, &[]).is_empty(),
        "a prompt: {duration:#?}"
    );
    let polled = [&modern[..], &[("mcp.method.name", "tasks/get")]].concat();
    let polled = points_with(&duration, &polled, &[]);
    assert_eq!(
        polled.iter().map(|p| p.count).sum::<u64>(),
        (polls.len() + more_polls) as u64,
        "{duration:#?}"
    );
    assert!(
        !points_with(
            &duration,
            &[("mcp.method.name", "tools/call"), ("mcp.protocol.version", LEGACY)],
            &[]
        )
        .is_empty(),
        "a legacy call: {duration:#?}"
    );

    let sessions = receiver.latest("mcp.server.session.duration");
    assert!(
        !sessions.is_empty(),
        "the ended legacy session: {:#?}",
        receiver.metrics()
    );
    for p in &sessions {
        assert_eq!(p.kind, "histogram", "{p:#?}");
        assert_eq!(p.unit, "s", "{p:#?}");
    }
    let ended = points_with(
        &sessions,
        &[("mcp.protocol.version", LEGACY), ("network.transport", "tcp")],
        &[],
    );
    assert_eq!(ended.iter().map(|p| p.count).sum::<u64>(), 1, "{sessions:#?}");

    for gauge in [
        "mcp_runtime.server.active_requests",
        "mcp_runtime.server.active_listen_streams",
        "mcp_runtime.server.active_tasks",
        "mcp_runtime.server.active_sessions",
    ] {
        let points = receiver.latest(gauge);
        assert!(!points.is_empty(), "{gauge}: {:#?}", receiver.metrics());
        for p in &points {
            assert!(
                p.kind == "gauge" || (p.kind == "sum" && !p.monotonic),
                "{gauge} is an UpDownCounter or a gauge: {p:#?}"
            );
            assert!(p.value.is_some(), "{p:#?}");
        }
    }
}

/// Serves `n` greet calls one after another on one kept-alive connection.
async fn greet_many(addr: SocketAddr, n: i64) {
    let mut conn = connect(addr).await;
    for id in 1..=n {
        let who = format!("n{id}");
        let body = rpc(id, "tools/call", json!({"name": "greet", "arguments": {"name": who}}));
        let request = build(
            addr,
            Method::POST,
            "/mcp",
            &standard_headers("tools/call", Some("greet")),
            body,
        );
        // Ready for the next request once the last response was read.
        tokio::time::timeout(Duration::from_secs(10), conn.sender.ready())
            .await
            .unwrap_or_else(|_| panic!("request {id}: the connection is not ready"))
            .unwrap_or_else(|e| panic!("request {id}: the server closed the connection: {e}"));
        let answer = read_all(conn.send(request).await).await;
        assert_eq!(answer.status, 200, "request {id}: {}", answer.text);
        let v = answer.json(Some("tools/call"));
        assert_eq!(v["id"], id, "{v}");
        assert_eq!(v["result"]["content"][0]["text"], format!("Hello, {who}!"), "{v}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collector_that_hangs_or_refuses_neither_stops_serving_nor_the_exit() {
    for (what, receiver) in [("hanging", Receiver::hanging()), ("refusing", Receiver::refusing())] {
        let mut server = Served::start(
            &receiver,
            &[
                ("OTEL_BSP_SCHEDULE_DELAY", "100"),
                ("OTEL_METRIC_EXPORT_INTERVAL", "1000"),
                ("MCP_SHUTDOWN_GRACE", "5"),
            ],
        );
        greet_many(server.addr, 2000).await;
        // One more on a fresh connection, with the helper the other tests use.
        let a = post(
            server.addr,
            &standard_headers("tools/call", Some("greet")),
            rpc(
                2001,
                "tools/call",
                json!({"name": "greet", "arguments": {"name": "last"}}),
            ),
        )
        .await;
        assert_eq!(a.status, 200, "{what}: {}", a.text);
        assert_eq!(
            a.json(Some("tools/call"))["result"]["content"][0]["text"],
            "Hello, last!"
        );
        assert!(
            receiver.wait_for(|r| r.requests() > 0, Duration::from_secs(10)),
            "{what}: the exporter tried to send; stderr:\n{}",
            server.log()
        );
        let stopping = Instant::now();
        let status = server.terminate(Duration::from_secs(60));
        let took = stopping.elapsed();
        let log = server.log();
        assert_eq!(
            status.code(),
            Some(0),
            "{what}: exit status after SIGTERM; stderr:\n{log}"
        );
        // Spans and metrics are flushed side by side, each for 5 s at most
        // (one after the other, it took 10 s).
        assert!(
            took < Duration::from_secs(8),
            "{what}: the exit took {took:?}; stderr:\n{log}"
        );
        assert_eq!(receiver.undecodable(), 0, "{what}");
        assert!(receiver.spans().is_empty(), "{what}: nothing is kept");
    }
}

#[test]
fn the_receiver_decodes_what_it_is_sent_and_counts_what_it_cannot() {
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, KeyValue};
    use opentelemetry_proto::tonic::trace::v1::{span, ResourceSpans, ScopeSpans, Span as ProtoSpan};
    use prost::Message;
    let receiver = Receiver::start();
    let kv = |k: &str, v: any_value::Value| KeyValue {
        key: k.into(),
        value: Some(AnyValue { value: Some(v) }),
        ..Default::default()
    };
    let export = ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            scope_spans: vec![ScopeSpans {
                spans: vec![ProtoSpan {
                    trace_id: vec![0xab; 16],
                    span_id: vec![1, 2, 3, 4, 5, 6, 7, 8],
                    name: "tools/call greet".into(),
                    kind: span::SpanKind::Server as i32,
                    attributes: vec![
                        kv("mcp.method.name", any_value::Value::StringValue("tools/call".into())),
                        kv("mcp_runtime.mrtr.round", any_value::Value::IntValue(1)),
                    ],
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }],
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let addr = receiver.addr();
        let protobuf = [("content-type".to_owned(), "application/x-protobuf".to_owned())];
        let mut conn = connect(addr).await;
        let a = read_all(
            conn.send(build(
                addr,
                Method::POST,
                "/v1/traces",
                &protobuf,
                export.encode_to_vec(),
            ))
            .await,
        )
        .await;
        assert_eq!(a.status, 200);
        let a = read_all(
            conn.send(build(
                addr,
                Method::POST,
                "/v1/traces",
                &protobuf,
                b"\xff\xff\xff".to_vec(),
            ))
            .await,
        )
        .await;
        assert_eq!(a.status, 400);
    });
    assert!(receiver.wait_for(|r| r.requests() == 2, Duration::from_secs(5)));
    assert_eq!(receiver.undecodable(), 1);
    let spans = receiver.spans();
    assert_eq!(spans.len(), 1);
    let s = &spans[0];
    assert_eq!((s.kind.as_str(), s.status_code.as_str()), ("SERVER", "UNSET"));
    assert_eq!(s.trace_id, "ab".repeat(16));
    assert_eq!(s.span_id, "0102030405060708");
    assert_eq!(s.parent_span_id, "");
    assert_eq!(s.attr("mcp_runtime.mrtr.round"), Some("1"));
}

/// A binary with its own `main` (examples/observed: `otel::init_with` from
/// the environment, its own runtime, `HttpServer::serve_until`) exports the
/// same spans and metrics, and sends them when it stops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_binary_with_its_own_main_exports_and_flushes_at_sigterm() {
    let receiver = Receiver::start();
    let mut server = Served::launch(
        &example("observed"),
        &["127.0.0.1:0"],
        &receiver,
        &[
            ("OTEL_BSP_SCHEDULE_DELAY", "60000"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "60000"),
        ],
    );
    let found = tool(
        server.addr,
        1,
        "stock",
        json!({"name": "stock", "arguments": {"sku": "LAMP-01"}}),
    )
    .await;
    assert_eq!(found["result"]["structuredContent"]["units"], 12, "{found}");
    let missing = tool(
        server.addr,
        2,
        "stock",
        json!({"name": "stock", "arguments": {"sku": "NOPE"}}),
    )
    .await;
    assert_eq!(missing["result"]["isError"], true, "{missing}");
    assert_eq!(receiver.trace_requests(), 0, "nothing is sent before the stop");
    let status = server.terminate(Duration::from_secs(60));
    assert_eq!(status.code(), Some(0), "stderr:\n{}", server.log());
    assert!(
        receiver.wait_for(
            |r| r.spans().iter().filter(|s| s.name == "tools/call stock").count() == 2,
            Duration::from_secs(20)
        ),
        "both calls' spans arrive at the stop; received: {:?}",
        receiver.seen()
    );
    let spans = receiver.spans();
    let calls: Vec<&Span> = spans.iter().filter(|s| s.name == "tools/call stock").collect();
    for span in &calls {
        assert_eq!(span.kind, "SERVER");
        assert_eq!(span.attr("gen_ai.tool.name"), Some("stock"));
        assert_eq!(span.attr("network.transport"), Some("tcp"));
        assert_eq!(span.resource.get("service.name").map(String::as_str), Some("otel-e2e"));
    }
    let failed: Vec<&&Span> = calls
        .iter()
        .filter(|s| s.attr("error.type") == Some("tool_error"))
        .collect();
    assert_eq!(failed.len(), 1, "{calls:#?}");
    assert_eq!(failed[0].status_code, "ERROR");
    assert!(
        receiver.wait_for(
            |r| r.metrics().iter().any(|m| m.name == "mcp.server.operation.duration"
                && m.attributes.get("gen_ai.tool.name").map(String::as_str) == Some("stock")),
            Duration::from_secs(20)
        ),
        "the duration metric arrives at the stop"
    );
}

/// A stdio server stopped by SIGTERM while its input is still open (a host
/// whose server did not exit when it closed the input sends one) ends as at
/// the input's end: the call it is running is answered, it exits 0 and
/// flushes what it recorded, instead of dying with it.
#[cfg(unix)]
#[tokio::test]
async fn a_stdio_server_flushes_at_sigterm() {
    use std::io::Write as _;
    let receiver = Receiver::start();
    let mut child = Command::new(everything())
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env("OTEL_SERVICE_NAME", "otel-stdio")
        .env("OTEL_BSP_SCHEDULE_DELAY", "60000")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "60000")
        .env_remove("OTEL_EXPORTER_OTLP_PROTOCOL")
        .env_remove("OTEL_TRACES_EXPORTER")
        .env_remove("OTEL_TRACES_SAMPLER")
        .env_remove("MCP_METRICS_ADDR")
        .env_remove("MCP_REDIS_URL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the example starts");
    let mut stdin = child.stdin.take().unwrap();
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "test_simple_text", "arguments": {}, "_meta": meta_with(json!({}))}});
    writeln!(stdin, "{call}").unwrap();
    let mut answers = BufReader::new(child.stdout.take().unwrap());
    let mut answer = String::new();
    answers.read_line(&mut answer).unwrap();
    assert!(answer.contains("simple text response"), "{answer}");
    let slow = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "slow_compute", "arguments": {"seconds": 1}, "_meta": meta_with(json!({}))}});
    writeln!(stdin, "{slow}").unwrap();
    // A call the client cancels: it ends unanswered.
    let left = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "slow_compute", "arguments": {"seconds": 30}, "_meta": meta_with(json!({}))}});
    writeln!(stdin, "{left}").unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}});
    writeln!(stdin, "{cancel}").unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(receiver.trace_requests(), 0, "nothing is sent before the stop");
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    answer.clear();
    answers.read_line(&mut answer).unwrap();
    assert!(
        answer.contains("compute: done after 1 s"),
        "the running call is answered: {answer}"
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "no exit within 30 s of SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(stdin);
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(
        receiver.wait_for(
            |r| r.spans().iter().any(|s| s.name == "tools/call test_simple_text"),
            Duration::from_secs(20)
        ),
        "the call's span arrives at the stop; received: {:?}",
        receiver.seen()
    );
    let spans = receiver.spans();
    let left = request_span(&spans, "tools/call", "3");
    assert_eq!(left.name, "tools/call slow_compute", "{left:#?}");
    assert_eq!(left.attr("error.type"), Some("cancelled"), "{left:#?}");
    assert_eq!(left.attr("network.transport"), Some("pipe"), "{left:#?}");
}

/// A gateway (examples/gateway) carries its caller's trace to its upstream
/// (examples/quickstart over stdio, exporting to the same receiver): the
/// upstream's span of the forwarded call is a child of the gateway's span
/// of the caller's call, in the caller's trace, through the `traceparent`
/// the gateway's client puts in the request's `_meta`.
#[cfg(feature = "client")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_carries_the_callers_trace_to_its_upstream() {
    let features = [
        ("otel", cfg!(feature = "otel")),
        ("auth", cfg!(feature = "auth")),
        ("redis", cfg!(feature = "redis")),
        ("client", true),
    ]
    .into_iter()
    .filter_map(|(feature, on)| on.then_some(feature))
    .collect::<Vec<_>>()
    .join(",");
    let gateway = support::example_binary_with("gateway", &features);
    let upstream = support::example_binary_with("quickstart", &features);
    let dir = std::env::temp_dir().join(format!("mcp-otlp-gateway-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("gateway.json");
    let servers = json!({"mcpServers": {"qs": {"command": upstream.to_string_lossy()}}});
    std::fs::write(&config, servers.to_string()).unwrap();
    let receiver = Receiver::start();
    // Spans leave every 100 ms: the upstream, a child process, is not
    // stopped by a signal of its own here.
    let server = Served::launch(
        &gateway,
        &["--config", config.to_str().unwrap(), "--http", "127.0.0.1:0"],
        &receiver,
        &[("OTEL_BSP_SCHEDULE_DELAY", "100")],
    );
    let arguments = json!({"value": 100, "from": "celsius", "to": "fahrenheit"});
    let mut meta = meta_with(json!({}));
    meta["traceparent"] = json!(format!("00-{TRACE_ID}-{CALLER_SPAN}-01"));
    let deadline = Instant::now() + Duration::from_secs(30);
    let answer = loop {
        let v = tool(
            server.addr,
            1,
            "qs_convert_temperature",
            json!({"name": "qs_convert_temperature", "arguments": arguments, "_meta": meta}),
        )
        .await;
        if v.get("result").is_some() || Instant::now() > deadline {
            break v;
        }
        // The upstream is listed once its process answered.
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(answer.get("result").is_some(), "{answer}; stderr:\n{}", server.log());
    let both = |r: &Receiver| {
        let spans = r.spans();
        spans
            .iter()
            .any(|s| s.name == "tools/call qs_convert_temperature" && s.trace_id == TRACE_ID)
            && spans
                .iter()
                .any(|s| s.name == "tools/call convert_temperature" && s.trace_id == TRACE_ID)
    };
    assert!(
        receiver.wait_for(both, Duration::from_secs(20)),
        "the gateway's and the upstream's spans in the caller's trace; spans: {:#?}",
        receiver.spans()
    );
    let spans = receiver.spans();
    let outer = spans
        .iter()
        .find(|s| s.name == "tools/call qs_convert_temperature" && s.trace_id == TRACE_ID)
        .unwrap();
    assert_eq!(outer.parent_span_id, CALLER_SPAN, "{outer:#?}");
    let inner = spans
        .iter()
        .find(|s| s.name == "tools/call convert_temperature" && s.trace_id == TRACE_ID)
        .unwrap();
    assert_eq!(inner.kind, "SERVER");
    assert_eq!(
        inner.parent_span_id, outer.span_id,
        "the upstream's span is the gateway's child: {inner:#?}"
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
