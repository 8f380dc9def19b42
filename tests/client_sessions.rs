//! The client against a 2025-11-25 server over Streamable HTTP that
//! restarts: the server no longer knows the session (404), and the client
//! opens a new one, sending the request that got the 404 again on it. The
//! server is one of this crate's, on a loopback port, started again on the
//! same port.

use mcp_runtime::client::{Calls, Client, Era};
use mcp_runtime::prelude::*;
use mcp_runtime::transport::http::{HttpConfig, HttpServer};
use serde_json::json;
use std::net::SocketAddr;
use std::time::Duration;

/// Says hello.
#[tool]
fn hello(name: String) -> String {
    format!("Hello, {name}!")
}

/// Serves a new server (with no sessions) on `addr` until `stop` is sent.
async fn serve(
    addr: &str,
) -> (
    SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let server = Server::builder().build().expect("the server builds");
    let http = HttpServer::bind(server, addr, HttpConfig::default())
        .await
        .expect("a loopback port");
    let bound = http.local_addr().expect("an address");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(async move {
        let _ = http
            .serve_until(async {
                let _ = stopped.await;
            })
            .await;
    });
    (bound, stop, serving)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_the_server_forgot_is_opened_again() {
    let (addr, stop, serving) = serve("127.0.0.1:0").await;
    let client = Client::http(format!("http://{addr}/mcp"))
        .era(Era::Legacy)
        .connect()
        .await
        .expect("connects");
    let mut connections = client.connections();
    connections.borrow_and_update();
    let first = client.call_tool("hello", json!({"name": "Ada"})).await.expect("a call");
    assert_eq!(first.text(), "Hello, Ada!");

    // The server restarts: its sessions are gone.
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .expect("the server stops")
        .expect("it stopped cleanly");
    let (_, _stop_again, _serving_again) = serve(&addr.to_string()).await;

    let again = client
        .call_tool("hello", json!({"name": "Grace"}))
        .await
        .expect("the call, on a new session");
    assert_eq!(again.text(), "Hello, Grace!");
    assert!(connections.has_changed().expect("the client lives"), "a new connection");
    let listed = client.list_tools().await.expect("a list");
    assert!(listed.iter().any(|t| t.name == "hello"));
}
