//! A 2025-11-25 upstream's "URL elicitation required" error (-32042), which
//! 2026-07-28 does not have, reaches a 2026-07-28 caller of the gateway as a
//! round asking the error's URL elicitation: accepted, the call is made
//! again; declined, the call ends with an error naming the upstream. A
//! 2025-11-25 caller gets the error as the upstream sent it. The upstream is
//! a server of this crate on a loopback port, spoken to at 2025-11-25.

mod support;

use mcp_runtime::client::{Client, Era};
use mcp_runtime::prelude::*;
use mcp_runtime::testing::TestClient;
use mcp_runtime::transport::http::HttpConfig;
use mcp_runtime::ErrorCode;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Who signed in (each test signs in a name of its own).
static SIGNED_IN: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Greets `who` once they signed in at a URL: the first call for a name is
/// -32042 with the URL elicitation to complete, the next one the greeting.
#[tool]
fn signin(who: String) -> Flow<String> {
    let mut signed = SIGNED_IN.lock().unwrap_or_else(|p| p.into_inner());
    if signed.contains(&who) {
        return Ok(format!("signed in as {who}"));
    }
    signed.push(who.clone());
    Err(Halt::protocol(
        McpError::new(ErrorCode(-32042), "This request requires signing in first.").with_data(json!({
            "elicitations": [{
                "mode": "url",
                "elicitationId": format!("signin-{who}"),
                "url": format!("https://auth.example.com/signin?who={who}"),
                "message": "Sign in to continue."
            }]
        })),
    ))
}

/// `signin`, after a moment (time enough for the gateway to make the call
/// a task of a caller that declared the extension).
#[tool]
async fn slow_signin(who: String) -> Flow<String> {
    tokio::time::sleep(Duration::from_millis(400)).await;
    signin(who)
}

/// A gateway proxying, under `up`, an upstream serving `signin` over HTTP
/// at 2025-11-25; started. The upstream stops when it drops.
async fn gateway() -> (Server, support::http::TestServer) {
    let upstream = Server::builder()
        .empty()
        .tool::<signin>()
        .tool::<slow_signin>()
        .build()
        .expect("the upstream builds");
    let upstream = support::http::serve_with(upstream, HttpConfig::default()).await;
    let url = format!("http://{}/mcp", upstream.addr);
    let server = Server::builder()
        .proxy("up", Client::http(url).name("up").era(Era::Legacy))
        .build()
        .expect("the gateway builds");
    server.start();
    (server, upstream)
}

/// Waits until the client lists `up_signin` (the upstream connects after start).
async fn until_listed(client: &TestClient) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let names: HashSet<String> = match client.list_tools().await {
            Ok(tools) => tools.into_iter().map(|t| t.name).collect(),
            Err(_) => HashSet::new(),
        };
        if names.contains("up_signin") {
            return;
        }
        assert!(Instant::now() < deadline, "up_signin not listed within 30 s: {names:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A caller that answers every ask with `action`, keeping what it was asked.
fn caller(server: &Server, action: &'static str) -> (TestClient, Arc<Mutex<Vec<Value>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let client = TestClient::new(server).on_elicit(move |ask| {
        seen.lock().unwrap().push(ask.clone());
        json!({ "action": action })
    });
    (client, asked)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accepted_url_elicitation_makes_the_call_again() {
    let (server, _upstream) = gateway().await;
    let (client, asked) = caller(&server, "accept");
    until_listed(&client).await;
    let result = client
        .call_tool("up_signin", json!({"who": "ada"}))
        .await
        .expect("the call, made again once the URL was accepted");
    assert_eq!(result.text(), "signed in as ada");
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["mode"], "url", "{asked:?}");
    assert_eq!(asked[0]["elicitationId"], "signin-ada", "{asked:?}");
    assert_eq!(asked[0]["url"], "https://auth.example.com/signin?who=ada", "{asked:?}");
}

/// The call runs as the caller's task when -32042 comes: the URL
/// elicitation is asked through the task, and once accepted the call is
/// made again and the task completes with its result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accepted_url_elicitation_in_a_task_makes_the_call_again() {
    let (server, _upstream) = gateway().await;
    let (client, asked) = caller(&server, "accept");
    let client = client.with_tasks();
    until_listed(&client).await;
    let result = client
        .call_tool("up_slow_signin", json!({"who": "lin"}))
        .await
        .expect("the task, completed once the URL was accepted");
    assert_eq!(result.text(), "signed in as lin");
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["mode"], "url", "{asked:?}");
    assert_eq!(asked[0]["elicitationId"], "signin-lin", "{asked:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_url_elicitation_ends_the_call() {
    let (server, _upstream) = gateway().await;
    let (client, asked) = caller(&server, "decline");
    until_listed(&client).await;
    let e = client
        .call_tool("up_signin", json!({"who": "grace"}))
        .await
        .expect_err("declined");
    assert_eq!(e.code().0, -32603, "{e:?}");
    assert!(
        e.message().contains("upstream `up`") && e.message().contains("not accepted"),
        "{e:?}"
    );
    assert_eq!(asked.lock().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_caller_gets_the_upstreams_error_as_it_is() {
    let (server, _upstream) = gateway().await;
    let (client, asked) = caller(&server, "accept");
    let client = client.legacy();
    until_listed(&client).await;
    let e = client
        .call_tool("up_signin", json!({"who": "hedy"}))
        .await
        .expect_err("-32042");
    assert_eq!(e.code().0, -32042, "{e:?}");
    let data = e.data().cloned().unwrap_or_default();
    assert_eq!(data["elicitations"][0]["elicitationId"], "signin-hedy", "{data}");
    assert!(asked.lock().unwrap().is_empty());
}
