//! Resources, templates, prompts, completion and subscriptions over stdio,
//! every message validated against the official schema.

mod support;

use mcp_runtime::prelude::*;
use mcp_runtime::protocol::{GetPromptResult, ResultMeta, Tool};
use mcp_runtime::ToolEntry;
use serde_json::{json, Value};
use support::StdioClient;

/// A ticket priority.
#[mcp_runtime::schema]
#[derive(Debug)]
#[serde(rename_all = "lowercase")]
enum Priority {
    Low,
    High,
}

/// The project's readme.
#[resource(
    uri = "docs://readme",
    mime_type = "text/markdown",
    ttl_ms = 5000,
    cache_scope = "public"
)]
fn readme() -> &'static str {
    "# Readme"
}

/// The logo.
#[resource(uri = "docs://logo", mime_type = "image/png")]
fn logo() -> Blob {
    Blob(vec![0x89, b'P', b'N', b'G'])
}

/// A ticket by number; only 1 to 9 exist.
#[resource(uri_template = "tickets://{id}", mime_type = "application/json")]
fn ticket(id: u64) -> Option<Json<Value>> {
    (1..10).contains(&id).then(|| Json(json!({"id": id})))
}

/// Tickets by priority.
#[resource(uri_template = "tickets://by-priority/{priority}")]
fn by_priority(priority: Priority) -> String {
    format!("{priority:?} tickets")
}

/// A file below the docs folder.
#[resource(uri_template = "files://{+path}")]
fn file(path: String) -> String {
    format!("file {path}")
}

/// Asks for a review.
#[prompt(title = "Code review")]
fn review(
    /// The code to review.
    code: String,
    /// The language it is written in.
    #[complete(with = languages)]
    language: Option<String>,
    /// How urgent it is.
    urgency: Option<Priority>,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(format!(
            "Review this {} code ({urgency:?}):",
            language.as_deref().unwrap_or("unknown")
        )),
        PromptMessage::user(code),
    ]
}

/// A greeting whose result carries metadata of its own.
#[prompt]
fn welcome() -> GetPromptResult {
    let mut meta = ResultMeta::default();
    meta.other.insert("example.com/source".into(), json!("handbook"));
    GetPromptResult {
        messages: vec![PromptMessage::user("Welcome aboard.")],
        meta: Some(meta),
        ..GetPromptResult::default()
    }
}

fn languages(prefix: &str) -> Vec<String> {
    assert_ne!(prefix, "boom", "a completion function that panics");
    ["rust", "ruby", "python"]
        .iter()
        .filter(|l| l.starts_with(prefix))
        .map(|l| l.to_string())
        .collect()
}

/// A tool, so that tool-list changes can be observed.
#[tool]
fn noop() {}

fn client() -> (StdioClient, Server) {
    let server = Server::builder().build().expect("the server builds");
    (StdioClient::start(server.clone()), server)
}

fn code(v: &Value) -> i64 {
    v["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {v}"))
}

#[tokio::test]
async fn discover_declares_what_is_served() {
    let (mut c, _) = client();
    let caps = c.call(1, "server/discover", json!({})).await["result"]["capabilities"].clone();
    assert_eq!(caps["resources"], json!({"listChanged": true, "subscribe": true}));
    assert_eq!(caps["prompts"], json!({"listChanged": true}));
    assert_eq!(caps["completions"], json!({}));
    // A request may ask for log messages (`io.modelcontextprotocol/logLevel`).
    assert_eq!(caps["logging"], json!({}));
    c.close().await.unwrap();
}

#[tokio::test]
async fn resources_list_read_and_templates() {
    let (mut c, _) = client();
    let list = c.call(1, "resources/list", json!({})).await;
    let uris: Vec<&str> = list["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["docs://logo", "docs://readme"]);
    assert_eq!(list["result"]["resources"][1]["description"], "The project's readme.");

    let templates = c.call(2, "resources/templates/list", json!({})).await;
    let t: Vec<&str> = templates["result"]["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uriTemplate"].as_str().unwrap())
        .collect();
    assert_eq!(
        t,
        ["files://{+path}", "tickets://by-priority/{priority}", "tickets://{id}"]
    );

    let read = c.call(3, "resources/read", json!({"uri": "docs://readme"})).await;
    assert_eq!(
        read["result"]["contents"],
        json!([{"uri": "docs://readme", "mimeType": "text/markdown", "text": "# Readme"}])
    );
    assert_eq!(read["result"]["ttlMs"], 5000);
    assert_eq!(read["result"]["cacheScope"], "public");

    let blob = c.call(4, "resources/read", json!({"uri": "docs://logo"})).await;
    assert_eq!(blob["result"]["contents"][0]["blob"], "iVBORw==");
    assert_eq!(blob["result"]["cacheScope"], "private");

    let t = c.call(5, "resources/read", json!({"uri": "tickets://7"})).await;
    assert_eq!(t["result"]["contents"][0]["text"], r#"{"id":7}"#);
    let p = c
        .call(6, "resources/read", json!({"uri": "tickets://by-priority/high"}))
        .await;
    assert_eq!(p["result"]["contents"][0]["text"], "High tickets");
    let f = c
        .call(7, "resources/read", json!({"uri": "files://guide/intro.md"}))
        .await;
    assert_eq!(f["result"]["contents"][0]["text"], "file guide/intro.md");
    c.close().await.unwrap();
}

#[tokio::test]
async fn unknown_or_invalid_resources_are_invalid_params_with_the_uri() {
    let (mut c, _) = client();
    for (id, uri) in [
        (1, "docs://nope"),
        (2, "tickets://42"),
        (3, "tickets://abc"),
        (4, "tickets://by-priority/urgent"),
        (5, "files://../etc/passwd"),
        (6, "files://a/%2e%2e/b"),
        // An absolute path would replace the base a handler joins it to.
        (7, "files:///etc/passwd"),
        (8, "files://%2Fetc%2Fpasswd"),
        (9, "files://C:%5Cwindows%5Cwin.ini"),
    ] {
        let v = c.call(id, "resources/read", json!({"uri": uri})).await;
        assert_eq!(code(&v), -32602, "{uri}: {v}");
        assert_eq!(v["error"]["data"]["uri"], uri);
    }
    c.close().await.unwrap();
}

#[tokio::test]
async fn prompts_list_and_get() {
    let (mut c, _) = client();
    let list = c.call(1, "prompts/list", json!({})).await;
    let p = &list["result"]["prompts"][0];
    assert_eq!(p["name"], "review");
    assert_eq!(p["title"], "Code review");
    assert_eq!(
        p["arguments"],
        json!([
            {"name": "code", "description": "The code to review.", "required": true},
            {"name": "language", "description": "The language it is written in.", "required": false},
            {"name": "urgency", "description": "How urgent it is.", "required": false}
        ])
    );
    let v = c
        .call(
            2,
            "prompts/get",
            json!({"name": "review", "arguments": {"code": "fn main() {}", "language": "rust", "urgency": "high"}}),
        )
        .await;
    let messages = v["result"]["messages"].as_array().unwrap();
    assert_eq!(messages[0]["content"]["text"], "Review this rust code (Some(High)):");
    assert_eq!(messages[1]["content"]["text"], "fn main() {}");

    let missing = c
        .call(3, "prompts/get", json!({"name": "review", "arguments": {}}))
        .await;
    assert_eq!(code(&missing), -32602);
    assert!(missing["error"]["message"].as_str().unwrap().contains("`code`"));
    let bad = c
        .call(
            4,
            "prompts/get",
            json!({"name": "review", "arguments": {"code": "x", "urgency": "asap"}}),
        )
        .await;
    assert_eq!(code(&bad), -32602);
    let unknown = c.call(5, "prompts/get", json!({"name": "nope"})).await;
    assert_eq!(code(&unknown), -32602);
    // The handler's `_meta` and the server's are one member (the client
    // checks that the line is the object it parses to, member for member).
    let welcome = c.call(6, "prompts/get", json!({"name": "welcome"})).await;
    assert_eq!(welcome["result"]["_meta"]["example.com/source"], "handbook");
    assert!(welcome["result"]["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());
    c.close().await.unwrap();
}

#[tokio::test]
async fn completion_uses_custom_functions_and_enum_variants() {
    let (mut c, _) = client();
    let complete = |reference: Value, name: &str, value: &str| json!({"ref": reference, "argument": {"name": name, "value": value}});
    let v = c
        .call(
            1,
            "completion/complete",
            complete(json!({"type": "ref/prompt", "name": "review"}), "language", "ru"),
        )
        .await;
    assert_eq!(
        v["result"]["completion"],
        json!({"values": ["rust", "ruby"], "total": 2, "hasMore": false})
    );
    let v = c
        .call(
            2,
            "completion/complete",
            complete(json!({"type": "ref/prompt", "name": "review"}), "urgency", "h"),
        )
        .await;
    assert_eq!(v["result"]["completion"]["values"], json!(["high"]));
    let v = c
        .call(
            3,
            "completion/complete",
            complete(
                json!({"type": "ref/resource", "uri": "tickets://by-priority/{priority}"}),
                "priority",
                "",
            ),
        )
        .await;
    assert_eq!(v["result"]["completion"]["values"], json!(["low", "high"]));
    let v = c
        .call(
            4,
            "completion/complete",
            complete(json!({"type": "ref/prompt", "name": "review"}), "code", "x"),
        )
        .await;
    assert_eq!(v["result"]["completion"]["values"], json!([]));
    let v = c
        .call(
            5,
            "completion/complete",
            complete(json!({"type": "ref/prompt", "name": "nope"}), "x", ""),
        )
        .await;
    assert_eq!(code(&v), -32602);
    c.close().await.unwrap();
}

#[tokio::test]
async fn a_panicking_completion_function_is_an_internal_error_and_the_server_lives_on() {
    let (mut c, _) = client();
    let complete = |value: &str| json!({"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": "language", "value": value}});
    let v = c.call(1, "completion/complete", complete("boom")).await;
    assert_eq!(code(&v), -32603, "{v}");
    assert_eq!(v["id"], 1);
    let v = c.call(2, "completion/complete", complete("py")).await;
    assert_eq!(v["result"]["completion"]["values"], json!(["python"]), "{v}");
    c.close().await.unwrap();
}

#[tokio::test]
async fn crafted_cursors_are_invalid_params_or_a_valid_page_never_a_panic() {
    let server = Server::builder()
        .page_size(usize::MAX)
        .build()
        .expect("the server builds");
    let mut c = StdioClient::start(server);
    // A cursor the server could have issued, with a page size that overflows an offset sum.
    let v = c.call(1, "tools/list", json!({"cursor": "o1"})).await;
    assert!(v["result"]["tools"].is_array(), "{v}");
    assert!(v["result"].get("nextCursor").is_none(), "{v}");
    for (id, bad) in [
        (2, "o+1"),
        (3, "o-1"),
        (4, "o"),
        (5, "o18446744073709551616"),
        (6, "o99999"),
        (7, "x1"),
    ] {
        let v = c.call(id, "tools/list", json!({"cursor": bad})).await;
        assert_eq!(code(&v), -32602, "{bad}: {v}");
    }
    c.close().await.unwrap();
}

#[tokio::test]
async fn subscriptions_acknowledge_then_deliver_only_what_was_asked() {
    let (mut c, server) = client();
    c.send(
        1,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["docs://readme"]}}),
    )
    .await;
    let ack = c.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 1);
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["docs://readme"]})
    );

    // A prompt change is not asked for; a resource update of another URI neither.
    server.notify_resource_updated("docs://logo");
    let tool = Tool {
        name: "late".into(),
        input_schema: json!({"type": "object"}),
        ..Default::default()
    };
    server
        .add_tool(ToolEntry::dynamic(tool, |_a, _c| async { "late" }))
        .unwrap();
    server.notify_resource_updated("docs://readme");
    let first = c.recv().await;
    assert_eq!(first["method"], "notifications/tools/list_changed");
    assert_eq!(first["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 1);
    let second = c.recv().await;
    assert_eq!(second["method"], "notifications/resources/updated");
    assert_eq!(second["params"]["uri"], "docs://readme");
    let names: Vec<Value> = c.call(2, "tools/list", json!({})).await["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, [json!("late"), json!("noop")]);

    // Cancelling the listen request ends the subscription: no more events.
    c.send_raw(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#)
        .await;
    let watched = server.clone();
    support::eventually("the cancelled listener is gone", move || watched.listener_count() == 0).await;
    c.close().await.unwrap();
}

#[tokio::test]
async fn end_of_input_closes_open_subscriptions() {
    let (mut c, server) = client();
    c.send(
        1,
        "subscriptions/listen",
        json!({"notifications": {"promptsListChanged": true}}),
    )
    .await;
    let _ack = c.recv().await;
    assert_eq!(server.listener_count(), 1);
    c.close().await.unwrap();
}
