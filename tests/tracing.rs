//! Every request runs in a `tracing` span `mcp.request` with its method,
//! id, name, era and the caller's W3C trace context from `_meta`; its
//! outcome and duration are recorded at the end. Checked with a layer that
//! records span fields, the way an OpenTelemetry layer would see them.

use mcp_runtime::__private::engine::{handle_request, parse, Message, Scope};
use mcp_runtime::prelude::*;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context as LayerContext, SubscriberExt};
use tracing_subscriber::Layer;

/// Says hello.
#[tool]
fn traced_hello(name: String) -> String {
    format!("hello {name}")
}

type Spans = Arc<Mutex<Vec<(String, BTreeMap<String, String>)>>>;

struct Recorder(Spans);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), value.to_string());
    }
}

impl<S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>> Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _: LayerContext<'_, S>) {
        let mut fields = BTreeMap::new();
        fields.insert("#id".into(), id.into_u64().to_string());
        attrs.record(&mut Fields(&mut fields));
        self.0
            .lock()
            .unwrap()
            .push((attrs.metadata().name().to_owned(), fields));
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, _: LayerContext<'_, S>) {
        let mut spans = self.0.lock().unwrap();
        if let Some((_, fields)) = spans.iter_mut().find(|(_, f)| f["#id"] == id.into_u64().to_string()) {
            values.record(&mut Fields(fields));
        }
    }
}

async fn call(server: &Server, params: serde_json::Value) -> serde_json::Value {
    let line = json!({"jsonrpc": "2.0", "id": 42, "method": "tools/call", "params": params}).to_string();
    let Ok(Message::Request(request)) = parse(line.as_bytes()) else {
        panic!("not a request")
    };
    let reply = handle_request(server, &request, Scope::default()).await;
    serde_json::from_slice(&reply.body).unwrap()
}

/// The spans recorded, the subscriber that records them, and a runtime to
/// run requests on under it.
fn recording() -> (Spans, impl tracing::Subscriber + Send + Sync, tokio::runtime::Runtime) {
    let spans: Spans = Arc::default();
    let subscriber = tracing_subscriber::registry().with(Recorder(spans.clone()));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    (spans, subscriber, runtime)
}

#[test]
fn a_request_span_carries_the_conventions_attributes_and_its_outcome() {
    let (spans, subscriber, runtime) = recording();
    let server = Server::builder().build().unwrap();
    let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    tracing::subscriber::with_default(subscriber, || {
        runtime.block_on(async {
            let ok = call(
                &server,
                json!({"name": "traced_hello", "arguments": {"name": "Ada"}, "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "traceparent": parent, "tracestate": "vendor=1"}}),
            )
            .await;
            assert_eq!(ok["result"]["content"][0]["text"], "hello Ada");
            let bad = call(&server, json!({"name": "traced_hello", "arguments": {}})).await;
            assert_eq!(bad["error"]["code"], -32602);
        })
    });
    let spans = spans.lock().unwrap();
    let requests: Vec<_> = spans.iter().filter(|(name, _)| name == "mcp.request").collect();
    assert_eq!(requests.len(), 2, "{spans:?}");
    let first = &requests[0].1;
    // The OpenTelemetry MCP conventions' names (gen-ai/mcp.md).
    assert_eq!(first["otel.name"], "tools/call traced_hello", "{first:?}");
    assert_eq!(first["otel.kind"], "server");
    assert_eq!(first["mcp.method.name"], "tools/call");
    assert_eq!(first["jsonrpc.request.id"], "42");
    assert_eq!(first["gen_ai.tool.name"], "traced_hello");
    assert_eq!(first["gen_ai.operation.name"], "execute_tool");
    assert_eq!(first["mcp.protocol.version"], "2026-07-28");
    assert_eq!(first["mcp_runtime.era"], "modern");
    assert!(!first.contains_key("error.type"), "{first:?}");
    assert!(!first.contains_key("otel.status_code"), "{first:?}");
    let second = &requests[1].1;
    assert_eq!(second["error.type"], "-32602", "{second:?}");
    assert_eq!(second["rpc.response.status_code"], "-32602");
    assert_eq!(second["otel.status_code"], "ERROR");
    assert!(
        second["otel.status_description"].contains("Invalid params"),
        "{second:?}"
    );
}

/// A request's span names the version of HTTP it came over: `1.1` from the
/// stand-alone server, `2` from an HTTP/2 server that mounts the tower
/// service (the `http::Request` such a server hands it says which).
#[test]
fn a_request_span_names_the_http_version_it_came_over() {
    use http_body_util::Full;
    use hyper::body::Bytes;
    use mcp_runtime::transport::http::McpService;
    let (spans, subscriber, runtime) = recording();
    let mut service = McpService::new(Server::builder().build().unwrap());
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "traced_hello", "arguments": {"name": "Ada"}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    tracing::subscriber::with_default(subscriber, || {
        runtime.block_on(async {
            for version in [hyper::Version::HTTP_11, hyper::Version::HTTP_2] {
                let request = hyper::Request::builder()
                    .method(hyper::Method::POST)
                    .uri("http://localhost/mcp")
                    .version(version)
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", "2026-07-28")
                    .header("mcp-method", "tools/call")
                    .header("mcp-name", "traced_hello")
                    .body(Full::new(Bytes::from(body.clone())))
                    .unwrap();
                let response = tower_service::Service::call(&mut service, request).await.unwrap();
                assert_eq!(response.status(), 200, "{version:?}");
            }
        })
    });
    let spans = spans.lock().unwrap();
    let versions: Vec<_> = spans
        .iter()
        .filter(|(name, _)| name == "mcp.request")
        .map(|(_, f)| {
            assert_eq!(f["network.transport"], "tcp", "{f:?}");
            assert_eq!(f["network.protocol.name"], "http", "{f:?}");
            f["network.protocol.version"].as_str()
        })
        .collect();
    assert_eq!(versions, ["1.1", "2"], "{spans:?}");
}
