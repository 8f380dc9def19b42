//! OpenTelemetry (the `otel` feature): each request's `mcp.request` span
//! exported to a collector over OTLP, as a child of the caller's span when
//! the request carries a W3C `traceparent` in `_meta` (SEP-414).
//!
//! A [`main!`](crate::main!) binary exports by itself when
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)
//! is set, for example `http://127.0.0.1:4318`; `OTEL_SERVICE_NAME` names
//! the service (default: the server's name). A binary with its own `main`
//! calls [`init`] and keeps the guard until it exits. A test, or an
//! application with its own subscriber, adds
//! `tracing_opentelemetry::layer().with_tracer(..)` itself: the spans carry
//! the caller's trace either way.
//!
//! The spans are at DEBUG level under the `mcp_runtime` target; the
//! exporting layer records them whatever `RUST_LOG` says of the terminal.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::SdkTracerProvider;
use std::collections::HashMap;
use std::io::IsTerminal;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

/// Why OpenTelemetry could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum OtelError {
    /// The OTLP exporter could not be built (a malformed endpoint, say).
    #[error("the OTLP exporter: {0}")]
    Exporter(String),
    /// Another global `tracing` subscriber is already installed.
    #[error("a tracing subscriber is already installed: {0}")]
    Subscriber(String),
}

/// Keeps the exporter running; dropping it sends the spans not yet sent.
#[derive(Debug)]
pub struct OtelGuard {
    provider: SdkTracerProvider,
}

impl Drop for OtelGuard {
    fn drop(&mut self) {
        if let Err(e) = self.provider.shutdown() {
            eprintln!("OpenTelemetry: the last spans were not all sent: {e}");
        }
    }
}

/// Whether the environment names an OTLP endpoint.
pub fn configured() -> bool {
    ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
}

/// Installs the global subscriber: logs to stderr as `RUST_LOG` says
/// (default `info`), and every `mcp.request` span exported over OTLP
/// (HTTP/protobuf, to the endpoint the standard `OTEL_EXPORTER_OTLP_*`
/// variables name, by default `http://localhost:4318`) for the service
/// `OTEL_SERVICE_NAME`, else `service_name`.
pub fn init(service_name: &str) -> Result<OtelGuard, OtelError> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .build()
        .map_err(|e| OtelError::Exporter(e.to_string()))?;
    let name = std::env::var("OTEL_SERVICE_NAME").unwrap_or_else(|_| service_name.to_owned());
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(opentelemetry_sdk::Resource::builder().with_service_name(name).build())
        .build();
    let tracer = provider.tracer("mcp-runtime");
    let spans = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_filter(tracing_subscriber::filter::Targets::new().with_target("mcp_runtime", tracing::Level::DEBUG));
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_filter(filter);
    tracing_subscriber::registry()
        .with(spans)
        .with(logs)
        .try_init()
        .map_err(|e| OtelError::Subscriber(e.to_string()))?;
    Ok(OtelGuard { provider })
}

/// The W3C trace context a request's `_meta` carries (SEP-414).
#[derive(serde::Deserialize)]
struct Params<'a> {
    #[serde(rename = "_meta", borrow)]
    meta: Option<TraceMeta<'a>>,
}

#[derive(serde::Deserialize)]
struct TraceMeta<'a> {
    #[serde(borrow)]
    traceparent: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    tracestate: Option<std::borrow::Cow<'a, str>>,
}

/// Makes `span` a child of the caller's span named by the W3C
/// `traceparent` (and `tracestate`) in the request's `_meta`; a missing or
/// malformed one leaves it a root, as W3C says. Called before the span is
/// first entered (the OpenTelemetry span starts then).
pub(crate) fn continue_trace(span: &tracing::Span, params: Option<&serde_json::value::RawValue>) {
    use opentelemetry::propagation::TextMapPropagator;
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    let Some(meta) = params
        .and_then(|p| serde_json::from_str::<Params<'_>>(p.get()).ok())
        .and_then(|p| p.meta)
    else {
        return;
    };
    let Some(traceparent) = meta.traceparent else {
        return;
    };
    let mut carrier = HashMap::with_capacity(2);
    carrier.insert("traceparent".to_owned(), traceparent.into_owned());
    if let Some(state) = meta.tracestate {
        carrier.insert("tracestate".to_owned(), state.into_owned());
    }
    let parent = opentelemetry_sdk::propagation::TraceContextPropagator::new().extract(&carrier);
    if parent.span().span_context().is_valid() {
        let _ = span.set_parent(parent);
    }
}
