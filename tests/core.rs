//! The 2026-07-28 core over stdio with raw JSON lines: framing errors,
//! `_meta` validation, discovery, listing, calling. Every message read is
//! validated against the official schema by the support client.

mod support;

use mcp_runtime::prelude::*;
use serde_json::{json, Value};
use support::{meta_with, StdioClient};

/// A point on a plane.
#[mcp_runtime::schema]
struct Point {
    /// Horizontal coordinate.
    x: f64,
    /// Vertical coordinate.
    y: f64,
}

/// Echoes its text.
#[tool(read_only)]
fn echo(text: String) -> String {
    text
}

/// Returns the midpoint of two points.
#[tool]
async fn midpoint(a: Point, b: Point) -> Json<Point> {
    Json(Point {
        x: (a.x + b.x) / 2.0,
        y: (a.y + b.y) / 2.0,
    })
}

/// Always fails as a tool.
#[tool]
fn refuse() -> Result<String, String> {
    Err("no, thank you".into())
}

/// Panics.
#[tool]
fn explode() -> String {
    panic!("boom")
}

/// Lists numbers.
#[tool]
fn numbers() -> Json<Vec<u32>> {
    Json(vec![1, 2, 3])
}

/// Reads the context.
#[tool]
fn whoami(ctx: Context) -> String {
    format!(
        "{} via {}",
        ctx.client_info().map(|c| c.name.as_str()).unwrap_or("?"),
        ctx.protocol_version()
    )
}

fn client() -> StdioClient {
    StdioClient::start(
        Server::builder()
            .name("core-test")
            .version("9.9.9")
            .build()
            .expect("the server builds"),
    )
}

fn error_code(v: &Value) -> i64 {
    v["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {v}"))
}

/// A `#[tool]`'s schemas are built when a list or a call first needs them,
/// unless they may declare header parameters, which the server's build
/// checks: a parameter of a type of the user's (whose schema may say so)
/// makes the difference, a standard scalar or string does not.
#[test]
fn a_schema_is_built_at_start_up_only_when_it_may_declare_headers() {
    use mcp_runtime::__private::RegisteredTool;
    assert!(!<echo as RegisteredTool>::DEF.check_schema);
    assert!(!<numbers as RegisteredTool>::DEF.check_schema);
    assert!(<midpoint as RegisteredTool>::DEF.check_schema);
}

#[tokio::test]
async fn malformed_json_is_a_parse_error_with_null_id_and_the_server_keeps_reading() {
    let mut c = client();
    c.send_raw("{not json").await;
    let v = c.recv().await;
    assert_eq!(error_code(&v), -32700);
    assert!(v.get("id").is_none(), "an unreadable id is left out: {v}");
    let ok = c.call(1, "server/discover", json!({})).await;
    assert!(ok["result"].is_object());
    c.close().await.unwrap();
}

#[tokio::test]
async fn invalid_requests_are_rejected_with_the_id_echoed_when_readable() {
    let mut c = client();
    let cases = [
        (r#"[1,2]"#, Value::Null),
        (r#""hello""#, Value::Null),
        (r#"{"jsonrpc":"1.0","id":7,"method":"server/discover"}"#, json!(7)),
        (r#"{"jsonrpc":"2.0","id":8,"method":42}"#, json!(8)),
        (
            r#"{"jsonrpc":"2.0","id":"s","method":"tools/list","params":[1]}"#,
            json!("s"),
        ),
        (r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#, Value::Null),
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#, Value::Null),
        (r#"{"jsonrpc":"2.0","id":9}"#, json!(9)),
    ];
    for (line, id) in cases {
        c.send_raw(line).await;
        let v = c.recv().await;
        assert_eq!(error_code(&v), -32600, "for {line}: {v}");
        assert_eq!(v.get("id").cloned().unwrap_or(Value::Null), id, "for {line}");
    }
    c.close().await.unwrap();
}

#[tokio::test]
async fn meta_is_required_on_every_request() {
    let mut c = client();
    let no_version = json!({"io.modelcontextprotocol/clientCapabilities": {}});
    let no_caps = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    for (id, params) in [
        (1, json!(null)),
        (2, json!({"_meta": no_version})),
        (3, json!({"_meta": no_caps})),
        (4, json!({"_meta": "nope"})),
        (5, json!({"_meta": meta_with(json!(5))})),
    ] {
        let line = if params.is_null() {
            json!({"jsonrpc":"2.0","id":id,"method":"tools/list"}).to_string()
        } else {
            json!({"jsonrpc":"2.0","id":id,"method":"tools/list","params":params}).to_string()
        };
        c.send_raw(&line).await;
        let v = c.recv().await;
        assert_eq!(error_code(&v), -32602, "{v}");
        assert_eq!(v["id"], json!(id));
    }
    // clientInfo is optional.
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let v = c.call(6, "server/discover", json!({"_meta": meta})).await;
    assert!(v["result"].is_object(), "{v}");
    c.close().await.unwrap();
}

#[tokio::test]
async fn unsupported_version_lists_the_supported_ones() {
    let mut c = client();
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "v999.0.0",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let v = c.call(1, "server/discover", json!({"_meta": meta})).await;
    assert_eq!(error_code(&v), -32022);
    assert_eq!(v["error"]["data"]["requested"], "v999.0.0");
    assert_eq!(v["error"]["data"]["supported"], json!(["2026-07-28"]));
    c.close().await.unwrap();
}

#[tokio::test]
async fn unknown_and_removed_methods_are_method_not_found() {
    let mut c = client();
    for (id, method) in [
        (1, "unknown/method"),
        (2, "initialize"),
        (3, "ping"),
        (4, "logging/setLevel"),
        (5, "resources/subscribe"),
    ] {
        let v = c.call(id, method, json!({})).await;
        assert_eq!(error_code(&v), -32601, "{method}: {v}");
    }
    c.close().await.unwrap();
}

#[tokio::test]
async fn discover_derives_capabilities_and_identifies_the_server() {
    let mut c = client();
    let v = c.call(1, "server/discover", json!({})).await;
    let r = &v["result"];
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["supportedVersions"], json!(["2026-07-28"]));
    assert!(r["capabilities"]["tools"].is_object());
    assert!(r["capabilities"].get("prompts").is_none());
    assert_eq!(
        r["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "core-test", "version": "9.9.9"})
    );
    assert!(r["ttlMs"].is_u64());
    assert_eq!(r["cacheScope"], "public");
    c.close().await.unwrap();
}

#[tokio::test]
async fn a_server_without_tools_has_no_tools_capability_and_no_tools_methods() {
    let mut c = StdioClient::start(Server::builder().empty().build().expect("the server builds"));
    let v = c.call(1, "server/discover", json!({})).await;
    assert!(v["result"]["capabilities"].get("tools").is_none(), "{v}");
    assert_eq!(error_code(&c.call(2, "tools/list", json!({})).await), -32601);
    assert_eq!(
        error_code(&c.call(3, "tools/call", json!({"name": "echo"})).await),
        -32601
    );
    c.close().await.unwrap();
}

#[tokio::test]
async fn tools_list_is_sorted_paginated_and_cacheable() {
    let mut c = StdioClient::start(Server::builder().page_size(4).build().expect("the server builds"));
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    for id in 1..10 {
        let params = match &cursor {
            Some(cur) => json!({"cursor": cur}),
            None => json!({}),
        };
        let v = c.call(id, "tools/list", params).await;
        let r = &v["result"];
        assert_eq!(r["ttlMs"], 300000);
        assert_eq!(r["cacheScope"], "public");
        names.extend(
            r["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_owned()),
        );
        match r.get("nextCursor") {
            Some(next) => cursor = Some(next.as_str().unwrap().to_owned()),
            None => break,
        }
    }
    assert_eq!(names, ["echo", "explode", "midpoint", "numbers", "refuse", "whoami"]);
    let bad = c.call(20, "tools/list", json!({"cursor": "garbage"})).await;
    assert_eq!(error_code(&bad), -32602);
    c.close().await.unwrap();
}

#[tokio::test]
async fn tools_call_covers_text_json_errors_and_panics() {
    let mut c = client();
    let v = c
        .call(1, "tools/call", json!({"name": "echo", "arguments": {"text": "hi"}}))
        .await;
    assert_eq!(v["result"]["content"], json!([{"type": "text", "text": "hi"}]));
    assert!(v["result"].get("isError").is_none());

    let args = json!({"a": {"x": 0, "y": 0}, "b": {"x": 2, "y": 4}});
    let v = c
        .call(2, "tools/call", json!({"name": "midpoint", "arguments": args}))
        .await;
    assert_eq!(v["result"]["structuredContent"], json!({"x": 1.0, "y": 2.0}));
    assert_eq!(v["result"]["content"][0]["text"], r#"{"x":1.0,"y":2.0}"#);

    let v = c.call(3, "tools/call", json!({"name": "numbers"})).await;
    assert_eq!(v["result"]["structuredContent"], json!([1, 2, 3]));

    let v = c
        .call(4, "tools/call", json!({"name": "refuse", "arguments": {}}))
        .await;
    assert_eq!(v["result"]["isError"], true);
    assert_eq!(v["result"]["content"][0]["text"], "no, thank you");

    let v = c
        .call(5, "tools/call", json!({"name": "explode", "arguments": {}}))
        .await;
    assert_eq!(error_code(&v), -32603);
    // The server lives on.
    let v = c
        .call(
            6,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "still here"}}),
        )
        .await;
    assert_eq!(v["result"]["content"][0]["text"], "still here");

    let v = c.call(7, "tools/call", json!({"name": "whoami"})).await;
    assert_eq!(v["result"]["content"][0]["text"], "test-client via 2026-07-28");
    c.close().await.unwrap();
}

#[tokio::test]
async fn argument_errors_are_tool_errors_naming_the_argument() {
    let mut c = client();
    let cases = [
        (
            json!({"name": "echo", "arguments": {}}),
            "missing required argument `text`",
        ),
        (
            json!({"name": "echo", "arguments": {"text": 5}}),
            "argument `text`: invalid type: integer `5`",
        ),
        (
            json!({"name": "echo", "arguments": {"text": "a", "loud": true}}),
            "unknown argument `loud`",
        ),
        (
            json!({"name": "midpoint", "arguments": {"a": {"x": 1}, "b": {"x": 1, "y": 1}}}),
            "argument `a`: missing field `y`",
        ),
        (
            json!({"name": "refuse", "arguments": {"x": 1}}),
            "this tool takes no arguments",
        ),
    ];
    for (i, (params, expected)) in cases.into_iter().enumerate() {
        let v = c.call(i as i64 + 1, "tools/call", params).await;
        assert_eq!(v["result"]["isError"], true, "{v}");
        let text = v["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(expected), "{text:?} should contain {expected:?}");
    }
    c.close().await.unwrap();
}

#[tokio::test]
async fn unknown_tools_and_malformed_call_params_are_protocol_errors() {
    let mut c = client();
    assert_eq!(
        error_code(&c.call(1, "tools/call", json!({"name": "nope"})).await),
        -32602
    );
    assert_eq!(
        error_code(&c.call(2, "tools/call", json!({"arguments": {}})).await),
        -32602
    );
    assert_eq!(
        error_code(&c.call(3, "tools/call", json!({"name": "echo", "arguments": [1]})).await),
        -32602
    );
    c.close().await.unwrap();
}

#[tokio::test]
async fn params_read_in_one_pass_keep_precise_errors_and_escapes() {
    let mut c = client();
    let message = |v: &Value| v["error"]["message"].as_str().unwrap_or_default().to_owned();
    // _meta that is not an object, in any JSON shape.
    for (id, meta) in [(1, json!([1, {"x": 2}])), (2, json!(true)), (3, json!("nope"))] {
        let line = json!({"jsonrpc":"2.0","id":id,"method":"tools/list","params":{"_meta": meta}}).to_string();
        c.send_raw(&line).await;
        let v = c.recv().await;
        assert_eq!(error_code(&v), -32602, "{v}");
        assert!(message(&v).contains("_meta must be an object"), "{v}");
    }
    // Fields of the wrong type are named.
    let v = c.call(4, "tools/call", json!({"name": 5})).await;
    assert_eq!(error_code(&v), -32602);
    assert!(message(&v).contains("name must be a string"), "{v}");
    let v = c
        .call(
            5,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "x"}, "requestState": 7}),
        )
        .await;
    assert_eq!(error_code(&v), -32602);
    assert!(message(&v).contains("requestState must be a string"), "{v}");
    // Escaped strings and escaped keys read as what they spell; unknown _meta keys are ignored.
    let line = r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"ec\u0068o","arguments":{"text":"a\"b"},"_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"vendor.example/trace":[1,{"x":[]}]}}}"#;
    c.send_raw(line).await;
    let v = c.recv().await;
    assert_eq!(v["result"]["content"][0]["text"], json!("a\"b"), "{v}");
    // An integer id beyond i64 cannot be echoed.
    c.send_raw(r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"tools/list"}"#)
        .await;
    let v = c.recv().await;
    assert_eq!(error_code(&v), -32600, "{v}");
    assert!(v.get("id").is_none(), "{v}");
    c.close().await.unwrap();
}
