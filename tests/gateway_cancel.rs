//! A caller that goes away cancels its call at a 2026-07-28 upstream over
//! Streamable HTTP: the gateway closes the call's response stream (that
//! revision's way to cancel over HTTP; a `notifications/cancelled` POST is
//! not), and the upstream's handler stops. The upstream is a server of this
//! crate on a loopback port, reached over the wire.

mod support;

use mcp_runtime::client::Client;
use mcp_runtime::prelude::*;
use mcp_runtime::testing::TestClient;
use mcp_runtime::transport::http::HttpConfig;
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static STARTED: AtomicBool = AtomicBool::new(false);
static STOPPED: AtomicBool = AtomicBool::new(false);

/// Set when the handler's future is dropped.
struct Stopped;

impl Drop for Stopped {
    fn drop(&mut self) {
        STOPPED.store(true, Ordering::SeqCst);
    }
}

/// Runs until cancelled.
#[tool]
async fn held(cancel: Cancellation) -> String {
    let _stopped = Stopped;
    STARTED.store(true, Ordering::SeqCst);
    cancel.cancelled().await;
    STOPPED.store(true, Ordering::SeqCst);
    "cancelled".into()
}

async fn until(what: &str, flag: &AtomicBool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !flag.load(Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "{what} within 10 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_that_goes_away_cancels_its_call_at_an_http_upstream() {
    let upstream = Server::builder().name("upstream").build().expect("the upstream builds");
    let upstream = support::http::serve_with(upstream, HttpConfig::default()).await;
    let url = format!("http://{}/mcp", upstream.addr);

    let gateway = Server::builder()
        .proxy("up", Client::http(&url))
        .build()
        .expect("the gateway builds");
    gateway.start();
    let caller = TestClient::new(&gateway);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !caller
        .list_tools()
        .await
        .is_ok_and(|tools| tools.iter().any(|t| t.name == "up_held"))
    {
        assert!(Instant::now() < deadline, "up_held listed within 10 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // The call is dropped (the caller went away) once the upstream runs it.
    tokio::select! {
        outcome = caller.call_tool("up_held", json!({})) => panic!("the call ended first: {outcome:?}"),
        () = until("the upstream runs the call", &STARTED) => {}
    }
    until("the upstream's handler stops", &STOPPED).await;
    drop(upstream);
}
