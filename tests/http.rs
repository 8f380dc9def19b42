//! The Streamable HTTP transport (2026-07-28) end to end: a real server on an
//! ephemeral loopback port, a real HTTP/1.1 client (hyper), every status code
//! and error the transport and dispatcher produce, JSON and SSE responses,
//! cancellation by closing the stream, subscriptions, and the tower service
//! mounted at another path. Every JSON-RPC body and SSE event read is
//! validated against the official 2026-07-28 schema.

mod support;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Method, Request, StatusCode};
use mcp_runtime::prelude::*;
use mcp_runtime::protocol::Tool;
use mcp_runtime::transport::http::{HttpConfig, McpService};
use mcp_runtime::ToolEntry;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::Duration;
use support::http::*;
use support::{eventually, meta_with, validate_emitted};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

// ---------------------------------------------------------------- tools

/// Echoes its text.
#[tool(read_only)]
fn echo(
    /// The text to echo.
    text: String,
) -> String {
    text
}

/// Reports progress `steps` times, then answers.
#[tool]
async fn progress_steps(
    /// How many progress notifications to send.
    steps: u32,
    ctx: Context,
) -> String {
    for i in 1..=steps {
        ctx.progress(f64::from(i), Some(f64::from(steps)), Some("working"));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    format!("did {steps} steps")
}

/// Echoes a value that is also sent as the `Mcp-Param-Region` header.
#[tool(read_only)]
fn region_echo(
    /// A region name, mirrored into the `Mcp-Param-Region` header.
    #[header = "Region"]
    region: String,
) -> String {
    format!("region: {region}")
}

/// Says which principal the transport vouched for.
#[tool(read_only)]
fn whoami(ctx: Context) -> String {
    format!("principal: {:?}", ctx.principal())
}

/// How many times `counted` ran.
static COUNTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Counts its calls (to tell a request that was processed from one that was not).
#[tool]
fn counted() -> String {
    let n = COUNTED.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
    format!("call {n}")
}

/// Needs the client's sampling capability.
#[tool(requires(sampling))]
fn needs_sampling() -> &'static str {
    "the client declared sampling"
}

/// Tags of `slow` calls that started, and of those whose token was cancelled.
static SLOW_STARTED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
static SLOW_CANCELLED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

fn slow_started(tag: &str) -> bool {
    SLOW_STARTED.lock().unwrap().contains(tag)
}

fn slow_cancelled(tag: &str) -> bool {
    SLOW_CANCELLED.lock().unwrap().contains(tag)
}

/// Reports progress once (when asked to), then sleeps for a minute.
#[tool]
async fn slow(
    /// Names this call in the test's records.
    tag: String,
    ctx: Context,
    cancel: Cancellation,
) -> String {
    SLOW_STARTED.lock().unwrap().insert(tag.clone());
    let watched = tag.clone();
    tokio::spawn(async move {
        cancel.cancelled().await;
        SLOW_CANCELLED.lock().unwrap().insert(watched);
    });
    ctx.progress(0.0, None, Some("started"));
    tokio::time::sleep(Duration::from_secs(60)).await;
    format!("{tag} finished")
}

// ---------------------------------------------------------------- tests

/// A tool whose schema may declare header parameters has it built and
/// checked when the server is built; any other's waits for the first list
/// or call that needs it.
#[test]
fn only_a_schema_that_may_declare_headers_is_built_at_start_up() {
    use mcp_runtime::__private::RegisteredTool;
    assert!(<region_echo as RegisteredTool>::DEF.check_schema);
    assert!(!<echo as RegisteredTool>::DEF.check_schema);
    assert!(!<whoami as RegisteredTool>::DEF.check_schema);
}

#[tokio::test]
async fn get_and_delete_are_method_not_allowed() {
    let s = start().await;
    for m in [Method::GET, Method::DELETE, Method::PUT] {
        let a = exchange(
            s.addr,
            m.clone(),
            &standard_headers("server/discover", None),
            Vec::new(),
        )
        .await;
        assert_eq!(a.status, StatusCode::METHOD_NOT_ALLOWED, "{m}");
        assert_eq!(a.headers["allow"], "POST", "{m}");
    }
}

#[tokio::test]
async fn a_notification_is_accepted_with_no_body() {
    let s = start().await;
    let body = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}});
    let a = post(
        s.addr,
        &standard_headers("notifications/cancelled", None),
        body.to_string().into_bytes(),
    )
    .await;
    assert_eq!(a.status, StatusCode::ACCEPTED);
    assert_eq!(a.text, "");
}

#[tokio::test]
async fn malformed_json_is_400_with_a_parse_error() {
    let s = start().await;
    let a = post(s.addr, &standard_headers("tools/list", None), b"{not json".to_vec()).await;
    assert_error(&a, None, StatusCode::BAD_REQUEST, -32700, None);
    let a = post(
        s.addr,
        &standard_headers("tools/list", None),
        br#"{"jsonrpc":"2.0","id":3,"#.to_vec(),
    )
    .await;
    assert_error(&a, None, StatusCode::BAD_REQUEST, -32700, None);
}

#[tokio::test]
async fn missing_meta_fields_are_400_invalid_params_with_the_id_echoed() {
    let s = start().await;
    let no_version = json!({"io.modelcontextprotocol/clientCapabilities": {}});
    let no_caps = json!({"io.modelcontextprotocol/protocolVersion": VERSION});
    let cases = [
        (100, None),
        (101, Some(json!({}))),
        (102, Some(json!({"_meta": no_version}))),
        (104, Some(json!({"_meta": no_caps}))),
    ];
    for (id, params) in cases {
        let a = post(
            s.addr,
            &standard_headers("server/discover", None),
            rpc_raw(id, "server/discover", params),
        )
        .await;
        assert_error(&a, Some("server/discover"), StatusCode::BAD_REQUEST, -32602, Some(id));
    }
    // A missing field is reported before any header mismatch.
    let headers = with_header(standard_headers("tools/list", None), "mcp-protocol-version", None);
    let a = post(s.addr, &headers, rpc_raw(106, "server/discover", Some(json!({})))).await;
    assert_error(&a, Some("server/discover"), StatusCode::BAD_REQUEST, -32602, Some(106));
    // clientInfo is optional.
    let meta = json!({"io.modelcontextprotocol/protocolVersion": VERSION,
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let (status, v) = call(s.addr, 105, "server/discover", None, json!({"_meta": meta})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["id"], 105);
    assert_eq!(v["result"]["supportedVersions"], json!([VERSION]));
}

#[tokio::test]
async fn a_protocol_version_header_differing_from_meta_is_a_header_mismatch() {
    let s = start().await;
    // Header 2026-07-28, _meta v999.0.0: the mismatch wins over the unsupported version.
    let body = rpc(302, "server/discover", json!({"_meta": meta_version("v999.0.0")}));
    let a = post(s.addr, &standard_headers("server/discover", None), body).await;
    assert_error(&a, Some("server/discover"), StatusCode::BAD_REQUEST, -32020, Some(302));
    // A missing header is a mismatch too.
    let headers = with_header(standard_headers("server/discover", None), "mcp-protocol-version", None);
    let a = post(s.addr, &headers, rpc(303, "server/discover", json!({}))).await;
    assert_error(&a, Some("server/discover"), StatusCode::BAD_REQUEST, -32020, Some(303));
}

#[tokio::test]
async fn an_unsupported_version_is_400_listing_the_supported_ones() {
    let s = start().await;
    let headers = with_header(
        standard_headers("server/discover", None),
        "mcp-protocol-version",
        Some("v999.0.0"),
    );
    let body = rpc(301, "server/discover", json!({"_meta": meta_version("v999.0.0")}));
    let a = post(s.addr, &headers, body).await;
    let v = assert_error(&a, Some("server/discover"), StatusCode::BAD_REQUEST, -32022, Some(301));
    assert_eq!(v["error"]["data"]["requested"], "v999.0.0");
    assert_eq!(v["error"]["data"]["supported"], json!([VERSION]));
    // A routing header mismatch is reported before the unsupported version.
    let headers = with_header(headers, "mcp-method", Some("tools/list"));
    let body = rpc(304, "server/discover", json!({"_meta": meta_version("v999.0.0")}));
    let a = post(s.addr, &headers, body).await;
    assert_error(&a, Some("server/discover"), StatusCode::BAD_REQUEST, -32020, Some(304));
}

#[tokio::test]
async fn unknown_and_removed_methods_are_404_method_not_found() {
    let s = start().await;
    for (id, method) in [
        (500, "initialize"),
        (501, "ping"),
        (502, "logging/setLevel"),
        (503, "resources/subscribe"),
        (504, "resources/unsubscribe"),
        (601, "unknown/method"),
    ] {
        let a = post(s.addr, &standard_headers(method, None), rpc(id, method, json!({}))).await;
        assert_error(&a, Some(method), StatusCode::NOT_FOUND, -32601, Some(id));
    }
}

#[tokio::test]
async fn the_mcp_method_header_must_be_present_and_match_exactly() {
    let s = start().await;
    let cases = [
        (1, None),
        (2, Some("prompts/list")),
        (3, Some("TOOLS/LIST")),
        (4, Some("tools/call")),
    ];
    for (id, value) in cases {
        let headers = with_header(standard_headers("tools/list", None), "mcp-method", value);
        let a = post(s.addr, &headers, rpc(id, "tools/list", json!({}))).await;
        assert_error(&a, Some("tools/list"), StatusCode::BAD_REQUEST, -32020, Some(id));
    }
    // A removed method with a mismatched header: the header is checked first.
    let headers = standard_headers("tools/list", None);
    let a = post(s.addr, &headers, rpc(5, "ping", json!({}))).await;
    assert_error(&a, Some("ping"), StatusCode::BAD_REQUEST, -32020, Some(5));
}

#[tokio::test]
async fn header_names_are_case_insensitive() {
    let s = start().await;
    // hyper sends lowercase names; write upper and mixed case by hand.
    let body = String::from_utf8(rpc(7, "tools/list", json!({}))).unwrap();
    for (version, method) in [
        ("mcp-protocol-version", "mcp-method"),
        ("MCP-PROTOCOL-VERSION", "MCP-METHOD"),
        ("Mcp-Protocol-Version", "Mcp-Method"),
    ] {
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             {version}: {VERSION}\r\n{method}: tools/list\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            s.addr,
            body.len()
        );
        let mut stream = TcpStream::connect(s.addr).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut raw = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut raw))
            .await
            .expect("timed out")
            .unwrap();
        let raw = String::from_utf8(raw).unwrap();
        let (head, body) = raw.split_once("\r\n\r\n").expect("a response head");
        assert!(head.starts_with("HTTP/1.1 200"), "{method}: {head}");
        let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{body:?}: {e}"));
        validate_emitted(&v, Some("tools/list"));
        assert!(v["result"]["tools"].is_array(), "{v}");
    }
}

#[tokio::test]
async fn the_mcp_name_header_is_checked_trimmed_and_base64_decoded() {
    let s = start().await;
    let params = json!({"name": "echo", "arguments": {"text": "hi"}});
    let body = |id| rpc(id, "tools/call", params.clone());
    // Missing or mismatched: 400 + -32020.
    for (id, name) in [(1, None), (2, Some("wrong_tool_name")), (3, Some("ECHO"))] {
        let a = post(s.addr, &standard_headers("tools/call", name), body(id)).await;
        assert_error(&a, Some("tools/call"), StatusCode::BAD_REQUEST, -32020, Some(id));
    }
    // Whitespace around the value is trimmed; the base64 sentinel is decoded.
    for (id, name) in [(4, "  echo  "), (5, "\techo"), (6, "=?base64?ZWNobw==?="), (7, "echo")] {
        let a = post(s.addr, &standard_headers("tools/call", Some(name)), body(id)).await;
        let v = a.json(Some("tools/call"));
        assert_eq!(a.status, StatusCode::OK, "{name:?}: {v}");
        assert_eq!(v["result"]["content"][0]["text"], "hi", "{name:?}: {v}");
    }
    // A malformed sentinel is a mismatch.
    let a = post(
        s.addr,
        &standard_headers("tools/call", Some("=?base64?ZWNobw?=")),
        body(8),
    )
    .await;
    assert_error(&a, Some("tools/call"), StatusCode::BAD_REQUEST, -32020, Some(8));
    // So is a raw byte past ASCII (the name's text, base64-encoded, is `=?base64?...?=`).
    let a = post(s.addr, &standard_headers("tools/call", Some("echö")), body(9)).await;
    let v = assert_error(&a, Some("tools/call"), StatusCode::BAD_REQUEST, -32020, Some(9));
    assert!(v["error"]["message"].as_str().unwrap().contains("visible ASCII"), "{v}");
}

#[tokio::test]
async fn mcp_param_headers_are_validated_against_the_arguments() {
    let s = start().await;
    // The parameter is declared in the input schema.
    let (_, list) = call(s.addr, 1, "tools/list", None, json!({})).await;
    let tool = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "region_echo")
        .expect("region_echo is listed")
        .clone();
    assert_eq!(tool["inputSchema"]["properties"]["region"]["x-mcp-header"], "Region");

    let send = |id: i64, region: &'static str, header: Option<&'static str>| {
        let mut headers = standard_headers("tools/call", Some("region_echo"));
        if let Some(h) = header {
            headers.push(("mcp-param-region".to_owned(), h.to_owned()));
        }
        let body = rpc(
            id,
            "tools/call",
            json!({"name": "region_echo", "arguments": {"region": region}}),
        );
        async move { post(s.addr, &headers, body).await }
    };
    let accepted = [
        (10, "Hello", "=?base64?SGVsbG8=?="),
        (11, "SGVsbG8=", "SGVsbG8="),
        (12, "=?base64?SGVsbG8=", "=?base64?SGVsbG8="),
        (13, "Europe", "  Europe "),
    ];
    for (id, region, header) in accepted {
        let a = send(id, region, Some(header)).await;
        let v = a.json(Some("tools/call"));
        assert_eq!(a.status, StatusCode::OK, "{header:?}: {v}");
        assert_eq!(v["result"]["content"][0]["text"], format!("region: {region}"), "{v}");
    }
    let rejected = [
        (20, "Hello", Some("=?base64?SGVsbG8?=")),
        (21, "Hello", Some("=?base64?SGVs!!!bG8=?=")),
        (22, "test-value", None),
        (23, "Asia", Some("Europe")),
        (24, "hello", Some("Hello")),
        // Text other than visible ASCII travels base64-encoded: sent raw
        // (the UTF-8 bytes), the value is malformed even where it matches.
        (25, "Zürich", Some("Zürich")),
    ];
    for (id, region, header) in rejected {
        let a = send(id, region, header).await;
        assert_error(&a, Some("tools/call"), StatusCode::BAD_REQUEST, -32020, Some(id));
    }
    // The header's name is case-insensitive.
    let mut headers = standard_headers("tools/call", Some("region_echo"));
    headers.push(("MCP-PARAM-REGION".to_owned(), "Asia".to_owned()));
    let body = rpc(
        30,
        "tools/call",
        json!({"name": "region_echo", "arguments": {"region": "Asia"}}),
    );
    let a = post(s.addr, &headers, body).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text);
}

#[tokio::test]
async fn a_missing_client_capability_is_400_with_the_required_capabilities() {
    let s = start().await;
    let (status, v) = call(
        s.addr,
        401,
        "tools/call",
        Some("needs_sampling"),
        json!({"name": "needs_sampling"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    assert_eq!(error_code(&v), -32021, "{v}");
    assert_eq!(v["id"], 401);
    assert!(
        v["error"]["data"]["requiredCapabilities"]["sampling"].is_object(),
        "{v}"
    );

    let params = json!({"name": "needs_sampling", "_meta": meta_with(json!({"sampling": {}}))});
    let (status, v) = call(s.addr, 402, "tools/call", Some("needs_sampling"), params).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["result"]["content"][0]["text"], "the client declared sampling");
}

#[tokio::test]
async fn host_and_origin_are_checked_against_dns_rebinding() {
    let s = start().await;
    let port = s.addr.port();
    let discover = |id| rpc(id, "server/discover", json!({}));
    let headers = |host: String, origin: Option<String>| {
        let mut h = standard_headers("server/discover", None);
        h.push(("host".to_owned(), host));
        if let Some(o) = origin {
            h.push(("origin".to_owned(), o));
        }
        h
    };
    let forbidden = [
        headers("evil.example.com".into(), Some("http://evil.example.com".into())),
        headers("evil.example.com".into(), None),
        headers(format!("evil.example.com:{port}"), None),
        headers(format!("127.0.0.1:{port}"), Some("http://evil.example.com".into())),
        headers(
            format!("localhost:{port}"),
            Some(format!("http://evil.example.com:{port}")),
        ),
    ];
    for h in forbidden {
        let a = post(s.addr, &h, discover(1)).await;
        assert_eq!(a.status, StatusCode::FORBIDDEN, "{h:?}: {}", a.text);
        a.json(None);
    }
    let allowed = [
        headers(format!("127.0.0.1:{port}"), Some(format!("http://127.0.0.1:{port}"))),
        headers(format!("localhost:{port}"), Some(format!("http://localhost:{port}"))),
        headers(format!("127.0.0.1:{port}"), None),
    ];
    for h in allowed {
        let a = post(s.addr, &h, discover(2)).await;
        assert_eq!(a.status, StatusCode::OK, "{h:?}: {}", a.text);
        assert!(a.json(Some("server/discover"))["result"].is_object());
    }
}

/// A browser page of an origin the policy lets in (here a loopback page)
/// gets its preflight answered and may read the answers; one of another
/// origin is refused, preflight and all, with no CORS headers.
#[tokio::test]
async fn a_browser_page_of_an_allowed_origin_may_call_the_endpoint() {
    let s = start().await;
    let page = "http://localhost:5173";
    let preflight = |origin: &str| {
        vec![
            ("origin".to_owned(), origin.to_owned()),
            ("access-control-request-method".to_owned(), "POST".to_owned()),
            (
                "access-control-request-headers".to_owned(),
                "content-type, mcp-method, mcp-protocol-version".to_owned(),
            ),
        ]
    };
    let a = exchange(s.addr, Method::OPTIONS, &preflight(page), Vec::new()).await;
    assert_eq!(a.status, StatusCode::NO_CONTENT, "{}", a.text);
    let header = |a: &Answer, name: &str| a.headers.get(name).map(|v| v.to_str().unwrap().to_owned());
    assert_eq!(header(&a, "access-control-allow-origin").as_deref(), Some(page));
    assert!(header(&a, "access-control-allow-methods").is_some_and(|m| m.contains("POST")));
    assert_eq!(
        header(&a, "access-control-allow-headers").as_deref(),
        Some("content-type, mcp-method, mcp-protocol-version")
    );

    let call = with_header(standard_headers("server/discover", None), "origin", Some(page));
    let a = post(s.addr, &call, rpc(1, "server/discover", json!({}))).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text);
    assert_eq!(header(&a, "access-control-allow-origin").as_deref(), Some(page));
    assert!(header(&a, "access-control-expose-headers").is_some_and(|h| h.contains("mcp-session-id")));
    a.json(Some("server/discover"));

    let evil = "http://evil.example.com";
    let a = exchange(s.addr, Method::OPTIONS, &preflight(evil), Vec::new()).await;
    assert_eq!(a.status, StatusCode::FORBIDDEN, "{}", a.text);
    assert_eq!(header(&a, "access-control-allow-origin"), None);
    let call = with_header(standard_headers("server/discover", None), "origin", Some(evil));
    let a = post(s.addr, &call, rpc(2, "server/discover", json!({}))).await;
    assert_eq!(
        (a.status, header(&a, "access-control-allow-origin")),
        (StatusCode::FORBIDDEN, None)
    );

    // Without an Origin, OPTIONS is no preflight: not a method of the endpoint.
    let a = exchange(s.addr, Method::OPTIONS, &[], Vec::new()).await;
    assert_eq!(a.status, StatusCode::METHOD_NOT_ALLOWED, "{}", a.text);
}

#[tokio::test]
async fn a_body_larger_than_max_body_is_413() {
    let s = start_with(HttpConfig {
        max_body: 1024,
        ..HttpConfig::default()
    })
    .await;
    let big = "x".repeat(4096);
    let params = json!({"name": "echo", "arguments": {"text": big}});
    let a = post(
        s.addr,
        &standard_headers("tools/call", Some("echo")),
        rpc(1, "tools/call", params),
    )
    .await;
    assert_eq!(a.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", a.text);
    // A body under the limit is served.
    let (status, v) = call(
        s.addr,
        2,
        "tools/call",
        Some("echo"),
        json!({"name": "echo", "arguments": {"text": "small"}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["result"]["content"][0]["text"], "small");
}

#[tokio::test]
async fn a_deeply_nested_body_is_400_and_the_server_keeps_serving() {
    let s = start().await;
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let meta = meta_with(json!({})).to_string();
    // As the whole body: not a request object.
    let a = post(s.addr, &standard_headers("tools/list", None), deep.clone().into_bytes()).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.text);
    let v = a.json(None);
    assert!(matches!(error_code(&v), -32700 | -32600), "{v}");

    // Inside params, where the server must read it: the client capabilities.
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"{VERSION}","io.modelcontextprotocol/clientCapabilities":{{"experimental":{{"x":{deep}}}}}}}}}}}"#
    );
    let a = post(s.addr, &standard_headers("tools/list", None), body.into_bytes()).await;
    assert_error(&a, Some("tools/list"), StatusCode::BAD_REQUEST, -32600, Some(9));

    // Inside params, in a member nobody reads: the nesting limit applies to
    // the whole message, and the id is still echoed.
    let body =
        format!(r#"{{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{{"_meta":{meta},"deep":{deep}}}}}"#);
    let a = post(s.addr, &standard_headers("tools/list", None), body.into_bytes()).await;
    assert_error(&a, Some("tools/list"), StatusCode::BAD_REQUEST, -32600, Some(10));

    // Inside a tool's arguments: the same.
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{{"_meta":{meta},"name":"echo","arguments":{{"text":{deep}}}}}}}"#
    );
    let a = post(s.addr, &standard_headers("tools/call", Some("echo")), body.into_bytes()).await;
    assert_error(&a, Some("tools/call"), StatusCode::BAD_REQUEST, -32600, Some(11));

    let (status, v) = call(s.addr, 12, "server/discover", None, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{v}");
}

#[tokio::test]
async fn a_plain_call_is_one_single_line_json_body() {
    let s = start().await;
    let a = post(
        s.addr,
        &standard_headers("tools/call", Some("echo")),
        rpc(1, "tools/call", json!({"name": "echo", "arguments": {"text": "hello"}})),
    )
    .await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(a.content_type(), "application/json");
    assert!(a.headers.get("mcp-session-id").is_none());
    let v = a.json(Some("tools/call"));
    assert_eq!(v.to_string(), a.text, "compact JSON");
    assert_eq!(v["id"], 1);
    assert_eq!(v["result"]["resultType"], "complete");
    assert_eq!(v["result"]["content"], json!([{"type": "text", "text": "hello"}]));
    assert_eq!(
        v["result"]["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "http-test", "version": "1.2.3"})
    );
}

#[tokio::test]
async fn one_connection_serves_several_requests() {
    let s = start().await;
    let mut conn = connect(s.addr).await;
    for id in 1..=3 {
        let req = build(
            s.addr,
            Method::POST,
            "/mcp",
            &standard_headers("tools/list", None),
            rpc(id, "tools/list", json!({})),
        );
        let a = read_all(conn.send(req).await).await;
        assert_eq!(a.status, StatusCode::OK);
        assert_eq!(a.json(Some("tools/list"))["id"], id);
    }
}

#[tokio::test]
async fn concurrent_requests_are_all_served() {
    let s = start().await;
    let mut tasks = Vec::new();
    for id in 1000..1003 {
        let addr = s.addr;
        tasks.push(tokio::spawn(async move {
            call(addr, id, "tools/list", None, json!({})).await
        }));
    }
    for (i, t) in tasks.into_iter().enumerate() {
        let (status, v) = t.await.unwrap();
        assert_eq!(status, StatusCode::OK);
        assert_eq!(v["id"], 1000 + i as i64);
    }
}

#[tokio::test]
async fn progress_streams_before_the_result() {
    let s = start().await;
    let mut meta = meta_with(json!({}));
    meta["progressToken"] = json!("tok-1");
    let params = json!({"name": "progress_steps", "arguments": {"steps": 3}, "_meta": meta});
    let mut sse = open_stream(s.addr, 5, "tools/call", Some("progress_steps"), params).await;
    for i in 1..=3 {
        let n = sse.next().await;
        assert_eq!(n["method"], "notifications/progress", "{n}");
        assert_eq!(n["params"]["progressToken"], "tok-1");
        assert_eq!(n["params"]["progress"], f64::from(i));
        assert_eq!(n["params"]["total"], 3.0);
    }
    let done = sse.next().await;
    assert_eq!(done["id"], 5, "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "did 3 steps");
    assert_eq!(
        sse.next_within(Duration::from_secs(2)).await,
        None,
        "the stream ends after the result"
    );

    // Without a progress token: no notifications, one JSON body.
    let params = json!({"name": "progress_steps", "arguments": {"steps": 2}});
    let (status, v) = call(s.addr, 6, "tools/call", Some("progress_steps"), params).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["result"]["content"][0]["text"], "did 2 steps");
}

/// The answer follows `Accept`: a client that takes only JSON gets the
/// result as one JSON body (its progress notifications, which only a stream
/// could carry, are not sent), one that takes only event streams gets it as
/// a stream, and one that takes neither gets 406 (as does a listen stream
/// for a client that takes no event stream).
#[tokio::test]
async fn the_answer_follows_the_accept_header() {
    let s = start().await;
    let mut meta = meta_with(json!({}));
    meta["progressToken"] = json!("tok-1");
    let params = json!({"name": "progress_steps", "arguments": {"steps": 2}, "_meta": meta});
    let body = rpc(5, "tools/call", params.clone());

    let headers = standard_headers("tools/call", Some("progress_steps"));
    let only_json = with_header(headers.clone(), "accept", Some("application/json"));
    let a = post(s.addr, &only_json, body.clone()).await;
    assert_eq!(
        (a.status, a.content_type()),
        (StatusCode::OK, "application/json"),
        "{}",
        a.text
    );
    assert_eq!(
        a.json(Some("tools/call"))["result"]["content"][0]["text"],
        "did 2 steps"
    );

    let only_sse = with_header(headers.clone(), "accept", Some("text/event-stream"));
    let a = post(s.addr, &only_sse, body.clone()).await;
    assert_eq!(
        (a.status, a.content_type()),
        (StatusCode::OK, "text/event-stream"),
        "{}",
        a.text
    );
    let events: Vec<Value> = a
        .text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| serde_json::from_str(d.trim()).unwrap())
        .collect();
    assert_eq!(events.len(), 3, "{}", a.text);
    assert_eq!(events[2]["result"]["content"][0]["text"], "did 2 steps");
    // Without notifications too, the answer comes as a stream.
    let echo = rpc(6, "tools/call", json!({"name": "echo", "arguments": {"text": "hi"}}));
    let echo_sse = with_header(standard_headers("tools/call", Some("echo")), "accept", Some("text/*"));
    let a = post(s.addr, &echo_sse, echo.clone()).await;
    assert_eq!(
        (a.status, a.content_type()),
        (StatusCode::OK, "text/event-stream"),
        "{}",
        a.text
    );
    let data = a.text.lines().find_map(|l| l.strip_prefix("data:")).unwrap_or_default();
    let v: Value = serde_json::from_str(data.trim()).unwrap();
    validate_emitted(&v, Some("tools/call"));
    assert_eq!(v["result"]["content"][0]["text"], "hi");

    for accept in ["text/html", "*/*;q=0"] {
        let neither = with_header(headers.clone(), "accept", Some(accept));
        let a = post(s.addr, &neither, body.clone()).await;
        assert_eq!(a.status, StatusCode::NOT_ACCEPTABLE, "{accept}: {}", a.text);
        assert_eq!(error_code(&a.json(None)), -32600, "{}", a.text);
    }

    let listen = rpc(
        7,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let listen_json = with_header(
        standard_headers("subscriptions/listen", None),
        "accept",
        Some("application/json"),
    );
    let a = post(s.addr, &listen_json, listen).await;
    assert_eq!(a.status, StatusCode::NOT_ACCEPTABLE, "{}", a.text);

    // The server serves on: a client that sends no Accept takes either.
    let plain = with_header(standard_headers("tools/call", Some("echo")), "accept", None);
    let a = post(s.addr, &plain, echo).await;
    assert_eq!(
        (a.status, a.content_type()),
        (StatusCode::OK, "application/json"),
        "{}",
        a.text
    );
}

#[tokio::test]
async fn closing_the_response_stream_cancels_the_handler() {
    let s = start_with(HttpConfig {
        keep_alive: Duration::from_millis(100),
        ..HttpConfig::default()
    })
    .await;
    let mut meta = meta_with(json!({}));
    meta["progressToken"] = json!(77);
    let params = json!({"name": "slow", "arguments": {"tag": "stream"}, "_meta": meta});
    let mut sse = open_stream(s.addr, 1, "tools/call", Some("slow"), params).await;
    let first = sse.next().await;
    assert_eq!(first["method"], "notifications/progress", "{first}");
    assert_eq!(first["params"]["progressToken"], 77);
    // A quiet stream gets keep-alive comments.
    assert_eq!(sse.next_within(Duration::from_millis(350)).await, None);
    assert!(sse.comments >= 1, "keep-alive comments on a quiet stream");
    assert!(slow_started("stream"));
    assert!(!slow_cancelled("stream"));
    drop(sse);
    eventually("the handler is cancelled", || slow_cancelled("stream")).await;
}

#[tokio::test]
async fn closing_the_connection_before_the_response_cancels_the_handler() {
    let s = start().await;
    let mut conn = connect(s.addr).await;
    let req = build(
        s.addr,
        Method::POST,
        "/mcp",
        &standard_headers("tools/call", Some("slow")),
        rpc(1, "tools/call", json!({"name": "slow", "arguments": {"tag": "early"}})),
    );
    let pending = tokio::spawn(async move {
        let _ = conn.sender.send_request(req).await;
        drop(conn);
    });
    eventually("the handler starts", || slow_started("early")).await;
    pending.abort();
    eventually("the handler is cancelled", || slow_cancelled("early")).await;
}

/// A keep-alive of zero (none) or one too long to come serves streams as
/// any other: the stream opens and carries its messages.
#[tokio::test]
async fn a_stream_is_served_without_keep_alive_comments() {
    for keep_alive in [Duration::ZERO, Duration::MAX] {
        let config = HttpConfig {
            keep_alive,
            ..HttpConfig::default()
        };
        let s = start_with(config).await;
        let params = json!({"notifications": {"toolsListChanged": true}});
        let mut stream = open_stream(s.addr, 7, "subscriptions/listen", None, params).await;
        let ack = stream.next().await;
        assert_eq!(
            ack["method"], "notifications/subscriptions/acknowledged",
            "{keep_alive:?}: {ack}"
        );
    }
}

#[tokio::test]
async fn subscriptions_listen_acknowledges_then_forwards_only_what_was_asked() {
    let s = start().await;
    let params = json!({"notifications": {"toolsListChanged": true}});
    let mut tools = open_stream(s.addr, 7, "subscriptions/listen", None, params).await;
    let ack = tools.next().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    let sub_id = ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].clone();
    assert!(!sub_id.is_null(), "{ack}");
    assert_eq!(ack["params"]["notifications"], json!({"toolsListChanged": true}));

    let params = json!({"notifications": {"promptsListChanged": true}});
    let mut prompts = open_stream(s.addr, 8, "subscriptions/listen", None, params).await;
    let ack2 = prompts.next().await;
    assert_eq!(ack2["method"], "notifications/subscriptions/acknowledged", "{ack2}");
    assert_ne!(
        ack2["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        sub_id
    );
    assert_eq!(s.server.listener_count(), 2);

    let tool = Tool {
        name: "late_tool".into(),
        description: Some("Added at run time.".into()),
        input_schema: json!({"type": "object"}),
        ..Default::default()
    };
    s.server
        .add_tool(ToolEntry::dynamic(tool, |_args, _ctx| async { "late" }))
        .unwrap();

    let changed = tools.next().await;
    assert_eq!(changed["method"], "notifications/tools/list_changed", "{changed}");
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        sub_id
    );
    assert_eq!(
        prompts.next_within(Duration::from_millis(500)).await,
        None,
        "a prompts-only listener hears nothing of a tool change"
    );

    // The new tool is served.
    let (_, v) = call(s.addr, 9, "tools/call", Some("late_tool"), json!({"name": "late_tool"})).await;
    assert_eq!(v["result"]["content"][0]["text"], "late");

    // Closing the streams ends the listeners.
    drop(tools);
    drop(prompts);
    let server = s.server.clone();
    eventually("both listeners are gone", move || server.listener_count() == 0).await;
}

#[tokio::test]
async fn the_endpoint_path_is_configurable() {
    let s = start_with(HttpConfig {
        path: "/custom/endpoint".into(),
        ..HttpConfig::default()
    })
    .await;
    let mut conn = connect(s.addr).await;
    let headers = standard_headers("server/discover", None);
    let a = read_all(
        conn.send(build(
            s.addr,
            Method::POST,
            "/custom/endpoint",
            &headers,
            rpc(1, "server/discover", json!({})),
        ))
        .await,
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text);
    assert!(a.json(Some("server/discover"))["result"].is_object());
    let mut conn = connect(s.addr).await;
    let a = read_all(
        conn.send(build(
            s.addr,
            Method::POST,
            "/mcp",
            &headers,
            rpc(2, "server/discover", json!({})),
        ))
        .await,
    )
    .await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
}

/// An embedded service tells anonymous callers apart by the address the
/// embedding server gives it (`ClientAddr`): one caller past its rate limit
/// holds up no other.
#[tokio::test]
async fn an_embedded_service_limits_each_client_address() {
    let server = Server::builder().rate_limit("2/min".parse().unwrap()).build().unwrap();
    let service = McpService::new(server);
    let call = |from: Option<[u8; 4]>| {
        let mut b = Request::builder()
            .method(Method::POST)
            .uri("/mcp")
            .header("host", "127.0.0.1:8080");
        for (n, v) in standard_headers("tools/call", Some("echo")) {
            b = b.header(n, v);
        }
        let body = rpc(1, "tools/call", json!({"name": "echo", "arguments": {"text": "hi"}}));
        let mut request = b.body(Full::new(Bytes::from(body))).unwrap();
        if let Some(ip) = from {
            request
                .extensions_mut()
                .insert(mcp_runtime::transport::http::ClientAddr(ip.into()));
        }
        service.handle(request)
    };
    for _ in 0..2 {
        assert_eq!(call(Some([192, 0, 2, 1])).await.status(), StatusCode::OK);
    }
    assert_eq!(call(Some([192, 0, 2, 1])).await.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        call(Some([192, 0, 2, 2])).await.status(),
        StatusCode::OK,
        "another address"
    );
    // Without an address, the anonymous callers count as one.
    for _ in 0..2 {
        assert_eq!(call(None).await.status(), StatusCode::OK);
    }
    assert_eq!(call(None).await.status(), StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn the_tower_service_is_served_at_any_mount_path() {
    let server = Server::builder()
        .name("mounted")
        .version("0.0.1")
        .build()
        .expect("the server builds");
    let mut service = McpService::new(server);
    let request = |uri: &str, host: Option<&str>, body: Vec<u8>| {
        let mut b = Request::builder().method(Method::POST).uri(uri);
        if let Some(h) = host {
            b = b.header("host", h);
        }
        for (n, v) in standard_headers("tools/call", Some("echo")) {
            b = b.header(n, v);
        }
        b.body(Full::new(Bytes::from(body))).unwrap()
    };
    let body = || {
        rpc(
            1,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "mounted"}}),
        )
    };
    for (uri, host) in [
        ("/some/prefix/mcp", Some("127.0.0.1:8080")),
        ("http://localhost/some/prefix/mcp", None),
    ] {
        let response = tower_service::Service::call(&mut service, request(uri, host, body()))
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{uri}");
        assert_eq!(response.headers()["content-type"], "application/json");
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        validate_emitted(&v, Some("tools/call"));
        assert_eq!(v["result"]["content"][0]["text"], "mounted");
        assert_eq!(
            v["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            "mounted"
        );
    }
    // The mounted service applies the same host policy.
    let response = tower_service::Service::call(
        &mut service,
        request("/some/prefix/mcp", Some("evil.example.com"), body()),
    )
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn the_configured_principal_header_reaches_the_handler_whatever_its_case() {
    let s = start_with(HttpConfig {
        principal_header: Some("X-Authenticated-User".into()),
        ..HttpConfig::default()
    })
    .await;
    let mut headers = standard_headers("tools/call", Some("whoami"));
    headers.push(("x-authenticated-user".to_owned(), "alice".to_owned()));
    let a = post(s.addr, &headers, rpc(1, "tools/call", json!({"name": "whoami"}))).await;
    let v = a.json(Some("tools/call"));
    assert_eq!(
        v["result"]["content"][0]["text"],
        json!("principal: Some(\"alice\")"),
        "{v}"
    );
    let (_, v) = call(s.addr, 2, "tools/call", Some("whoami"), json!({"name": "whoami"})).await;
    assert_eq!(v["result"]["content"][0]["text"], json!("principal: None"), "{v}");
    // Twice (the client's own, then a proxy's added after it): neither is taken.
    headers.push(("X-Authenticated-User".to_owned(), "mallory".to_owned()));
    let a = post(s.addr, &headers, rpc(3, "tools/call", json!({"name": "whoami"}))).await;
    let v = assert_error(&a, None, StatusCode::BAD_REQUEST, -32600, None);
    assert!(
        v["error"]["message"].as_str().unwrap().contains("more than once"),
        "{v}"
    );
}

// ---------------------------------------------------------------- hardening

#[tokio::test]
async fn a_standard_header_repeated_with_another_value_is_a_header_mismatch() {
    let s = start().await;
    let echo = |id| rpc(id, "tools/call", json!({"name": "echo", "arguments": {"text": "hi"}}));
    let base = standard_headers("tools/call", Some("echo"));
    let repeated = [
        ("mcp-method", "tools/list"),
        ("mcp-name", "other"),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    for (i, (name, other)) in repeated.into_iter().enumerate() {
        let mut h = base.clone();
        h.push((name.to_owned(), other.to_owned()));
        let a = post(s.addr, &h, echo(i as i64)).await;
        let v = assert_error(&a, Some("tools/call"), StatusCode::BAD_REQUEST, -32020, Some(i as i64));
        let message = v["error"]["message"].as_str().unwrap().to_ascii_lowercase();
        assert!(message.contains(&name.to_ascii_lowercase()), "{v}");
    }
    // Mcp-Param-* too.
    let mut h = standard_headers("tools/call", Some("region_echo"));
    h.push(("mcp-param-region".into(), "eu".into()));
    h.push(("Mcp-Param-Region".into(), "us".into()));
    let body = rpc(
        20,
        "tools/call",
        json!({"name": "region_echo", "arguments": {"region": "eu"}}),
    );
    assert_error(
        &post(s.addr, &h, body).await,
        Some("tools/call"),
        StatusCode::BAD_REQUEST,
        -32020,
        Some(20),
    );
    // The same value twice is not a conflict.
    let mut h = base.clone();
    h.push(("mcp-name".into(), " echo".into()));
    let a = post(s.addr, &h, echo(30)).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text);
    assert_eq!(a.json(Some("tools/call"))["result"]["content"][0]["text"], "hi");
}

#[tokio::test]
async fn a_post_without_content_type_is_415_and_not_processed() {
    let s = start().await;
    let before = COUNTED.load(std::sync::atomic::Ordering::SeqCst);
    let body = || rpc(1, "tools/call", json!({"name": "counted"}));
    let no_type = with_header(standard_headers("tools/call", Some("counted")), "content-type", None);
    let a = post(s.addr, &no_type, body()).await;
    assert_eq!(a.status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{}", a.text);
    assert_eq!(error_code(&a.json(None)), -32600);
    for other in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ] {
        let h = with_header(
            standard_headers("tools/call", Some("counted")),
            "content-type",
            Some(other),
        );
        let a = post(s.addr, &h, body()).await;
        assert_eq!(a.status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{other}: {}", a.text);
    }
    assert_eq!(
        COUNTED.load(std::sync::atomic::Ordering::SeqCst),
        before,
        "no rejected call ran"
    );
    let h = with_header(
        standard_headers("tools/call", Some("counted")),
        "content-type",
        Some("application/json; charset=utf-8"),
    );
    let a = post(s.addr, &h, body()).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text);
}

#[tokio::test]
async fn a_request_without_host_is_400() {
    let s = start().await;
    let body = String::from_utf8(rpc(1, "server/discover", json!({}))).unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nMcp-Method: server/discover\r\n\
         MCP-Protocol-Version: {VERSION}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let (status, text) = raw_exchange(s.addr, request.clone()).await;
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("-32600") && text.contains("Host"), "{text}");
    // The same request with a Host is served.
    let with_host = request.replacen("\r\n", &format!("\r\nHost: {}\r\n", s.addr), 1);
    let (status, text) = raw_exchange(s.addr, with_host).await;
    assert_eq!(status, 200, "{text}");
}
