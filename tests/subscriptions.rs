//! What a client may hold open for change notifications (issue 26, defect
//! 4): a legacy session subscribes only to resources the catalog serves,
//! to URIs of reasonable length and to a bounded number of them; listen
//! streams are bounded per principal, without one, and in all, and so are
//! the resources one names. Each refusal is a JSON-RPC error naming it.

mod support;

use mcp_runtime::prelude::*;
use mcp_runtime::testing::TestClient;
use mcp_runtime::transport::http::{HttpConfig, HttpServer};
use mcp_runtime::{Server, SubscriptionLimits};
use serde_json::{json, Value};
use std::net::SocketAddr;
use support::http::*;

/// Today's notes.
#[resource(uri = "notes://today")]
fn today() -> &'static str {
    "nothing yet"
}

/// A note, by day.
#[resource(uri_template = "notes://days/{day}")]
fn day_note(day: u32) -> String {
    format!("day {day}")
}

fn server(limits: SubscriptionLimits) -> Server {
    Server::builder()
        .empty()
        .resource::<today>()
        .resource::<day_note>()
        .subscriptions(limits)
        .build()
        .expect("the server builds")
}

fn code(e: &McpError) -> i64 {
    i64::from(e.code().0)
}

#[tokio::test]
async fn a_legacy_session_subscribes_only_to_what_is_served_and_not_without_end() {
    let limits = SubscriptionLimits {
        max_resource_subscriptions: 3,
        ..SubscriptionLimits::default()
    };
    let server = server(limits);
    let client = TestClient::new(&server).legacy();
    let subscribe = |uri: String| {
        let client = &client;
        async move { client.request("resources/subscribe", json!({"uri": uri})).await }
    };
    subscribe("notes://today".into()).await.expect("a static resource");
    subscribe("notes://days/1".into()).await.expect("a URI of a template");
    let unknown = subscribe("notes://elsewhere".into()).await.expect_err("not served");
    // 2025-11-25's code for an unknown resource.
    assert_eq!(code(&unknown), -32002, "{unknown:?}");
    let long = format!("notes://days/{}", "1".repeat(limits.max_uri_len));
    let too_long = subscribe(long).await.expect_err("too long");
    assert_eq!(code(&too_long), -32602, "{too_long:?}");
    assert!(too_long.message().contains("max_uri_len"), "{too_long:?}");
    subscribe("notes://days/2".into()).await.expect("the third");
    subscribe("notes://days/2".into()).await.expect("again: no change");
    let full = subscribe("notes://days/3".into()).await.expect_err("a fourth");
    assert_eq!(code(&full), -32602, "{full:?}");
    assert!(full.message().contains("max_resource_subscriptions"), "{full:?}");
    client
        .request("resources/unsubscribe", json!({"uri": "notes://days/1"}))
        .await
        .expect("unsubscribed");
    subscribe("notes://days/3".into()).await.expect("room again");
}

async fn serve(limits: SubscriptionLimits) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    serve_server(server(limits)).await
}

async fn serve_server(server: Server) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let config = HttpConfig {
        principal_header: Some("x-user".into()),
        ..HttpConfig::default()
    };
    let http = HttpServer::bind(server, "127.0.0.1:0", config).await.unwrap();
    let addr = http.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(http.serve_until(async {
        let _ = stopped.await;
    }));
    (addr, stop)
}

fn listen_params(uris: &[String]) -> Value {
    json!({"notifications": {
        "toolsListChanged": true,
        "promptsListChanged": true,
        "resourcesListChanged": true,
        "resourceSubscriptions": uris
    }})
}

fn headers(user: Option<&str>) -> Vec<(String, String)> {
    with_header(standard_headers("subscriptions/listen", None), "x-user", user)
}

/// Opens a listen stream as `user` and reads its acknowledgement.
async fn listen(addr: SocketAddr, user: Option<&str>) -> Sse {
    listen_to(addr, user, &[]).await
}

/// Opens a listen stream as `user` following `uris` and reads its
/// acknowledgement.
async fn listen_to(addr: SocketAddr, user: Option<&str>, uris: &[String]) -> Sse {
    listen_acked(addr, user, uris).await.0
}

/// Opens a listen stream as `user` following `uris`; the stream and its
/// acknowledgement.
async fn listen_acked(addr: SocketAddr, user: Option<&str>, uris: &[String]) -> (Sse, Value) {
    let mut conn = connect(addr).await;
    let body = rpc(1, "subscriptions/listen", listen_params(uris));
    let response = conn
        .send(build(addr, hyper::Method::POST, "/mcp", &headers(user), body))
        .await;
    let mut sse = Sse::open(response, "subscriptions/listen", conn);
    let ack = sse.next().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    (sse, ack)
}

/// A listen request expected to be refused at once with a JSON error.
async fn refused(addr: SocketAddr, user: Option<&str>, uris: &[String]) -> Value {
    let a = post(
        addr,
        &headers(user),
        rpc(1, "subscriptions/listen", listen_params(uris)),
    )
    .await;
    assert_eq!(a.content_type(), "application/json", "not refused: {}", a.text);
    a.json(Some("subscriptions/listen"))
}

#[tokio::test]
async fn listen_streams_are_bounded_per_principal_without_one_and_in_all() {
    let limits = SubscriptionLimits {
        max_streams: 6,
        max_streams_per_principal: 2,
        max_anonymous_streams: 2,
        max_resource_subscriptions: 4,
        ..SubscriptionLimits::default()
    };
    let (addr, _stop) = serve(limits).await;
    let alice = [listen(addr, Some("alice")).await, listen(addr, Some("alice")).await];
    let v = refused(addr, Some("alice"), &[]).await;
    assert_eq!(error_code(&v), -32603, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("max_streams_per_principal"),
        "{v}"
    );
    // Others are not held up by alice.
    let bob = listen(addr, Some("bob")).await;
    let anonymous = [listen(addr, None).await, listen(addr, None).await];
    let v = refused(addr, None, &[]).await;
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("max_anonymous_streams"),
        "{v}"
    );
    let carol = listen(addr, Some("carol")).await;
    let v = refused(addr, Some("dave"), &[]).await;
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("(SubscriptionLimits::max_streams)"),
        "six in all: {v}"
    );
    // A stream that ends gives its place back.
    drop(bob);
    let mut reopened = None;
    for _ in 0..50 {
        let mut conn = connect(addr).await;
        let body = rpc(1, "subscriptions/listen", listen_params(&[]));
        let response = conn
            .send(build(addr, hyper::Method::POST, "/mcp", &headers(Some("dave")), body))
            .await;
        if response.headers()["content-type"] == "text/event-stream" {
            reopened = Some(Sse::open(response, "subscriptions/listen", conn));
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(reopened.is_some(), "the place of a closed stream is given back");
    drop((alice, anonymous, carol));
}

#[tokio::test]
async fn a_listen_request_names_a_bounded_number_of_resources() {
    let limits = SubscriptionLimits {
        max_resource_subscriptions: 4,
        ..SubscriptionLimits::default()
    };
    let (addr, _stop) = serve(limits).await;
    let five: Vec<String> = (0..5).map(|i| format!("notes://days/{i}")).collect();
    let v = refused(addr, Some("alice"), &five).await;
    assert_eq!(error_code(&v), -32602, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("max_resource_subscriptions"),
        "{v}"
    );
    let long = vec![format!("notes://days/{}", "1".repeat(limits.max_uri_len))];
    let v = refused(addr, Some("alice"), &long).await;
    assert_eq!(error_code(&v), -32602, "{v}");
}

/// Every listen stream and legacy session together follow a bounded number
/// of bytes of URIs: however many callers subscribe, the memory it takes is
/// bounded, the refusal names the bound, and what ends gives its bytes back.
#[tokio::test]
async fn subscriptions_are_bounded_in_bytes_across_streams_and_sessions() {
    // Each URI below counts its 14 bytes and 64 more: room for three.
    let uri = |day: u32| format!("notes://days/{day}");
    let limits = SubscriptionLimits {
        max_subscribed_bytes: 3 * (14 + 64),
        ..SubscriptionLimits::default()
    };
    let server = server(limits);
    let (addr, _stop) = serve_server(server.clone()).await;
    let session = TestClient::new(&server).legacy();
    let subscribe = |day: u32| {
        let session = &session;
        async move { session.request("resources/subscribe", json!({"uri": uri(day)})).await }
    };
    subscribe(1).await.expect("the first");
    let stream = listen_to(addr, Some("alice"), &[uri(2), uri(3)]).await;
    let full = subscribe(4).await.expect_err("past the bytes");
    assert_eq!(code(&full), -32603, "{full:?}");
    assert!(full.message().contains("max_subscribed_bytes"), "{full:?}");
    subscribe(1).await.expect("one it follows: no change");
    let v = refused(addr, Some("bob"), &[uri(5)]).await;
    assert_eq!(error_code(&v), -32603, "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("max_subscribed_bytes"),
        "{v}"
    );
    // A stream that follows nothing still opens.
    drop(listen(addr, Some("bob")).await);
    // A stream that ends gives its bytes back.
    drop(stream);
    let mut room = Err(full);
    for _ in 0..50 {
        room = subscribe(4).await;
        if room.is_ok() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    room.expect("the closed stream's bytes are given back");
    subscribe(5).await.expect("room for the third");
    session
        .request("resources/unsubscribe", json!({"uri": uri(1)}))
        .await
        .expect("unsubscribed");
    drop(listen_to(addr, Some("bob"), &[uri(6)]).await);
}

/// A listen stream that falls behind the server's events (more than the
/// event channel holds arrive before it runs again) still hears of what it
/// follows: the resource updated among the events it missed, and the kinds
/// of list change it asked for (read again, they find nothing new at worst).
#[tokio::test]
async fn a_listen_stream_that_falls_behind_hears_again_of_what_it_follows() {
    let server = server(SubscriptionLimits::default());
    let (addr, _stop) = serve_server(server.clone()).await;
    let followed = "notes://days/1".to_owned();
    let mut stream = listen_to(addr, Some("alice"), std::slice::from_ref(&followed)).await;
    // One runtime thread: the stream's task cannot run while these are
    // announced, so the followed update is pushed out by the 300 after it.
    server.notify_resource_updated(followed.clone());
    for _ in 0..300 {
        server.notify_resource_updated("notes://days/2");
    }
    let mut heard = Vec::new();
    while let Some(m) = stream.next_within(std::time::Duration::from_secs(2)).await {
        heard.push(m);
    }
    assert_made_up(&heard, &followed, &EVERY_LIST);
}

/// An event bus that reconnected announces `Missed`: the stream is told
/// again of what it follows, as when it falls behind.
#[tokio::test]
async fn a_listen_stream_is_told_again_of_what_it_follows_when_events_were_missed() {
    let server = server(SubscriptionLimits::default());
    let (addr, _stop) = serve_server(server.clone()).await;
    let followed = "notes://today".to_owned();
    let mut stream = listen_to(addr, Some("alice"), std::slice::from_ref(&followed)).await;
    server.announce(mcp_runtime::ServerEvent::Missed);
    let mut heard = Vec::new();
    while let Some(m) = stream.next_within(std::time::Duration::from_millis(500)).await {
        heard.push(m);
    }
    assert_made_up(&heard, &followed, &EVERY_LIST);
    // Each tagged with the stream's subscription id.
    assert!(
        heard
            .iter()
            .all(|m| m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 1),
        "{heard:#?}"
    );
}

/// A stream is agreed every kind of list it asks for, even one the server
/// has no items of yet: a tool added while it is open is heard of.
#[tokio::test]
async fn a_kind_of_list_empty_when_the_stream_opens_is_heard_of_when_it_fills() {
    let server = server(SubscriptionLimits::default());
    let (addr, _stop) = serve_server(server.clone()).await;
    let (mut stream, ack) = listen_acked(addr, Some("alice"), &["notes://today".to_owned()]).await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({
            "toolsListChanged": true,
            "promptsListChanged": true,
            "resourcesListChanged": true,
            "resourceSubscriptions": ["notes://today"]
        }),
        "{ack}"
    );
    let tool = mcp_runtime::protocol::Tool {
        name: "late".into(),
        input_schema: json!({"type": "object"}),
        ..Default::default()
    };
    server
        .add_tool(mcp_runtime::ToolEntry::dynamic(tool, |_args, _ctx| async { "late" }))
        .expect("added");
    let changed = stream.next_within(std::time::Duration::from_secs(2)).await;
    assert_eq!(
        changed.as_ref().map(|m| m["method"].clone()),
        Some(json!("notifications/tools/list_changed")),
        "{changed:?}"
    );
}

/// A legacy session whose client goes away without DELETE gives back what
/// it subscribed to once it is idle, even when no other session opens after
/// it (a 2026-07-28 listen stream is then served).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_gives_its_subscriptions_back_by_itself() {
    let uri = |day: u32| format!("notes://days/{day}");
    let limits = SubscriptionLimits {
        max_subscribed_bytes: 3 * (14 + 64),
        ..SubscriptionLimits::default()
    };
    let config = HttpConfig {
        principal_header: Some("x-user".into()),
        session_idle: std::time::Duration::from_millis(300),
        ..HttpConfig::default()
    };
    let http = HttpServer::bind(server(limits), "127.0.0.1:0", config).await.unwrap();
    let addr = http.local_addr().unwrap();
    tokio::spawn(http.serve_until(std::future::pending()));
    let legacy = |body: Value, session: Option<&str>| {
        let mut headers = vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            ("accept".to_owned(), "application/json, text/event-stream".to_owned()),
        ];
        if let Some(id) = session {
            headers.push(("mcp-session-id".to_owned(), id.to_owned()));
            headers.push(("mcp-protocol-version".to_owned(), "2025-11-25".to_owned()));
        }
        async move { post(addr, &headers, body.to_string().into_bytes()).await }
    };
    let init = legacy(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
            "capabilities": {}, "clientInfo": {"name": "gone", "version": "1.0.0"}}}),
        None,
    )
    .await;
    let session = init.headers["mcp-session-id"].to_str().unwrap().to_owned();
    for day in 1..=3 {
        let subscribed = legacy(
            json!({"jsonrpc": "2.0", "id": 1 + day, "method": "resources/subscribe", "params": {"uri": uri(day)}}),
            Some(&session),
        )
        .await;
        assert_eq!(subscribed.status, 200, "{}", subscribed.text);
        assert!(!subscribed.text.contains("error"), "{}", subscribed.text);
    }
    let v = refused(addr, Some("alice"), &[uri(4)]).await;
    assert_eq!(error_code(&v), -32603, "the bytes are all held: {v}");
    // The client is gone; nothing else opens a session.
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    drop(listen_to(addr, Some("alice"), &[uri(4)]).await);
}

/// A legacy session that falls behind the server's events hears again of
/// what it subscribed to, as a listen stream does: the resource updated
/// among the events it missed is announced, and so are the list changes.
#[tokio::test]
async fn a_legacy_session_that_falls_behind_hears_again_of_what_it_subscribed_to() {
    let server = server(SubscriptionLimits::default());
    let followed = "notes://days/1";
    let mut c = legacy_subscribed(&server, followed).await;
    // One runtime thread: the session's forwarder cannot run while these
    // are announced, so the followed update is pushed out by the 300 after it.
    server.notify_resource_updated(followed);
    for _ in 0..300 {
        server.notify_resource_updated("notes://days/2");
    }
    let heard = heard_legacy(&mut c).await;
    assert_made_up(&heard, followed, &DECLARED_LISTS);
}

/// A legacy session told that events were missed (its event bus
/// reconnected) hears again of every list and of what it subscribed to.
#[tokio::test]
async fn a_legacy_session_is_told_again_of_what_it_subscribed_to_when_events_were_missed() {
    let server = server(SubscriptionLimits::default());
    let followed = "notes://days/1";
    let mut c = legacy_subscribed(&server, followed).await;
    server.announce(mcp_runtime::ServerEvent::Missed);
    let heard = heard_legacy(&mut c).await;
    assert_made_up(&heard, followed, &DECLARED_LISTS);
}

/// A legacy session over stdio, initialized and subscribed to `uri`.
async fn legacy_subscribed(server: &Server, uri: &str) -> support::StdioClient {
    let mut c = support::StdioClient::start(server.clone());
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    c.send_raw(&init.to_string()).await;
    c.recv_legacy().await;
    c.send_raw(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    let subscribe = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": uri}});
    c.send_raw(&subscribe.to_string()).await;
    assert!(c.recv_legacy().await["result"].is_object());
    c
}

/// What a legacy session hears until a second passes in silence.
async fn heard_legacy(c: &mut support::StdioClient) -> Vec<Value> {
    let mut heard = Vec::new();
    while let Ok(m) = tokio::time::timeout(std::time::Duration::from_secs(1), c.recv_legacy()).await {
        heard.push(m);
    }
    heard
}

/// Asserts that what a stream or session that missed events `heard` is
/// one update, of `uri`, and a change of each of the lists `lists`.
fn assert_made_up(heard: &[Value], uri: &str, lists: &[&str]) {
    assert_updated_once(heard, uri);
    let changed: Vec<&Value> = heard
        .iter()
        .map(|m| &m["method"])
        .filter(|m| *m != "notifications/resources/updated")
        .collect();
    assert_eq!(changed, lists, "{heard:#?}");
}

/// What a listen stream following every kind of list hears of them.
const EVERY_LIST: [&str; 3] = [
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
];

/// What a legacy session of this server (which declares resources alone)
/// hears of its lists.
const DECLARED_LISTS: [&str; 1] = ["notifications/resources/list_changed"];

/// Asserts that of the messages `heard`, one `resources/updated` came, for `uri`.
fn assert_updated_once(heard: &[Value], uri: &str) {
    let updated: Vec<&Value> = heard
        .iter()
        .filter(|m| m["method"] == "notifications/resources/updated")
        .collect();
    assert_eq!(updated.len(), 1, "{heard:#?}");
    assert_eq!(updated[0]["params"]["uri"], uri, "{heard:#?}");
}
