//! OpenTelemetry wired by an application with its own subscriber: the span
//! of a request that carries a W3C `traceparent` in `_meta` (SEP-414) is
//! exported as a child of the caller's span, in the caller's trace, named and
//! attributed after the OpenTelemetry MCP conventions. The exporter is the
//! SDK's in-memory one behind tracing-opentelemetry, as such an application
//! wires it; `tests/otlp.rs` checks what a binary sends to a real OTLP
//! receiver.

use mcp_runtime::prelude::*;
use mcp_runtime::testing::TestClient;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry::Value as OtelValue;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt;

/// Greets.
#[tool]
fn traced_greet(name: String) -> String {
    format!("Hello, {name}!")
}

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| match &kv.value {
            OtelValue::String(s) => s.as_str().to_owned(),
            other => other.to_string(),
        })
}

#[tokio::test]
async fn the_request_span_continues_the_callers_trace() {
    let (exporter, provider, _installed) = recorded();

    let server = Server::builder().empty().tool::<traced_greet>().build().unwrap();
    let client = TestClient::new(&server).as_principal("ada");
    let traceparent = format!("00-{TRACE_ID}-{CALLER_SPAN}-01");
    let result = client
        .request(
            "tools/call",
            json!({"name": "traced_greet", "arguments": {"name": "Ada"},
                   "_meta": {"traceparent": traceparent, "tracestate": "vendor=1"}}),
        )
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "Hello, Ada!");
    // Without a traceparent: a trace of its own.
    client.request("tools/list", json!({})).await.unwrap();
    provider.force_flush().unwrap();

    let spans = exporter.get_finished_spans().unwrap();
    let requests: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.span_kind == opentelemetry::trace::SpanKind::Server)
        .collect();
    assert_eq!(requests.len(), 2, "{spans:#?}");
    let call = requests
        .iter()
        .find(|s| s.name == "tools/call traced_greet")
        .expect("the call's span");
    assert_eq!(call.span_context.trace_id().to_string(), TRACE_ID, "the caller's trace");
    assert_eq!(
        call.parent_span_id.to_string(),
        CALLER_SPAN,
        "the caller's span is the parent"
    );
    assert_eq!(call.span_context.trace_state().header(), "vendor=1");
    assert_eq!(attribute(call, "mcp.method.name").as_deref(), Some("tools/call"));
    assert_eq!(attribute(call, "gen_ai.tool.name").as_deref(), Some("traced_greet"));
    assert_eq!(
        attribute(call, "gen_ai.operation.name").as_deref(),
        Some("execute_tool")
    );
    assert_eq!(attribute(call, "mcp.protocol.version").as_deref(), Some("2026-07-28"));
    assert_eq!(attribute(call, "mcp_runtime.era").as_deref(), Some("modern"));
    assert_eq!(attribute(call, "mcp_runtime.principal").as_deref(), Some("ada"));
    assert_eq!(attribute(call, "error.type"), None);
    // The tracing-opentelemetry bridge's own fields are not attributes.
    assert_eq!(attribute(call, "otel.name"), None);

    let list = requests
        .iter()
        .find(|s| s.name == "tools/list")
        .expect("the list's span");
    assert_ne!(
        list.span_context.trace_id().to_string(),
        TRACE_ID,
        "no traceparent: a new trace"
    );
    assert_eq!(list.parent_span_id.to_string(), "0000000000000000", "a root span");
}

#[mcp_runtime::form]
struct Who {
    /// Who is asking.
    name: String,
}

/// Asks who is there, then greets them.
#[tool]
fn traced_ask(input: Input) -> Flow<String> {
    match input.elicit::<Who>("who", "Who is there?")? {
        Elicited::Accepted(who) => Ok(format!("Hello, {}!", who.name)),
        _ => Ok("Nobody.".into()),
    }
}

/// Works a moment in a task.
#[tool(task)]
async fn traced_task() -> Result<String, String> {
    tokio::time::sleep(std::time::Duration::from_millis(30)).await;
    Ok("done".into())
}

fn recorded() -> (
    InMemorySpanExporter,
    SdkTracerProvider,
    tracing::subscriber::DefaultGuard,
) {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber =
        tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(provider.tracer("otel-test")));
    (exporter, provider, tracing::subscriber::set_default(subscriber))
}

fn links(span: &SpanData) -> Vec<(String, String)> {
    span.links
        .iter()
        .map(|l| {
            (
                l.span_context.trace_id().to_string(),
                l.span_context.span_id().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn each_mrtr_round_links_to_the_round_before() {
    let (exporter, provider, _installed) = recorded();
    let server = Server::builder().empty().tool::<traced_ask>().build().unwrap();
    let client = TestClient::new(&server).on_elicit(|_| json!({"action": "accept", "content": {"name": "Ada"}}));
    let result = client.call_tool("traced_ask", json!({})).await.unwrap();
    assert_eq!(result.text(), "Hello, Ada!");
    assert_eq!(client.rounds(), 1);
    provider.force_flush().unwrap();

    let spans = exporter.get_finished_spans().unwrap();
    let rounds: Vec<&SpanData> = spans.iter().filter(|s| s.name == "tools/call traced_ask").collect();
    assert_eq!(rounds.len(), 2, "{spans:#?}");
    let (first, second) = (rounds[0], rounds[1]);
    assert!(links(first).is_empty(), "the first round links nowhere");
    assert_eq!(
        links(second),
        [(
            first.span_context.trace_id().to_string(),
            first.span_context.span_id().to_string()
        )],
        "the retried round links to the round that asked"
    );
    assert_eq!(attribute(second, "mcp_runtime.mrtr.round").as_deref(), Some("1"));
    assert_eq!(attribute(first, "mcp_runtime.mrtr.round"), None);
}

#[tokio::test]
async fn a_task_runs_in_a_span_linked_to_its_call_and_polls_link_there() {
    let (exporter, provider, _installed) = recorded();
    let server = Server::builder().empty().tool::<traced_task>().build().unwrap();
    let client = TestClient::new(&server).with_tasks();
    let result = client.call_tool("traced_task", json!({})).await.unwrap();
    assert_eq!(result.text(), "done");
    provider.force_flush().unwrap();

    let spans = exporter.get_finished_spans().unwrap();
    let call = spans
        .iter()
        .find(|s| s.name == "tools/call traced_task")
        .expect("the call's span");
    let created_by = (
        call.span_context.trace_id().to_string(),
        call.span_context.span_id().to_string(),
    );
    let work = spans
        .iter()
        .find(|s| s.name == "execute_tool traced_task")
        .expect("the task's span");
    assert_eq!(work.span_kind, opentelemetry::trace::SpanKind::Internal);
    assert_eq!(links(work), std::slice::from_ref(&created_by));
    let task_id = attribute(work, "mcp_runtime.task.id").expect("the task id");
    let polls: Vec<&SpanData> = spans.iter().filter(|s| s.name == "tasks/get").collect();
    assert!(!polls.is_empty(), "{spans:#?}");
    for poll in polls {
        assert_eq!(
            links(poll),
            std::slice::from_ref(&created_by),
            "tasks/get links to the call"
        );
        assert_eq!(
            attribute(poll, "mcp_runtime.task.id").as_deref(),
            Some(task_id.as_str())
        );
    }
}
