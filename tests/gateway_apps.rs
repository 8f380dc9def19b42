//! MCP Apps through the gateway: an upstream of this crate, reached over
//! Streamable HTTP on loopback, serves a view and a tool only its app may
//! call. The gateway serves both (it lists them as a host that renders
//! apps would be listed them), and shows each caller what it renders: a
//! caller that renders apps is listed the view and both tools with their
//! `_meta.ui`; any other caller is listed neither the view nor the
//! app-only tool. Reading the view through the gateway gives the app MIME
//! type.

mod support;

use mcp_runtime::client::Client;
use mcp_runtime::prelude::*;
use mcp_runtime::testing::TestClient;
use mcp_runtime::transport::http::HttpConfig;
use serde_json::json;
use std::time::{Duration, Instant};

/// The board's view.
#[resource(uri = "ui://board/view", app(prefers_border))]
fn board_view() -> &'static str {
    "<!DOCTYPE html><html><head><title>Board</title></head><body></body></html>"
}

/// Shows the board.
#[tool(ui = "ui://board/view", visibility(model, app))]
fn board() -> &'static str {
    "the board"
}

/// Moves a card: only the app calls it.
#[tool(ui = "ui://board/view", visibility(app))]
fn move_card(card: String) -> String {
    format!("{card} moved")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstreams_apps_are_served_to_callers_that_render_them() {
    let upstream = Server::builder()
        .empty()
        .name("board")
        .tool::<board>()
        .tool::<move_card>()
        .resource::<board_view>()
        .build()
        .expect("the upstream builds");
    let upstream = support::http::serve_with(upstream, HttpConfig::default()).await;
    let url = format!("http://{}/mcp", upstream.addr);
    let gateway = Server::builder()
        .empty()
        .name("gateway")
        .proxy("up", Client::http(&url))
        .build()
        .expect("the gateway builds");
    gateway.start();

    let renders = TestClient::new(&gateway).rendering_apps();
    let deadline = Instant::now() + Duration::from_secs(10);
    // Until the upstream's lists are read, the gateway serves no tools.
    let tools = loop {
        let tools = renders.list_tools().await.unwrap_or_default();
        if tools.iter().any(|t| t.name == "up_board") {
            break tools;
        }
        assert!(Instant::now() < deadline, "the upstream's tools within 10 s: {tools:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["up_board", "up_move_card"], "a caller that renders apps");
    for tool in &tools {
        let ui = &tool.meta.as_ref().expect("_meta")["ui"];
        assert_eq!(ui["resourceUri"], "ui://board/view", "{}", tool.name);
    }
    let resources = renders.list_resources().await.expect("a list");
    let view = resources
        .iter()
        .find(|r| r.uri == "ui://board/view")
        .expect("the view is listed");
    assert_eq!(view.mime_type.as_deref(), Some("text/html;profile=mcp-app"));
    let read = renders.read_resource("ui://board/view").await.expect("the view reads");
    let read = serde_json::to_value(&read).unwrap();
    assert_eq!(read["contents"][0]["mimeType"], "text/html;profile=mcp-app", "{read}");
    assert_eq!(read["contents"][0]["_meta"]["ui"]["prefersBorder"], true, "{read}");
    let moved = renders.call_tool("up_move_card", json!({"card": "c1"})).await.unwrap();
    assert_eq!(moved.text(), "c1 moved");

    let plain = TestClient::new(&gateway);
    let tools = plain.list_tools().await.expect("a list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["up_board"], "a caller that does not render apps");
    let resources = plain.list_resources().await.expect("a list");
    assert!(resources.iter().all(|r| r.uri != "ui://board/view"), "{resources:?}");
    drop(upstream);
}
