//! Middleware around handler calls: an audit hook sees every call and its
//! outcome, a rate limit refuses with a clear error (a tool error the model
//! can read for tools, the error itself for reads and gets), hooks run in
//! order before and in reverse after, and a panicking hook is an error.

use mcp_runtime::prelude::*;
use mcp_runtime::testing::TestClient;
use mcp_runtime::{Call, CallOutcome, Middleware, MiddlewareFuture};
use serde_json::json;
use std::sync::{Arc, Mutex};

/// Echoes.
#[tool]
fn mw_echo(text: String) -> String {
    text
}

/// Fails.
#[tool]
fn mw_fail() -> Result<String, String> {
    Err("nope".into())
}

/// A prompt.
#[prompt]
fn mw_prompt() -> String {
    "hi".into()
}

type Log = Arc<Mutex<Vec<String>>>;

struct Audit(Log, &'static str);

impl Middleware for Audit {
    fn before<'a>(&'a self, call: &'a Call<'a>) -> MiddlewareFuture<'a, Result<(), McpError>> {
        self.0.lock().unwrap().push(format!("{} before {}", self.1, call.name));
        Box::pin(std::future::ready(Ok(())))
    }
    fn after<'a>(&'a self, call: &'a Call<'a>, outcome: &'a CallOutcome) -> MiddlewareFuture<'a, ()> {
        let args = call.arguments.map(|a| a.get().to_owned()).unwrap_or_default();
        self.0.lock().unwrap().push(format!(
            "{} after {} {:?} {args} {:?} {:?}",
            self.1, call.name, call.kind, call.principal, outcome
        ));
        Box::pin(std::future::ready(()))
    }
}

/// Allows `n` calls in all.
struct Limit(Mutex<usize>);

impl Middleware for Limit {
    fn before<'a>(&'a self, _: &'a Call<'a>) -> MiddlewareFuture<'a, Result<(), McpError>> {
        let mut left = self.0.lock().unwrap();
        let verdict = if *left == 0 {
            Err(McpError::invalid_request("Rate limited: retry in 60 s"))
        } else {
            *left -= 1;
            Ok(())
        };
        Box::pin(std::future::ready(verdict))
    }
}

struct Panics;

impl Middleware for Panics {
    fn before<'a>(&'a self, call: &'a Call<'a>) -> MiddlewareFuture<'a, Result<(), McpError>> {
        let name = call.name.to_owned();
        Box::pin(async move {
            let limits: Vec<u8> = Vec::new();
            if name == "mw_fail" {
                let _ = limits[name.len()];
            }
            Ok(())
        })
    }
}

#[tokio::test]
async fn audit_sees_every_call_and_a_rate_limit_refuses_clearly() {
    let log: Log = Arc::default();
    let server = Server::builder()
        .middleware(Audit(log.clone(), "outer"))
        .middleware(Audit(log.clone(), "inner"))
        .middleware(Limit(Mutex::new(3)))
        .build()
        .unwrap();
    let client = TestClient::new(&server).as_principal("alice");
    assert_eq!(
        client.call_tool("mw_echo", json!({"text": "a"})).await.unwrap().text(),
        "a"
    );
    let failed = client.call_tool("mw_fail", json!({})).await.unwrap();
    assert_eq!(failed.is_error, Some(true));
    client.get_prompt("mw_prompt", json!({})).await.unwrap();
    // The fourth call is refused: a tool gets an isError result naming the limit...
    let refused = client.call_tool("mw_echo", json!({"text": "b"})).await.unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(refused.text(), "Rate limited: retry in 60 s");
    // ...and a prompt gets the error.
    let e = client.get_prompt("mw_prompt", json!({})).await.unwrap_err();
    assert_eq!((e.code().0, e.message()), (-32600, "Rate limited: retry in 60 s"));

    let log = log.lock().unwrap();
    assert_eq!(log[0], "outer before mw_echo");
    assert_eq!(log[1], "inner before mw_echo");
    assert!(
        log[2].starts_with("inner after mw_echo Tool {\"text\":\"a\"} Some(\"alice\") Answered { is_error: false }"),
        "{log:?}"
    );
    assert!(log[3].starts_with("outer after mw_echo"), "{log:?}");
    assert!(
        log.iter()
            .any(|l| l.starts_with("outer after mw_fail") && l.ends_with("Answered { is_error: true }")),
        "{log:?}"
    );
    assert!(
        log.iter().any(|l| l.starts_with("outer after mw_prompt Prompt")),
        "{log:?}"
    );
    let refusals = log
        .iter()
        .filter(|l| l.contains("Error { code: -32600, message: \"Rate limited"))
        .count();
    assert_eq!(refusals, 4, "both audits saw both refusals: {log:?}");
}

/// Panics in its own code, before it returns a future.
struct PanicsEarly;

impl Middleware for PanicsEarly {
    fn before<'a>(&'a self, call: &'a Call<'a>) -> MiddlewareFuture<'a, Result<(), McpError>> {
        let limits: Vec<u8> = Vec::new();
        if call.name == "mw_fail" {
            let _ = limits[call.name.len()];
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn after<'a>(&'a self, call: &'a Call<'a>, _: &'a CallOutcome) -> MiddlewareFuture<'a, ()> {
        let limits: Vec<u8> = Vec::new();
        if call.name == "mw_echo" {
            let _ = limits[call.name.len()];
        }
        Box::pin(std::future::ready(()))
    }
}

#[tokio::test]
async fn a_hook_that_panics_before_its_future_is_an_error_too() {
    let server = Server::builder().middleware(PanicsEarly).build().unwrap();
    let client = TestClient::new(&server);
    let refused = client.call_tool("mw_fail", json!({})).await.unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert!(refused.text().contains("middleware panicked"), "{}", refused.text());
    // A panic in `after` leaves the answer as it was.
    let echoed = client
        .call_tool("mw_echo", json!({"text": "still here"}))
        .await
        .unwrap();
    assert_eq!(echoed.text(), "still here");
}

#[tokio::test]
async fn a_panicking_hook_is_an_error_and_the_server_lives_on() {
    let server = Server::builder().middleware(Panics).build().unwrap();
    let client = TestClient::new(&server);
    let refused = client.call_tool("mw_fail", json!({})).await.unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert!(refused.text().contains("middleware panicked"), "{}", refused.text());
    assert_eq!(
        client
            .call_tool("mw_echo", json!({"text": "still here"}))
            .await
            .unwrap()
            .text(),
        "still here"
    );
}
