//! Visibility by predicate: `#[tool(visible_if = f)]` (and on prompts,
//! resources, templates), `ToolEntry::visible_if`, and the server's
//! `ServerBuilder::visible_if` hook decide per request what the caller is
//! shown, from its token's scopes, its request headers, its declared
//! capabilities or its client info. A hidden item is absent from its list
//! (pages cut from what is shown, `cacheScope: "private"`), and a call,
//! read, get or completion of it is answered exactly as one of an unknown
//! item, in both eras. Every message checked is validated against its
//! revision's schema.

mod support;

use mcp_runtime::auth::{AccessToken, Rejection, ResourceServer, TokenVerifier, VerifyFuture};
use mcp_runtime::prelude::*;
use mcp_runtime::protocol::{CacheScope, ClientCapability, Tool};
use mcp_runtime::transport::http::{HttpConfig, HttpServer};
use mcp_runtime::{Item, ToolEntry};
use serde_json::{json, Value};
use std::net::SocketAddr;
use support::http::{build, connect, post, rpc, standard_headers, with_header, Answer, Sse};
use support::{meta_with, names, validate_legacy, StdioClient};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Staff: a token with the `staff` scope, or the `x-role: staff` header.
fn staff(viewer: &Viewer<'_>) -> bool {
    viewer.has_scope("staff") || viewer.header("x-role") == Some("staff")
}

/// Clients that can answer an elicitation.
fn can_elicit(viewer: &Viewer<'_>) -> bool {
    viewer.declares(ClientCapability::Elicitation)
}

/// A predicate with a bug.
fn broken(_: &Viewer<'_>) -> bool {
    panic!("a visibility predicate with a bug")
}

/// Pays everyone.
#[tool(visible_if = staff)]
fn payroll() -> &'static str {
    "paid"
}

/// Pays a bonus: hidden, and scoped too.
#[tool(visible_if = staff, scopes("staff"))]
fn bonus() -> &'static str {
    "bonus paid"
}

/// Says hello to anyone.
#[tool]
fn hello() -> &'static str {
    "hello"
}

/// Asks the user questions.
#[tool(visible_if = can_elicit)]
fn survey() -> &'static str {
    "surveyed"
}

/// Never shown: its predicate panics.
#[tool(visible_if = broken)]
fn fragile() -> &'static str {
    "never"
}

fn languages(prefix: &str) -> Vec<String> {
    ["rust", "ruby"]
        .iter()
        .filter(|l| l.starts_with(prefix))
        .map(|l| l.to_string())
        .collect()
}

/// Asks staff for a review.
#[prompt(visible_if = staff)]
fn review(#[complete(with = languages)] language: String) -> String {
    format!("Review this {language}.")
}

/// Welcomes anyone.
#[prompt]
fn welcome(#[complete(with = languages)] language: String) -> String {
    format!("Welcome, {language} programmer.")
}

/// What everyone earns.
#[resource(uri = "vis://salaries", visible_if = staff)]
fn salaries() -> &'static str {
    "a lot"
}

/// When the office is open.
#[resource(uri = "vis://hours")]
fn hours() -> &'static str {
    "9 to 5"
}

/// A staff note, by id.
#[resource(uri_template = "vis://notes/{id}", visible_if = staff)]
fn note(#[complete(with = languages)] id: String) -> String {
    format!("note {id}")
}

fn tool(name: &str) -> Tool {
    serde_json::from_value(json!({"name": name, "inputSchema": {"type": "object"}})).unwrap()
}

/// Everything above, an `admin_` tool hidden by the server's hook from all
/// but staff, and a dynamic tool shown to one client only.
fn server() -> Server {
    Server::builder()
        .empty()
        .name("visibility")
        .version("1.0.0")
        .tool::<payroll>()
        .tool::<bonus>()
        .tool::<hello>()
        .tool::<survey>()
        .tool::<fragile>()
        .tool_entry(ToolEntry::dynamic(tool("admin_reset"), |_, _| async { "reset" }))
        .tool_entry(
            ToolEntry::dynamic(tool("beta"), |_, _| async { "beta" })
                .visible_if(|viewer| viewer.client_info().is_some_and(|c| c.name == "beta-client")),
        )
        .prompt::<review>()
        .prompt::<welcome>()
        .resource::<salaries>()
        .resource::<hours>()
        .resource::<note>()
        .visible_if(|viewer, item| match item {
            Item::Tool(name) if name.starts_with("admin_") => staff(viewer),
            _ => true,
        })
        .build()
        .unwrap()
}

/// The lists' names, each page checked to say `cacheScope: "private"`.
struct Shown {
    tools: Vec<String>,
    prompts: Vec<String>,
    resources: Vec<String>,
    templates: Vec<String>,
}

const LISTS: [(&str, &str, &str); 4] = [
    ("tools/list", "tools", "name"),
    ("prompts/list", "prompts", "name"),
    ("resources/list", "resources", "uri"),
    ("resources/templates/list", "resourceTemplates", "uriTemplate"),
];

/// The error object of a response, its `name` replaced by `unknown`: what
/// a hidden item's refusal must equal, byte for byte, with an unknown one's.
fn renamed(response: &Value, name: &str, unknown: &str) -> Value {
    let error = response
        .get("error")
        .unwrap_or_else(|| panic!("not an error: {response}"));
    serde_json::from_str(&error.to_string().replace(name, unknown)).unwrap()
}

/// The params of a request naming `target` (a tool, prompt, URI or
/// completion reference) by `method`.
fn naming(method: &str, target: &str) -> Value {
    match method {
        "tools/call" => json!({"name": target, "arguments": {}}),
        "prompts/get" => json!({"name": target, "arguments": {"language": "rust"}}),
        "resources/read" | "resources/subscribe" => json!({"uri": target}),
        "completion/complete" if target.contains("://") => json!({
            "ref": {"type": "ref/resource", "uri": target},
            "argument": {"name": "id", "value": "r"}
        }),
        _ => json!({
            "ref": {"type": "ref/prompt", "name": target},
            "argument": {"name": "language", "value": "r"}
        }),
    }
}

/// What is hidden from a caller who is not staff, by the method that names
/// it, and an unknown name of the same kind.
const HIDDEN_FROM_GUESTS: [(&str, &str, &str); 8] = [
    ("tools/call", "payroll", "nosuch"),
    ("tools/call", "bonus", "nosuch"),
    ("tools/call", "admin_reset", "nosuchtool1"),
    ("prompts/get", "review", "nosuch"),
    ("resources/read", "vis://salaries", "vis://nosuchres"),
    ("resources/read", "vis://notes/7", "vis://nosuch/7"),
    ("completion/complete", "review", "nosuch"),
    ("completion/complete", "vis://notes/{id}", "vis://nosuch/{id}"),
];

// ------------------------------------------------------- modern, in process

async fn lists_of(client: &mut StdioClient, meta: &Value) -> Shown {
    let mut out = Vec::new();
    for (i, (method, key, field)) in LISTS.iter().enumerate() {
        let r = client.call(100 + i as i64, method, json!({"_meta": meta})).await;
        assert_eq!(r["result"]["cacheScope"], "private", "{method}: {r}");
        out.push(names(&r["result"], key, field));
    }
    let mut out = out.into_iter();
    let mut next = || out.next().unwrap();
    Shown {
        tools: next(),
        prompts: next(),
        resources: next(),
        templates: next(),
    }
}

#[tokio::test]
async fn hidden_items_are_absent_from_lists_and_answered_as_unknown() {
    let mut client = StdioClient::start(server());
    let guest = meta_with(json!({}));
    let shown = lists_of(&mut client, &guest).await;
    assert_eq!(shown.tools, ["hello"]);
    assert_eq!(shown.prompts, ["welcome"]);
    assert_eq!(shown.resources, ["vis://hours"]);
    assert!(shown.templates.is_empty());

    let mut id = 1;
    for (method, hidden, unknown) in HIDDEN_FROM_GUESTS.iter().chain(&[
        ("tools/call", "survey", "nosuch"),
        ("tools/call", "fragile", "nosuch1"),
        ("tools/call", "beta", "nope"),
    ]) {
        id += 2;
        let h = client.call(id, method, naming(method, hidden)).await;
        let u = client.call(id + 1, method, naming(method, unknown)).await;
        assert_eq!(
            renamed(&h, hidden, unknown),
            u["error"],
            "{method} {hidden}: {h} vs {u}"
        );
    }

    // The panicking predicate hid its tool; the server goes on.
    let r = client
        .call(90, "tools/call", json!({"name": "hello", "arguments": {}}))
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "hello");
    let r = client.call(91, "prompts/get", naming("prompts/get", "welcome")).await;
    assert_eq!(
        r["result"]["messages"][0]["content"]["text"],
        "Welcome, rust programmer."
    );
    let r = client.call(92, "resources/read", json!({"uri": "vis://hours"})).await;
    assert_eq!(r["result"]["contents"][0]["text"], "9 to 5");
    let r = client
        .call(93, "completion/complete", naming("completion/complete", "welcome"))
        .await;
    assert_eq!(r["result"]["completion"]["values"], json!(["rust", "ruby"]));
    client.close().await.unwrap();
}

#[tokio::test]
async fn the_declared_capabilities_and_client_info_decide_per_request() {
    let mut client = StdioClient::start(server());
    let elicits = meta_with(json!({"elicitation": {}}));
    assert_eq!(lists_of(&mut client, &elicits).await.tools, ["hello", "survey"]);
    let r = client
        .call(
            1,
            "tools/call",
            json!({"name": "survey", "arguments": {}, "_meta": elicits}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "surveyed");
    // The next request declares nothing: the tool is gone for it.
    let r = client
        .call(2, "tools/call", json!({"name": "survey", "arguments": {}}))
        .await;
    assert_eq!(r["error"]["message"], "Unknown tool: survey");

    let mut beta = meta_with(json!({}));
    beta["io.modelcontextprotocol/clientInfo"] = json!({"name": "beta-client", "version": "0.1.0"});
    assert_eq!(lists_of(&mut client, &beta).await.tools, ["beta", "hello"]);
    let r = client
        .call(3, "tools/call", json!({"name": "beta", "arguments": {}, "_meta": beta}))
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "beta");
    client.close().await.unwrap();
}

// ------------------------------------------------------------------ HTTP

async fn serve(server: Server, config: HttpConfig) -> SocketAddr {
    let http = HttpServer::bind(server, "127.0.0.1:0", config).await.unwrap();
    let addr = http.local_addr().unwrap();
    tokio::spawn(http.serve_until(std::future::pending()));
    addr
}

/// Sends a modern request with extra headers; the answer, schema-checked.
async fn ask(addr: SocketAddr, extra: &[(&str, &str)], id: i64, method: &str, params: Value) -> (Answer, Value) {
    let name = params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
        .filter(|_| method != "completion/complete")
        .map(str::to_owned);
    let mut headers = standard_headers(method, name.as_deref());
    for (k, v) in extra {
        headers = with_header(headers, k, Some(v));
    }
    let a = post(addr, &headers, rpc(id, method, params)).await;
    let v = a.json(Some(method));
    (a, v)
}

async fn http_lists(addr: SocketAddr, extra: &[(&str, &str)]) -> Shown {
    let mut out = Vec::new();
    for (method, key, field) in LISTS {
        let (_, v) = ask(addr, extra, 1, method, json!({})).await;
        assert_eq!(v["result"]["cacheScope"], "private", "{method}: {v}");
        out.push(names(&v["result"], key, field));
    }
    let mut out = out.into_iter();
    let mut next = || out.next().unwrap();
    Shown {
        tools: next(),
        prompts: next(),
        resources: next(),
        templates: next(),
    }
}

/// Every item of [`HIDDEN_FROM_GUESTS`] is answered as unknown (the same
/// HTTP status and error) to a caller with `guest` headers.
async fn refused_as_unknown(addr: SocketAddr, guest: &[(&str, &str)]) {
    for (method, hidden, unknown) in HIDDEN_FROM_GUESTS {
        let (ha, h) = ask(addr, guest, 1, method, naming(method, hidden)).await;
        let (ua, u) = ask(addr, guest, 1, method, naming(method, unknown)).await;
        assert_eq!(ha.status, ua.status, "{method} {hidden}: {}", ha.text);
        assert_eq!(renamed(&h, hidden, unknown), u["error"], "{method} {hidden}");
    }
}

#[tokio::test]
async fn a_request_header_shows_what_staff_see() {
    let addr = serve(server(), HttpConfig::default()).await;
    let staff: &[(&str, &str)] = &[("x-role", "staff")];
    let shown = http_lists(addr, staff).await;
    assert_eq!(shown.tools, ["admin_reset", "bonus", "hello", "payroll"]);
    assert_eq!(shown.prompts, ["review", "welcome"]);
    assert_eq!(shown.resources, ["vis://hours", "vis://salaries"]);
    assert_eq!(shown.templates, ["vis://notes/{id}"]);
    let (_, v) = ask(addr, staff, 1, "tools/call", naming("tools/call", "admin_reset")).await;
    assert_eq!(v["result"]["content"][0]["text"], "reset");
    let (_, v) = ask(addr, staff, 2, "resources/read", json!({"uri": "vis://notes/7"})).await;
    assert_eq!(v["result"]["contents"][0]["text"], "note 7");
    let (_, v) = ask(addr, staff, 3, "prompts/get", naming("prompts/get", "review")).await;
    assert_eq!(v["result"]["messages"][0]["content"]["text"], "Review this rust.");
    let (_, v) = ask(
        addr,
        staff,
        4,
        "completion/complete",
        naming("completion/complete", "vis://notes/{id}"),
    )
    .await;
    assert_eq!(v["result"]["completion"]["values"], json!(["rust", "ruby"]));

    let guest: &[(&str, &str)] = &[("x-role", "guest")];
    let shown = http_lists(addr, guest).await;
    assert_eq!(shown.tools, ["hello"]);
    assert!(shown.templates.is_empty());
    refused_as_unknown(addr, guest).await;
}

/// `staff` has the staff scope, `guest` none.
struct Tokens;

impl TokenVerifier for Tokens {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(async move {
            let scopes: &[&str] = match token {
                "staff" => &["staff"],
                "guest" => &[],
                _ => return Err(Rejection::Inactive),
            };
            Ok(std::sync::Arc::new(AccessToken {
                subject: token.to_owned(),
                scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
                ..AccessToken::default()
            }))
        })
    }
}

#[tokio::test]
async fn the_tokens_scopes_decide_and_hidden_beats_insufficient_scope() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = HttpConfig {
        auth: Some(ResourceServer::new(
            format!("http://127.0.0.1:{port}/mcp"),
            "https://as.example",
            Tokens,
        )),
        ..HttpConfig::default()
    };
    let http = HttpServer::bind(server(), &format!("127.0.0.1:{port}"), config)
        .await
        .unwrap();
    let addr = http.local_addr().unwrap();
    tokio::spawn(http.serve_until(std::future::pending()));

    let staff: &[(&str, &str)] = &[("authorization", "Bearer staff")];
    let shown = http_lists(addr, staff).await;
    assert_eq!(shown.tools, ["admin_reset", "bonus", "hello", "payroll"]);
    let (_, v) = ask(addr, staff, 1, "tools/call", naming("tools/call", "bonus")).await;
    assert_eq!(v["result"]["content"][0]["text"], "bonus paid");

    // `bonus` asks for a scope the guest lacks, but is hidden first: the
    // guest learns it does not exist, not that it is forbidden (no 403).
    let guest: &[(&str, &str)] = &[("authorization", "Bearer guest")];
    assert_eq!(http_lists(addr, guest).await.tools, ["hello"]);
    refused_as_unknown(addr, guest).await;
}

// ------------------------------------------------------------ legacy era

/// A 2025-11-25 session over in-memory stdio, every line validated.
struct Legacy {
    w: tokio::io::DuplexStream,
    r: tokio::io::Lines<BufReader<tokio::io::DuplexStream>>,
}

impl Legacy {
    async fn open(server: Server, capabilities: Value) -> Legacy {
        let (cw, sr) = tokio::io::duplex(1 << 16);
        let (sw, cr) = tokio::io::duplex(1 << 16);
        tokio::spawn(mcp_runtime::transport::stdio::serve_io(server, sr, sw));
        let mut s = Legacy {
            w: cw,
            r: BufReader::new(cr).lines(),
        };
        let init = s
            .call(
                0,
                "initialize",
                json!({
                "protocolVersion": "2025-11-25", "capabilities": capabilities,
                "clientInfo": {"name": "legacy-client", "version": "1.0.0"}}),
            )
            .await;
        assert!(init.get("result").is_some(), "{init}");
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        s.w.write_all(format!("{note}\n").as_bytes()).await.unwrap();
        s
    }

    async fn call(&mut self, id: i64, method: &str, params: Value) -> Value {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.w.write_all(format!("{line}\n").as_bytes()).await.unwrap();
        let line = tokio::time::timeout(std::time::Duration::from_secs(5), self.r.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        validate_legacy(&v, Some(method));
        assert_eq!(v["id"], id, "{v}");
        v
    }
}

#[tokio::test]
async fn a_legacy_session_is_shown_what_its_initialize_declared() {
    let mut s = Legacy::open(server(), json!({"elicitation": {}})).await;
    let v = s.call(1, "tools/list", json!({})).await;
    assert_eq!(names(&v["result"], "tools", "name"), ["hello", "survey"]);
    let v = s
        .call(2, "tools/call", json!({"name": "survey", "arguments": {}}))
        .await;
    assert_eq!(v["result"]["content"][0]["text"], "surveyed");

    let mut s = Legacy::open(server(), json!({})).await;
    let v = s.call(1, "tools/list", json!({})).await;
    assert_eq!(names(&v["result"], "tools", "name"), ["hello"]);
    let v = s.call(2, "prompts/list", json!({})).await;
    assert_eq!(names(&v["result"], "prompts", "name"), ["welcome"]);
    let v = s.call(3, "resources/list", json!({})).await;
    assert_eq!(names(&v["result"], "resources", "uri"), ["vis://hours"]);
    let v = s.call(4, "resources/templates/list", json!({})).await;
    assert_eq!(v["result"]["resourceTemplates"], json!([]));
    let mut id = 10;
    for (method, hidden, unknown) in HIDDEN_FROM_GUESTS.iter().chain(&[
        ("tools/call", "survey", "nosuch"),
        ("resources/subscribe", "vis://salaries", "vis://nosuchres"),
        ("resources/subscribe", "vis://notes/7", "vis://nosuch/7"),
    ]) {
        id += 2;
        let h = s.call(id, method, naming(method, hidden)).await;
        let u = s.call(id + 1, method, naming(method, unknown)).await;
        assert_eq!(
            renamed(&h, hidden, unknown),
            u["error"],
            "{method} {hidden}: {h} vs {u}"
        );
    }
    let v = s.call(99, "resources/subscribe", json!({"uri": "vis://hours"})).await;
    assert_eq!(v["result"], json!({}));
}

/// One legacy HTTP exchange (a JSON body, or the messages of an SSE one).
async fn legacy_http(addr: SocketAddr, headers: &[(&str, &str)], body: Value) -> (Answer, Vec<Value>) {
    let mut all = vec![
        ("content-type".to_owned(), "application/json".to_owned()),
        ("accept".to_owned(), "application/json, text/event-stream".to_owned()),
    ];
    all.extend(headers.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    let a = post(addr, &all, body.to_string().into_bytes()).await;
    let messages = if a.content_type().starts_with("text/event-stream") {
        a.text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| serde_json::from_str(d.trim()).unwrap())
            .collect()
    } else if a.text.is_empty() {
        Vec::new()
    } else {
        vec![serde_json::from_str(&a.text).unwrap()]
    };
    let method = body["method"].as_str();
    for m in &messages {
        validate_legacy(m, method);
    }
    (a, messages)
}

#[tokio::test]
async fn a_legacy_http_session_is_shown_by_each_requests_headers() {
    let addr = serve(server(), HttpConfig::default()).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "legacy-client", "version": "1.0.0"}}});
    let (a, _) = legacy_http(addr, &[], init).await;
    let sid = a.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    legacy_http(addr, &[("mcp-session-id", &sid)], initialized).await;

    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
    let (_, m) = legacy_http(addr, &[("mcp-session-id", &sid), ("x-role", "staff")], list.clone()).await;
    assert_eq!(
        names(&m[0]["result"], "tools", "name"),
        ["admin_reset", "bonus", "hello", "payroll"]
    );
    let (_, m) = legacy_http(addr, &[("mcp-session-id", &sid)], list).await;
    assert_eq!(names(&m[0]["result"], "tools", "name"), ["hello"]);

    let call = |name: &str| json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": name, "arguments": {}}});
    let (_, m) = legacy_http(addr, &[("mcp-session-id", &sid), ("x-role", "staff")], call("payroll")).await;
    assert_eq!(m[0]["result"]["content"][0]["text"], "paid");
    let (ha, h) = legacy_http(addr, &[("mcp-session-id", &sid)], call("payroll")).await;
    let (ua, u) = legacy_http(addr, &[("mcp-session-id", &sid)], call("nosuch")).await;
    assert_eq!(ha.status, ua.status);
    assert_eq!(renamed(&h[0], "payroll", "nosuch"), u[0]["error"]);
}

// ------------------------------------------------------- pages and caching

#[tokio::test]
async fn pages_are_cut_from_what_is_shown() {
    let odd = |viewer: &Viewer<'_>| viewer.header("x-all").is_some();
    let mut builder = Server::builder().empty().page_size(2);
    for i in 0..7 {
        let entry = ToolEntry::dynamic(tool(&format!("t{i}")), |_, _| async { "ok" });
        builder = builder.tool_entry(if i % 2 == 1 { entry.visible_if(odd) } else { entry });
    }
    let mut client = StdioClient::start(builder.build().unwrap());
    let mut seen = Vec::new();
    let mut cursor: Option<Value> = None;
    for id in 1.. {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let r = client.call(id, "tools/list", params).await;
        let page = names(&r["result"], "tools", "name");
        assert!(page.len() <= 2, "{r}");
        assert_eq!(r["result"]["cacheScope"], "private");
        seen.extend(page);
        match r["result"].get("nextCursor") {
            Some(next) => cursor = Some(next.clone()),
            None => break,
        }
    }
    assert_eq!(seen, ["t0", "t2", "t4", "t6"]);
    client.close().await.unwrap();
}

async fn cache_scopes(server: Server) -> Vec<String> {
    let mut client = StdioClient::start(server);
    let mut scopes = Vec::new();
    for (i, method) in LISTS.iter().map(|l| l.0).chain(["server/discover"]).enumerate() {
        let r = client.call(i as i64 + 1, method, json!({})).await;
        scopes.push(r["result"]["cacheScope"].as_str().unwrap().to_owned());
    }
    client.close().await.unwrap();
    scopes
}

#[tokio::test]
async fn lists_say_private_only_when_they_differ_by_caller() {
    let plain = || {
        Server::builder()
            .empty()
            .tool::<hello>()
            .prompt::<welcome>()
            .resource::<hours>()
    };
    // No predicate anywhere: what the server is configured to say.
    assert_eq!(cache_scopes(plain().build().unwrap()).await, ["public"; 5]);
    let configured = plain().list_cache(1000, CacheScope::Private).build().unwrap();
    assert_eq!(
        cache_scopes(configured).await,
        ["private", "private", "private", "private", "public"]
    );
    // A hook: every list differs by caller; discover does not.
    let hooked = plain().visible_if(|_, _| true).build().unwrap();
    assert_eq!(
        cache_scopes(hooked).await,
        ["private", "private", "private", "private", "public"]
    );
    // An item's own predicate, added at run time.
    let server = plain().build().unwrap();
    server
        .add_tool(ToolEntry::dynamic(tool("later"), |_, _| async { "ok" }).visible_if(|_| false))
        .unwrap();
    assert_eq!(
        cache_scopes(server).await,
        ["private", "private", "private", "private", "public"]
    );
}

#[tokio::test]
async fn a_mounted_server_keeps_its_hooks_under_its_own_names() {
    let inner = Server::builder()
        .empty()
        .tool::<hello>()
        .visible_if(|viewer, item| item != Item::Tool("hello") || can_elicit(viewer))
        .build()
        .unwrap();
    let outer = Server::builder()
        .empty()
        .tool::<payroll>()
        .mount("kid", &inner)
        .build()
        .unwrap();
    let mut client = StdioClient::start(outer);
    let r = client.call(1, "tools/list", json!({})).await;
    assert_eq!(names(&r["result"], "tools", "name"), Vec::<String>::new());
    let elicits = meta_with(json!({"elicitation": {}}));
    let r = client.call(2, "tools/list", json!({"_meta": elicits})).await;
    assert_eq!(names(&r["result"], "tools", "name"), ["kid_hello"]);
    let r = client
        .call(
            3,
            "tools/call",
            json!({"name": "kid_hello", "arguments": {}, "_meta": elicits}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "hello");
    client.close().await.unwrap();
}

#[tokio::test]
async fn a_listen_stream_agrees_to_a_hidden_resource_but_hears_nothing_of_it() {
    let server = server();
    let mut client = StdioClient::start(server.clone());
    let uris = ["vis://salaries", "vis://nosuchres", "vis://hours"];
    client
        .send(
            1,
            "subscriptions/listen",
            json!({"notifications": {"resourceSubscriptions": uris}}),
        )
        .await;
    let ack = client.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    // Agreed to like a URI nothing serves: nothing tells it apart.
    assert_eq!(ack["params"]["notifications"]["resourceSubscriptions"], json!(uris));
    server.notify_resource_updated("vis://salaries");
    server.notify_resource_updated("vis://hours");
    let update = client.recv().await;
    assert_eq!(update["method"], "notifications/resources/updated", "{update}");
    assert_eq!(
        update["params"]["uri"], "vis://hours",
        "the hidden resource's update was sent"
    );
}

/// A resource the stream's caller was shown when it subscribed, whose URI
/// only a hidden resource serves once it is removed: its updates are no
/// longer sent, after a gap in the stream's events neither.
#[tokio::test]
async fn a_listen_stream_hears_nothing_of_a_resource_hidden_after_it_subscribed() {
    let server = server();
    let resource: mcp_runtime::protocol::Resource =
        serde_json::from_value(json!({"uri": "vis://notes/7", "name": "note 7"})).unwrap();
    server
        .add_resource(mcp_runtime::ResourceEntry::dynamic(resource, |_, _| async { "open" }))
        .unwrap();
    let mut client = StdioClient::start(server.clone());
    let uris = ["vis://notes/7", "vis://hours", "vis://end"];
    client
        .send(
            1,
            "subscriptions/listen",
            json!({"notifications": {"resourceSubscriptions": uris}}),
        )
        .await;
    let ack = client.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    server.notify_resource_updated("vis://notes/7");
    let heard = client.recv().await;
    assert_eq!(heard["params"]["uri"], "vis://notes/7", "{heard}");
    // Now only the staff template serves the URI.
    assert!(server.remove_resource("vis://notes/7").unwrap());
    server.notify_resource_updated("vis://notes/7");
    server.notify_resource_updated("vis://hours");
    let heard = client.recv().await;
    assert_eq!(heard["method"], "notifications/resources/updated", "{heard}");
    assert_eq!(
        heard["params"]["uri"], "vis://hours",
        "the update of a resource hidden since was sent"
    );
    // More events than the stream holds: it falls behind and is told of
    // everything it follows again, but of the hidden resource.
    for _ in 0..300 {
        server.notify_resource_updated("vis://end");
    }
    server.notify_resource_updated("vis://hours");
    let mut heard = Vec::new();
    while heard.last().is_none_or(|uri| uri != "vis://hours") {
        let note = client.recv().await;
        heard.push(note["params"]["uri"].as_str().unwrap().to_owned());
    }
    assert!(heard.len() < 300, "the stream did not fall behind: {}", heard.len());
    assert!(
        !heard.iter().any(|uri| uri == "vis://notes/7"),
        "the make-up told of a hidden resource"
    );
}

/// A listen stream whose caller is shown lists of its own hears of a list
/// change only when what it is shown changed: a tool hidden from it comes
/// and goes unannounced, one it is shown is announced.
#[tokio::test]
async fn a_listen_stream_hears_only_of_changes_to_what_it_is_shown() {
    let server = server();
    let mut client = StdioClient::start(server.clone());
    client
        .send(
            1,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["vis://hours"]}}),
        )
        .await;
    let ack = client.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    // Hidden by the server's hook from all but staff: this caller is none.
    let admin = ToolEntry::dynamic(tool("admin_purge"), |_, _| async { "purged" });
    server.add_tool(admin).unwrap();
    assert!(server.remove_tool("admin_purge").unwrap());
    let later = ToolEntry::dynamic(tool("later"), |_, _| async { "later" });
    server.add_tool(later).unwrap();
    // A resource update after them all marks the end of what they caused.
    server.notify_resource_updated("vis://hours");
    let heard = client.recv().await;
    assert_eq!(heard["method"], "notifications/tools/list_changed", "{heard}");
    let heard = client.recv().await;
    assert_eq!(
        heard["method"], "notifications/resources/updated",
        "a change to a hidden tool was announced: {heard}"
    );
}

/// Over HTTP a listen stream is shown what its request's headers show: a
/// staff caller (the `x-role` header) hears of a change to a tool only
/// staff see, which a guest's stream does not.
#[tokio::test]
async fn a_listen_stream_is_shown_by_its_requests_headers() {
    let server = server();
    let addr = serve(server.clone(), HttpConfig::default()).await;
    let open = |role: &'static str| async move {
        let method = "subscriptions/listen";
        let headers = with_header(standard_headers(method, None), "x-role", Some(role));
        let params = json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["vis://hours"]}});
        let mut conn = connect(addr).await;
        let response = conn
            .send(build(
                addr,
                hyper::Method::POST,
                "/mcp",
                &headers,
                rpc(1, method, params),
            ))
            .await;
        let mut sse = Sse::open(response, method, conn);
        let ack = sse.next().await;
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
        sse
    };
    let mut staff = open("staff").await;
    let mut guest = open("guest").await;
    let admin = ToolEntry::dynamic(tool("admin_purge"), |_, _| async { "purged" });
    server.add_tool(admin).unwrap();
    server.notify_resource_updated("vis://hours");
    let heard = staff.next().await;
    assert_eq!(heard["method"], "notifications/tools/list_changed", "{heard}");
    let heard = guest.next().await;
    assert_eq!(heard["method"], "notifications/resources/updated", "{heard}");
}
