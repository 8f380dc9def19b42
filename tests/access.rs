//! Scopes per primitive, and identity in handlers, without an
//! authorization server: a verifier of this test's own maps fixed tokens
//! to scopes (the real verifiers meet a real authorization server in
//! `tests/auth.rs`). Dynamic entries, resources, templates and prompts
//! carry scopes like tools; hiding can be turned off; on stdio (no token)
//! nothing is checked and `Identity` is empty.

mod support;

use mcp_runtime::auth::{AccessToken, Rejection, ResourceServer, TokenVerifier, VerifyFuture};
use mcp_runtime::prelude::*;
use mcp_runtime::protocol::{Prompt, Resource, ResourceTemplate, Tool};
use mcp_runtime::testing::TestClient;
use mcp_runtime::transport::http::{HttpConfig, HttpServer};
use mcp_runtime::{PromptEntry, ResourceEntry, ToolEntry};
use serde_json::{json, Value};
use std::net::SocketAddr;
use support::http::*;

/// `reader` has tickets:read, `writer` both scopes, `brief` tickets:read
/// for one second; `down` finds the authorization server unreachable;
/// anything else is refused.
struct FixedTokens;

impl TokenVerifier for FixedTokens {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(async move {
            let scopes: &[&str] = match token {
                "reader" | "brief" => &["tickets:read"],
                "writer" => &["tickets:read", "tickets:write"],
                "down" => return Err(Rejection::Unavailable("connection refused".into())),
                _ => return Err(Rejection::Inactive),
            };
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs();
            Ok(std::sync::Arc::new(AccessToken {
                subject: token.to_owned(),
                scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
                // Past its `exp` by 28 s: within the 30 s clock skew allowed
                // (its stream ends 1 to 2 s later, as the seconds fall).
                expires_at: (token == "brief").then_some(now - 28),
                ..AccessToken::default()
            }))
        })
    }
}

/// Who calls.
#[tool]
fn who(identity: Identity, headers: RequestHeaders) -> String {
    format!(
        "{} over {}",
        identity.subject().unwrap_or("nobody"),
        if headers.map().is_some() { "http" } else { "stdio" }
    )
}

fn server() -> Server {
    let tool = |name: &str| -> Tool {
        serde_json::from_value(json!({"name": name, "inputSchema": {"type": "object"}})).unwrap()
    };
    let resource: Resource = serde_json::from_value(json!({"uri": "tickets://all", "name": "all"})).unwrap();
    let prompt: Prompt = serde_json::from_value(json!({"name": "draft"})).unwrap();
    // A note only writers were shown, hidden from everyone now, whose URI
    // the open template of notes serves too.
    let hidden: Resource = serde_json::from_value(json!({"uri": "notes://x", "name": "x"})).unwrap();
    let notes: ResourceTemplate =
        serde_json::from_value(json!({"uriTemplate": "notes://{id}", "name": "notes"})).unwrap();
    Server::builder()
        .empty()
        .resource_entry(
            ResourceEntry::dynamic(hidden, |_, _| async { "x" })
                .scopes(["tickets:write"])
                .visible_if(|_| false),
        )
        .resource_entry(ResourceEntry::dynamic_template(notes, |uri, _| async move { uri }).unwrap())
        .tool::<who>()
        .tool_entry(ToolEntry::dynamic(tool("close"), |_, _| async { "closed" }).scopes(["tickets:write"]))
        .resource_entry(ResourceEntry::dynamic(resource, |_, _| async { "all tickets" }).scopes(["tickets:write"]))
        .prompt_entry(
            PromptEntry::dynamic(prompt, |_, _| async { String::from("Dear customer,") }).scopes(["tickets:write"]),
        )
        .build()
        .unwrap()
}

async fn serve(hide: bool) -> SocketAddr {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let config = HttpConfig {
        auth: Some(ResourceServer::new(resource, "https://as.example", FixedTokens).hide_unauthorized(hide)),
        ..HttpConfig::default()
    };
    let http = HttpServer::bind(server(), &format!("127.0.0.1:{port}"), config)
        .await
        .unwrap();
    let addr = http.local_addr().unwrap();
    tokio::spawn(http.serve_until(std::future::pending()));
    addr
}

async fn ask(addr: SocketAddr, token: &str, method: &str, name: Option<&str>, mut params: Value) -> Answer {
    params["_meta"] = support::meta_with(json!({}));
    let bearer = format!("Bearer {token}");
    let headers = with_header(standard_headers(method, name), "authorization", Some(&bearer));
    post(addr, &headers, rpc(1, method, params)).await
}

/// Opens a `subscriptions/listen` stream with `token`.
async fn listen(addr: SocketAddr, token: &str, id: i64, notifications: Value) -> Sse {
    let mut conn = connect(addr).await;
    let bearer = format!("Bearer {token}");
    let headers = with_header(
        standard_headers("subscriptions/listen", None),
        "authorization",
        Some(&bearer),
    );
    let params = json!({"notifications": notifications, "_meta": support::meta_with(json!({}))});
    let request = build(
        addr,
        hyper::Method::POST,
        "/mcp",
        &headers,
        rpc(id, "subscriptions/listen", params),
    );
    let response = conn.send(request).await;
    Sse::open(response, "subscriptions/listen", conn)
}

/// Asks as `reader` for an item that needs tickets:write: 403, -32600,
/// and the `insufficient_scope` challenge.
async fn refused(addr: SocketAddr, method: &str, name: &str, params: Value) {
    let a = ask(addr, "reader", method, Some(name), params).await;
    assert_error(&a, Some(method), hyper::StatusCode::FORBIDDEN, -32600, Some(1));
    let challenge = a.headers["www-authenticate"].to_str().unwrap();
    assert!(challenge.contains("error=\"insufficient_scope\""), "{challenge}");
    assert!(challenge.contains("scope=\"tickets:write\""), "{challenge}");
}

async fn names(addr: SocketAddr, token: &str, method: &str, key: &str, field: &str) -> Vec<String> {
    let a = ask(addr, token, method, None, json!({})).await;
    assert_eq!(a.status, 200, "{}", a.text);
    a.json(Some(method))["result"][key]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t[field].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn dynamic_entries_resources_and_prompts_carry_scopes() {
    let addr = serve(true).await;
    assert_eq!(names(addr, "reader", "tools/list", "tools", "name").await, ["who"]);
    assert_eq!(
        names(addr, "writer", "tools/list", "tools", "name").await,
        ["close", "who"]
    );
    assert!(names(addr, "reader", "resources/list", "resources", "uri")
        .await
        .is_empty());
    assert!(names(addr, "reader", "prompts/list", "prompts", "name")
        .await
        .is_empty());
    assert_eq!(
        names(addr, "writer", "prompts/list", "prompts", "name").await,
        ["draft"]
    );

    refused(addr, "tools/call", "close", json!({"name": "close", "arguments": {}})).await;
    refused(addr, "resources/read", "tickets://all", json!({"uri": "tickets://all"})).await;
    refused(addr, "prompts/get", "draft", json!({"name": "draft"})).await;

    let who = ask(
        addr,
        "writer",
        "tools/call",
        Some("who"),
        json!({"name": "who", "arguments": {}}),
    )
    .await;
    assert_eq!(
        who.json(Some("tools/call"))["result"]["content"][0]["text"],
        "writer over http"
    );
    let bad = ask(addr, "forged", "tools/list", None, json!({})).await;
    assert_eq!(bad.status, 401);
}

/// A browser client of an allowed origin gets its preflight answered with
/// no token (a browser sends none with it), and can read a refusal's
/// `WWW-Authenticate` to discover where to get one, and the metadata.
#[tokio::test]
async fn a_browser_client_discovers_authorization_across_origins() {
    let addr = serve(true).await;
    let page = "http://localhost:5173";
    let header = |a: &Answer, name: &str| a.headers.get(name).map(|v| v.to_str().unwrap().to_owned());
    let preflight = [
        ("origin".to_owned(), page.to_owned()),
        ("access-control-request-method".to_owned(), "POST".to_owned()),
        (
            "access-control-request-headers".to_owned(),
            "authorization, content-type".to_owned(),
        ),
    ];
    let a = exchange(addr, hyper::Method::OPTIONS, &preflight, Vec::new()).await;
    assert_eq!(a.status, 204, "{}", a.text);
    assert_eq!(header(&a, "access-control-allow-origin").as_deref(), Some(page));

    let headers = with_header(standard_headers("tools/list", None), "origin", Some(page));
    let a = post(addr, &headers, rpc(1, "tools/list", json!({}))).await;
    assert_eq!(a.status, 401, "{}", a.text);
    assert_eq!(header(&a, "access-control-allow-origin").as_deref(), Some(page));
    assert!(header(&a, "www-authenticate").is_some_and(|w| w.contains("resource_metadata")));
    assert!(header(&a, "access-control-expose-headers").is_some_and(|h| h.contains("www-authenticate")));

    let origin = [("origin".to_owned(), page.to_owned())];
    let mut conn = connect(addr).await;
    let metadata = build(
        addr,
        hyper::Method::GET,
        "/.well-known/oauth-protected-resource/mcp",
        &origin,
        Vec::new(),
    );
    let a = read_all(conn.send(metadata).await).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(header(&a, "access-control-allow-origin").as_deref(), Some(page));
    let varies = |a: &Answer| a.headers.get_all("vary").iter().filter(|v| *v == "origin").count();
    assert_eq!(varies(&a), 1, "{:?}", a.headers);
    // Asked without an Origin, the metadata says a page's answer differs, so
    // that a cache in between does not hand this one to a page.
    let metadata = build(
        addr,
        hyper::Method::GET,
        "/.well-known/oauth-protected-resource/mcp",
        &[],
        Vec::new(),
    );
    let a = read_all(conn.send(metadata).await).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(header(&a, "access-control-allow-origin"), None);
    assert_eq!(varies(&a), 1, "{:?}", a.headers);
}

#[tokio::test]
async fn hiding_can_be_turned_off_and_calls_are_still_refused() {
    let addr = serve(false).await;
    assert_eq!(
        names(addr, "reader", "tools/list", "tools", "name").await,
        ["close", "who"]
    );
    let close = ask(
        addr,
        "reader",
        "tools/call",
        Some("close"),
        json!({"name": "close", "arguments": {}}),
    )
    .await;
    assert_eq!(close.status, 403, "{}", close.text);
}

#[tokio::test]
async fn without_a_token_nothing_is_checked_and_identity_is_empty() {
    let client = TestClient::new(&server());
    assert_eq!(
        client.call_tool("who", json!({})).await.unwrap().text(),
        "nobody over stdio"
    );
    assert_eq!(client.call_tool("close", json!({})).await.unwrap().text(), "closed");
}

/// A yes or no.
#[mcp_runtime::form]
struct Go {
    /// Go ahead?
    confirm: bool,
}

/// Asks the caller to confirm.
#[tool]
fn confirm(input: Input) -> Flow<String> {
    let ok = input
        .elicit::<Go>("ok", "Go ahead?")?
        .accepted()
        .is_some_and(|g| g.confirm);
    Ok(format!("confirmed: {ok}"))
}

#[tokio::test]
async fn request_state_is_bound_to_the_tokens_subject() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = HttpConfig {
        auth: Some(ResourceServer::new(
            format!("http://127.0.0.1:{port}/mcp"),
            "https://as.example",
            FixedTokens,
        )),
        ..HttpConfig::default()
    };
    let server = Server::builder().empty().tool::<confirm>().build().unwrap();
    let http = HttpServer::bind(server, &format!("127.0.0.1:{port}"), config)
        .await
        .unwrap();
    let addr = http.local_addr().unwrap();
    tokio::spawn(http.serve_until(std::future::pending()));
    let call = |token: &'static str, extra: Value| async move {
        let mut params = json!({"name": "confirm", "arguments": {}});
        if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
            p.extend(e.clone());
        }
        params["_meta"] = support::meta_with(json!({"elicitation": {}}));
        let bearer = format!("Bearer {token}");
        let headers = with_header(
            standard_headers("tools/call", Some("confirm")),
            "authorization",
            Some(&bearer),
        );
        post(addr, &headers, rpc(1, "tools/call", params)).await
    };
    let first = call("reader", json!({})).await.json(Some("tools/call"));
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let retry = json!({
        "requestState": first["result"]["requestState"],
        "inputResponses": {"ok": {"action": "accept", "content": {"confirm": true}}},
    });
    let stolen = call("writer", retry.clone()).await;
    assert_eq!(stolen.status, 400, "another subject cannot resume it: {}", stolen.text);
    let own = call("reader", retry).await.json(Some("tools/call"));
    assert_eq!(own["result"]["resultType"], "complete", "{own}");
}

#[tokio::test]
async fn the_metadata_is_public_and_malformed_credentials_are_400() {
    let addr = serve(true).await;
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let mut conn = connect(addr).await;
        let doc = read_all(conn.send(build(addr, hyper::Method::GET, path, &[], vec![])).await).await;
        assert_eq!(doc.status, 200, "{path}: {}", doc.text);
        let doc: Value = serde_json::from_str(&doc.text).unwrap();
        assert_eq!(doc["authorization_servers"], json!(["https://as.example"]));
        let mut conn = connect(addr).await;
        let post = read_all(conn.send(build(addr, hyper::Method::POST, path, &[], vec![])).await).await;
        assert_eq!(post.status, 405, "{path}");
    }
    let list = |auth: &'static str| async move {
        let headers = with_header(standard_headers("tools/list", None), "authorization", Some(auth));
        post(
            addr,
            &headers,
            rpc(1, "tools/list", json!({"_meta": support::meta_with(json!({}))})),
        )
        .await
    };
    let basic = list("Basic dXNlcjpwdw==").await;
    assert_eq!(basic.status, 401, "another scheme is no token");
    assert!(!basic.headers["www-authenticate"].to_str().unwrap().contains("error="));
    let malformed = list("Bearer two words").await;
    assert_eq!(malformed.status, 400, "{}", malformed.text);
    assert!(malformed.headers["www-authenticate"]
        .to_str()
        .unwrap()
        .contains("error=\"invalid_request\""));
}

#[tokio::test]
async fn a_legacy_session_belongs_to_the_subject_that_opened_it() {
    let addr = serve(true).await;
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                      "clientInfo": {"name": "t", "version": "1"}});
    let headers = |token: &str| {
        let mut h = vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            ("accept".to_owned(), "application/json, text/event-stream".to_owned()),
        ];
        h.push(("authorization".to_owned(), format!("Bearer {token}")));
        h
    };
    let opened = post(addr, &headers("reader"), rpc_raw(1, "initialize", Some(init))).await;
    assert_eq!(opened.status, 200, "{}", opened.text);
    let id = opened.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let in_session = |token: &str| {
        let mut h = headers(token);
        h.push(("mcp-session-id".to_owned(), id.clone()));
        h.push(("mcp-protocol-version".to_owned(), "2025-11-25".to_owned()));
        h
    };
    let own = post(addr, &in_session("reader"), rpc_raw(2, "tools/list", None)).await;
    assert_eq!(own.status, 200, "{}", own.text);
    let other = post(addr, &in_session("writer"), rpc_raw(3, "tools/list", None)).await;
    assert_eq!(
        other.status, 404,
        "another subject is told the session does not exist: {}",
        other.text
    );
    let delete = exchange(addr, hyper::Method::DELETE, &in_session("writer"), vec![]).await;
    assert_eq!(delete.status, 404, "nor can it end it");
    let still = post(addr, &in_session("reader"), rpc_raw(4, "tools/list", None)).await;
    assert_eq!(still.status, 200, "{}", still.text);
}

#[tokio::test]
async fn an_unreachable_authorization_server_is_503_and_a_stream_ends_with_its_token() {
    let addr = serve(true).await;
    let down = ask(addr, "down", "tools/list", None, json!({})).await;
    assert_eq!(down.status, 503, "{}", down.text);

    let notifications = json!({"toolsListChanged": true});
    let mut stream = listen(addr, "brief", 5, notifications).await;
    assert_eq!(
        stream.next().await["method"],
        "notifications/subscriptions/acknowledged"
    );
    let started = std::time::Instant::now();
    let done = stream
        .next_within(std::time::Duration::from_secs(5))
        .await
        .expect("the final result");
    assert_eq!(done["id"], 5, "{done}");
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert!(
        started.elapsed() <= std::time::Duration::from_secs(3),
        "ended when the token expired"
    );
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(500),
        "a token within the clock skew allowed does not end its stream at once"
    );
}

#[tokio::test]
async fn a_listen_stream_agrees_only_to_resources_the_token_reaches() {
    let addr = serve(true).await;
    let notifications = json!({"resourceSubscriptions": ["tickets://all"], "toolsListChanged": true});
    let mut stream = listen(addr, "reader", 6, notifications).await;
    let ack = stream.next().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true}),
        "{ack}"
    );
    // The scopes weighed are those of the resource the caller is shown (the
    // open template), not those of one hidden from it (the writers' note):
    // the reader may read notes://x, so it is agreed to.
    let read = ask(
        addr,
        "reader",
        "resources/read",
        Some("notes://x"),
        json!({"uri": "notes://x"}),
    )
    .await;
    assert_eq!(read.status, 200, "{}", read.text);
    let notes = json!({"resourceSubscriptions": ["notes://x"]});
    let mut stream = listen(addr, "reader", 7, notes).await;
    let ack = stream.next().await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({"resourceSubscriptions": ["notes://x"]}),
        "{ack}"
    );
}
