//! MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865): `ui://` resources
//! served as `text/html;profile=mcp-app` with `_meta.ui`, tools linked to
//! them, and the per-request negotiation: a caller whose capabilities
//! declare the extension with the app MIME type (2026-07-28: the request's
//! `_meta`; 2025-11-25: the session's `initialize`) is listed the tools with
//! `_meta.ui` and the app resources; any other caller gets the tools without
//! UI metadata, no app-only tool and no app resource, and may still call
//! and read them all. Every message is validated against its revision's
//! schema, and every `_meta.ui` against the ext-apps schema.

mod support;

use mcp_runtime::prelude::*;
use mcp_runtime::protocol::{Resource, Tool, UiToolMeta, Visibility};
use mcp_runtime::transport::http::{HttpConfig, HttpServer};
use mcp_runtime::{BuildError, ResourceEntry, ToolEntry};
use serde_json::{json, Value};
use std::net::SocketAddr;
use support::http::{post, rpc, standard_headers};
use support::{assert_valid, meta_with, names, validate_emitted, validate_legacy, StdioClient};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const VIEW: &str = "ui://weather/forecast";
const HTML: &str = "<!DOCTYPE html><html><head><title>Forecast</title></head><body></body></html>";

/// The forecast's view.
#[resource(
    uri = "ui://weather/forecast",
    app(
        csp(connect = ["https://api.weather.example"], resource = ["https://cdn.weather.example"]),
        permissions(geolocation, clipboard_write),
        prefers_border
    )
)]
fn forecast_view() -> &'static str {
    HTML
}

/// Weather stations (not an app).
#[resource(uri = "wx://stations", mime_type = "text/plain")]
fn stations() -> &'static str {
    "oslo bergen"
}

/// Today's forecast for a city.
#[tool(ui = "ui://weather/forecast", visibility(model, app))]
fn forecast(city: String, apps: RendersApps) -> String {
    if apps.get() {
        format!("Forecast for {city}: in the view.")
    } else {
        format!("{city}: sunny, 21 °C.")
    }
}

/// Refreshes the view's data: only the app calls it.
#[tool(ui = "ui://weather/forecast", visibility(app))]
fn refresh(city: String) -> String {
    format!("{city} refreshed")
}

/// Says hello.
#[tool]
fn hello() -> &'static str {
    "hello"
}

fn server() -> Server {
    Server::builder()
        .empty()
        .name("apps-test")
        .tool::<forecast>()
        .tool::<refresh>()
        .tool::<hello>()
        .resource::<forecast_view>()
        .resource::<stations>()
        .build()
        .expect("the server builds")
}

/// Capabilities that render apps.
fn apps() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
}

/// The three kinds of caller that do not render apps.
fn no_apps() -> [Value; 3] {
    [
        json!({}),
        json!({"extensions": {"io.modelcontextprotocol/ui": {}}}),
        json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}}}),
    ]
}

/// Checks every `_meta.ui` of a result against the ext-apps schema, and
/// that tools mirror `resourceUri` in the deprecated flat key.
fn validate_apps(result: &Value) {
    for tool in result["tools"].as_array().into_iter().flatten() {
        if let Some(ui) = tool["_meta"].get("ui") {
            assert_valid("ext-apps", "McpUiToolMeta", ui);
            assert_eq!(tool["_meta"]["ui/resourceUri"], ui["resourceUri"], "{tool}");
        }
        assert!(
            tool["_meta"].get("ui/resourceUri").is_none() || tool["_meta"].get("ui").is_some(),
            "{tool}"
        );
    }
    let items = result["resources"]
        .as_array()
        .into_iter()
        .chain(result["contents"].as_array());
    for item in items.flatten() {
        if let Some(ui) = item["_meta"].get("ui") {
            assert_valid("ext-apps", "McpUiResourceMeta", ui);
        }
    }
}

fn tool<'a>(result: &'a Value, name: &str) -> &'a Value {
    result["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name} in {result}"))
}

const EXPECTED_VIEW_UI: &str = r#"{"csp":{"connectDomains":["https://api.weather.example"],"resourceDomains":["https://cdn.weather.example"]},"permissions":{"geolocation":{},"clipboardWrite":{}},"prefersBorder":true}"#;

/// What an apps-capable caller is shown, whatever the era (`result` of each).
fn assert_apps_view(tools: &Value, resources: &Value, read: &Value, call: &Value) {
    assert_eq!(names(tools, "tools", "name"), ["forecast", "hello", "refresh"]);
    assert_eq!(
        tool(tools, "forecast")["_meta"],
        json!({"ui": {"resourceUri": VIEW, "visibility": ["model", "app"]}, "ui/resourceUri": VIEW})
    );
    assert_eq!(tool(tools, "refresh")["_meta"]["ui"]["visibility"], json!(["app"]));
    assert!(tool(tools, "hello").get("_meta").is_none());
    assert_eq!(names(resources, "resources", "uri"), [VIEW, "wx://stations"]);
    let listed = &resources["resources"][0];
    assert_eq!(listed["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(listed["_meta"]["ui"].to_string(), EXPECTED_VIEW_UI);
    assert_read(read);
    assert_eq!(call["content"][0]["text"], "Forecast for Oslo: in the view.");
}

/// What any other caller is shown.
fn assert_plain_view(tools: &Value, resources: &Value, read: &Value, call: &Value, refreshed: &Value) {
    assert_eq!(names(tools, "tools", "name"), ["forecast", "hello"]);
    for t in tools["tools"].as_array().unwrap() {
        assert!(t.get("_meta").is_none(), "UI metadata for a caller without apps: {t}");
    }
    assert_eq!(names(resources, "resources", "uri"), ["wx://stations"]);
    assert_read(read);
    assert_eq!(call["content"][0]["text"], "Oslo: sunny, 21 °C.");
    // The app-only tool is not listed, but can be called.
    assert_eq!(refreshed["content"][0]["text"], "Oslo refreshed");
}

/// `resources/read` of the view: the app MIME type, the HTML, `_meta.ui`.
fn assert_read(read: &Value) {
    let item = &read["contents"][0];
    assert_eq!(item["uri"], VIEW);
    assert_eq!(item["mimeType"], "text/html;profile=mcp-app");
    assert!(item["text"].as_str().unwrap().starts_with("<!DOCTYPE html>"));
    assert_eq!(item["_meta"]["ui"].to_string(), EXPECTED_VIEW_UI);
}

fn call(name: &str) -> Value {
    json!({"name": name, "arguments": {"city": "Oslo"}})
}

// ------------------------------------------------------------ modern era

/// The four requests of one modern caller over in-process stdio.
async fn modern_stdio(caps: Value) -> [Value; 5] {
    let mut c = StdioClient::start(server());
    let meta = meta_with(caps);
    let mut out = Vec::new();
    for (id, (method, params)) in [
        ("tools/list", json!({})),
        ("resources/list", json!({})),
        ("resources/read", json!({"uri": VIEW})),
        ("tools/call", call("forecast")),
        ("tools/call", call("refresh")),
    ]
    .into_iter()
    .enumerate()
    {
        let mut params = params;
        params["_meta"] = meta.clone();
        let v = c.call(id as i64 + 1, method, params).await;
        let result = v["result"].clone();
        assert!(result.is_object(), "{method}: {v}");
        validate_apps(&result);
        if method.ends_with("/list") {
            assert_eq!(result["cacheScope"], "private", "a list that varies by caller: {v}");
        }
        out.push(result);
    }
    out.try_into().unwrap()
}

#[tokio::test]
async fn a_modern_caller_that_renders_apps_is_shown_them() {
    let [tools, resources, read, call, refreshed] = modern_stdio(apps()).await;
    assert_apps_view(&tools, &resources, &read, &call);
    assert_eq!(refreshed["content"][0]["text"], "Oslo refreshed");
}

#[tokio::test]
async fn a_modern_caller_that_does_not_render_apps_gets_text() {
    for caps in no_apps() {
        let [tools, resources, read, call, refreshed] = modern_stdio(caps).await;
        assert_plain_view(&tools, &resources, &read, &call, &refreshed);
    }
}

#[tokio::test]
async fn the_same_server_answers_each_request_by_its_own_capabilities() {
    let addr = serve(server()).await;
    for round in 0..2 {
        let (caps, expected) = if round == 0 {
            (apps(), vec!["forecast", "hello", "refresh"])
        } else {
            (json!({}), vec!["forecast", "hello"])
        };
        let headers = standard_headers("tools/list", None);
        let body = rpc(1, "tools/list", json!({"_meta": meta_with(caps.clone())}));
        let v = post(addr, &headers, body).await.json(Some("tools/list"));
        validate_apps(&v["result"]);
        assert_eq!(names(&v["result"], "tools", "name"), expected);
        assert_eq!(v["result"]["cacheScope"], "private");
        let headers = standard_headers("tools/call", Some("forecast"));
        let body = rpc(
            2,
            "tools/call",
            json!({"_meta": meta_with(caps), "name": "forecast", "arguments": {"city": "Oslo"}}),
        );
        let v = post(addr, &headers, body).await.json(Some("tools/call"));
        let text = if round == 0 {
            "Forecast for Oslo: in the view."
        } else {
            "Oslo: sunny, 21 °C."
        };
        assert_eq!(v["result"]["content"][0]["text"], text);
    }
}

#[tokio::test]
async fn a_server_without_apps_lists_as_before() {
    let server = Server::builder()
        .empty()
        .name("plain")
        .tool::<hello>()
        .resource::<stations>()
        .build()
        .unwrap();
    let mut c = StdioClient::start(server);
    for caps in [apps(), json!({})] {
        let v = c.call(1, "tools/list", json!({"_meta": meta_with(caps)})).await;
        assert_eq!(v["result"]["cacheScope"], "public", "nothing varies by caller: {v}");
    }
}

async fn serve(server: Server) -> SocketAddr {
    let http = HttpServer::bind(server, "127.0.0.1:0", HttpConfig::default())
        .await
        .unwrap();
    let addr = http.local_addr().unwrap();
    tokio::spawn(http.serve_until(std::future::pending()));
    addr
}

// ------------------------------------------------------------ legacy era

/// The results of one 2025-11-25 session over in-memory stdio, every line
/// validated against that revision.
async fn legacy_stdio(caps: Value) -> [Value; 5] {
    let (mut w, sr) = tokio::io::duplex(1 << 16);
    let (sw, cr) = tokio::io::duplex(1 << 16);
    tokio::spawn(mcp_runtime::transport::stdio::serve_io(server(), sr, sw));
    let mut r = BufReader::new(cr).lines();
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": caps,
        "clientInfo": {"name": "legacy-client", "version": "1.0.0"}});
    let mut out = Vec::new();
    for (id, (method, params)) in [
        ("initialize", init),
        ("tools/list", json!({})),
        ("resources/list", json!({})),
        ("resources/read", json!({"uri": VIEW})),
        ("tools/call", call("forecast")),
        ("tools/call", call("refresh")),
    ]
    .into_iter()
    .enumerate()
    {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        w.write_all(format!("{line}\n").as_bytes()).await.unwrap();
        let line = tokio::time::timeout(std::time::Duration::from_secs(5), r.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        validate_legacy(&v, Some(method));
        validate_apps(&v["result"]);
        if id == 0 {
            let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            w.write_all(format!("{note}\n").as_bytes()).await.unwrap();
        } else {
            out.push(v["result"].clone());
        }
    }
    out.try_into().unwrap()
}

#[tokio::test]
async fn a_legacy_session_that_declared_apps_at_initialize_is_shown_them() {
    let [tools, resources, read, call, _] = legacy_stdio(apps()).await;
    assert_apps_view(&tools, &resources, &read, &call);
}

#[tokio::test]
async fn a_legacy_session_that_did_not_declare_apps_gets_text() {
    for caps in no_apps() {
        let [tools, resources, read, call, refreshed] = legacy_stdio(caps).await;
        assert_plain_view(&tools, &resources, &read, &call, &refreshed);
    }
}

// ------------------------------------------------------------ entries and links

fn dynamic_tool(name: &str) -> ToolEntry {
    let tool: Tool = serde_json::from_value(json!({"name": name, "inputSchema": {"type": "object"}})).unwrap();
    ToolEntry::dynamic(tool, |_args, _ctx| async { "done" })
}

fn dynamic_view(uri: &str) -> ResourceEntry {
    let resource = Resource {
        uri: uri.into(),
        name: "view".into(),
        ..Default::default()
    };
    ResourceEntry::dynamic(resource, |_uri, _ctx| async { HTML })
}

#[test]
fn a_tool_linked_to_a_view_no_resource_serves_does_not_build() {
    let error = Server::builder()
        .empty()
        .tool_entry(dynamic_tool("orphan").ui(UiToolMeta::view("ui://nowhere/view")))
        .resource_entry(dynamic_view("ui://somewhere/view").app(Default::default()))
        .build()
        .unwrap_err();
    assert_eq!(
        error,
        BuildError::UnknownView {
            tool: "orphan".into(),
            uri: "ui://nowhere/view".into()
        }
    );
    assert_eq!(
        error.to_string(),
        "tool `orphan` links to the view `ui://nowhere/view`, which no resource of the server serves"
    );
    // The `#[tool]` kind too: `forecast` without its view.
    let error = Server::builder().empty().tool::<forecast>().build().unwrap_err();
    assert!(
        matches!(error, BuildError::UnknownView { ref tool, .. } if tool == "forecast"),
        "{error}"
    );
    // And at run time: the catalog is not changed.
    let server = server();
    let added = server.add_tool(dynamic_tool("late").ui(UiToolMeta::view("ui://nowhere/view")));
    assert!(matches!(added, Err(BuildError::UnknownView { .. })), "{added:?}");
    assert!(matches!(
        server.remove_resource(VIEW),
        Err(BuildError::UnknownView { .. })
    ));
}

#[test]
fn an_app_resource_needs_a_static_ui_uri() {
    let error = Server::builder()
        .empty()
        .resource_entry(dynamic_view("https://example.com/view").app(Default::default()))
        .build()
        .unwrap_err();
    assert!(matches!(error, BuildError::InvalidApp(_)), "{error}");
    let error = Server::builder()
        .empty()
        .tool_entry(dynamic_tool("t").ui(UiToolMeta::view("https://example.com/view")))
        .build()
        .unwrap_err();
    assert!(matches!(error, BuildError::InvalidApp(_)), "{error}");
    // A view is an app resource, not any resource at a `ui://` URI.
    let error = Server::builder()
        .empty()
        .tool_entry(dynamic_tool("t").ui(UiToolMeta::view("ui://plain/view")))
        .resource_entry(dynamic_view("ui://plain/view"))
        .build()
        .unwrap_err();
    assert!(
        matches!(error, BuildError::InvalidApp(ref m) if m.contains("not marked `app(..)`")),
        "{error}"
    );
}

#[tokio::test]
async fn dynamic_entries_are_apps_too() {
    let server = Server::builder()
        .empty()
        .name("dynamic")
        .tool_entry(dynamic_tool("show").ui(UiToolMeta::view("ui://d/view")))
        .tool_entry(dynamic_tool("poll").ui(UiToolMeta::default().with_visibility([Visibility::App])))
        .resource_entry(dynamic_view("ui://d/view").app(Default::default()))
        .build()
        .unwrap();
    let mut c = StdioClient::start(server);
    let v = c.call(1, "tools/list", json!({"_meta": meta_with(apps())})).await;
    validate_apps(&v["result"]);
    assert_eq!(
        tool(&v["result"], "show")["_meta"],
        json!({"ui": {"resourceUri": "ui://d/view"}, "ui/resourceUri": "ui://d/view"})
    );
    assert_eq!(
        tool(&v["result"], "poll")["_meta"],
        json!({"ui": {"visibility": ["app"]}})
    );
    let v = c.call(2, "tools/list", json!({})).await;
    assert_eq!(names(&v["result"], "tools", "name"), ["show"]);
    let v = c.call(3, "resources/read", json!({"uri": "ui://d/view"})).await;
    let item = &v["result"]["contents"][0];
    assert_eq!(item["mimeType"], "text/html;profile=mcp-app");
    assert!(item.get("_meta").is_none(), "no sandbox asked for, no _meta.ui: {item}");
    // A `_meta.ui` written in the tool's own definition is read as `ui` says.
    let raw: Tool = serde_json::from_value(json!({"name": "raw", "inputSchema": {"type": "object"},
        "_meta": {"ui": {"visibility": ["app"]}}}))
    .unwrap();
    let server = Server::builder()
        .empty()
        .name("raw")
        .tool_entry(ToolEntry::dynamic(raw, |_args, _ctx| async { "raw" }))
        .tool_entry(dynamic_tool("other"))
        .build()
        .unwrap();
    let mut c = StdioClient::start(server);
    let v = c.call(1, "tools/list", json!({})).await;
    assert_eq!(names(&v["result"], "tools", "name"), ["other"]);
}

#[test]
fn the_extractor_reads_the_capabilities() {
    let caps: mcp_runtime::protocol::ClientCapabilities = serde_json::from_value(apps()).unwrap();
    assert!(RendersApps::declared_in(&caps).get());
    for caps in no_apps() {
        let caps: mcp_runtime::protocol::ClientCapabilities = serde_json::from_value(caps).unwrap();
        assert!(!RendersApps::declared_in(&caps).get());
    }
    // The handler is a plain function too.
    assert_eq!(forecast("Oslo".into(), RendersApps(false)), "Oslo: sunny, 21 °C.");
}

#[test]
fn the_wire_types_are_the_schema_s() {
    let ui = UiToolMeta::view(VIEW).with_visibility([Visibility::Model, Visibility::App]);
    assert_valid("ext-apps", "McpUiToolMeta", &serde_json::to_value(&ui).unwrap());
    let resource: mcp_runtime::protocol::UiResourceMeta = serde_json::from_str(EXPECTED_VIEW_UI).unwrap();
    assert_eq!(serde_json::to_string(&resource).unwrap(), EXPECTED_VIEW_UI);
    assert_valid(
        "ext-apps",
        "McpUiResourceMeta",
        &serde_json::to_value(&resource).unwrap(),
    );
    assert_valid(
        "ext-apps",
        "McpUiClientCapabilities",
        &apps()["extensions"]["io.modelcontextprotocol/ui"],
    );
    // The schema's own rules are kept by the types: no other key.
    assert!(serde_json::from_value::<UiToolMeta>(json!({"resourceUri": VIEW, "csp": {}})).is_err());
    let _ = validate_emitted;
}

#[tokio::test]
async fn a_mounted_apps_view_moves_with_its_resource() {
    let inner = server();
    let outer = Server::builder()
        .empty()
        .name("outer")
        .mount_with("eu", &inner, mcp_runtime::MountUris::Prefixed)
        .build()
        .expect("the view moved with its tool");
    let mut c = StdioClient::start(outer);
    let v = c.call(1, "tools/list", json!({"_meta": meta_with(apps())})).await;
    validate_apps(&v["result"]);
    let ui = &tool(&v["result"], "eu_forecast")["_meta"];
    assert_eq!(ui["ui"]["resourceUri"], "ui://eu/weather/forecast");
    assert_eq!(ui["ui/resourceUri"], "ui://eu/weather/forecast");
    let v = c
        .call(2, "resources/read", json!({"uri": "ui://eu/weather/forecast"}))
        .await;
    assert_eq!(v["result"]["contents"][0]["mimeType"], "text/html;profile=mcp-app");
    // Kept URIs: the view is where it was.
    let outer = Server::builder().empty().mount("eu", &server()).build();
    assert!(outer.is_ok(), "{outer:?}");
}
