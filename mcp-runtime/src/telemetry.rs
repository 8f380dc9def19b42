//! What the rest of the crate tells the telemetry: the metrics of the
//! OpenTelemetry MCP conventions, the gauges, and the span links that make
//! one trace of an MRTR dialogue or a task's life.
//!
//! Without the `otel` feature every function here is empty and inlined away.
//! With it, nothing is recorded until [`crate::otel`] installed the
//! instruments (an OTLP endpoint or a Prometheus address was configured):
//! until then each call costs one load of a `OnceLock`.

use crate::protocol::RequestId;

/// The environment variable naming the Prometheus text endpoint's address.
pub(crate) const METRICS_ADDR_ENV: &str = "MCP_METRICS_ADDR";

/// The span and metric attribute keys of the OpenTelemetry MCP semantic
/// conventions, and our own under `mcp_runtime.`.
#[cfg_attr(not(feature = "otel"), allow(dead_code))]
pub(crate) mod keys {
    pub const METHOD: &str = "mcp.method.name";
    pub const PROTOCOL_VERSION: &str = "mcp.protocol.version";
    pub const OPERATION: &str = "gen_ai.operation.name";
    pub const TOOL: &str = "gen_ai.tool.name";
    pub const PROMPT: &str = "gen_ai.prompt.name";
    pub const ERROR_TYPE: &str = "error.type";
    pub const STATUS_CODE: &str = "rpc.response.status_code";
    pub const NETWORK_TRANSPORT: &str = "network.transport";
    pub const NETWORK_PROTOCOL: &str = "network.protocol.name";
    /// `gen_ai.operation.name` of a tool call.
    pub const EXECUTE_TOOL: &str = "execute_tool";
    /// `error.type` of a tool result with `isError`.
    pub const TOOL_ERROR: &str = "tool_error";
    /// `error.type` of a request that ended unanswered: its client cancelled
    /// it, or went away, or the server stopped first.
    pub const CANCELLED: &str = "cancelled";
}

/// The gauges an operator watches, each counted up and down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gauge {
    /// Requests being served.
    Requests,
    /// Open `subscriptions/listen` streams and legacy GET streams.
    ListenStreams,
    /// Tasks running in this process.
    Tasks,
    /// Legacy sessions alive in this process.
    Sessions,
}

/// One count of a gauge, given back when dropped.
#[derive(Debug)]
pub(crate) struct Held {
    #[cfg(feature = "otel")]
    gauge: Option<Gauge>,
}

impl Held {
    /// Counts one of `gauge` until the returned value is dropped.
    #[inline]
    pub(crate) fn new(gauge: Gauge) -> Held {
        #[cfg(feature = "otel")]
        {
            let counted = imp::gauge_add(gauge, 1);
            Held {
                gauge: counted.then_some(gauge),
            }
        }
        #[cfg(not(feature = "otel"))]
        {
            let _ = gauge;
            Held {}
        }
    }
}

impl Drop for Held {
    #[inline]
    fn drop(&mut self) {
        #[cfg(feature = "otel")]
        if let Some(gauge) = self.gauge {
            imp::gauge_add(gauge, -1);
        }
    }
}

/// What `mcp.server.operation.duration` records of one request.
#[derive(Debug, Default)]
#[cfg_attr(not(feature = "otel"), allow(dead_code))]
pub(crate) struct Operation {
    /// `mcp.method.name`: a known method's name, else `_OTHER`.
    pub method: &'static str,
    /// The tool (`gen_ai.tool.name`) or prompt (`gen_ai.prompt.name`) the
    /// request named, once the catalog knew it (so that a caller cannot
    /// grow the metric's cardinality with made-up names).
    pub target: Option<Target>,
    /// `error.type`: a JSON-RPC error's code, `tool_error` or `cancelled`.
    pub error: Option<ErrorType>,
    /// `mcp.protocol.version`.
    pub version: Option<&'static str>,
    /// `network.transport`: `pipe` (stdio) or `tcp` (HTTP).
    pub network: Option<&'static str>,
}

/// The tool or prompt a request named.
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "otel"), allow(dead_code))]
pub(crate) enum Target {
    /// A tool's name.
    Tool(std::sync::Arc<str>),
    /// A prompt's name.
    Prompt(std::sync::Arc<str>),
}

/// How a request failed.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(feature = "otel"), allow(dead_code))]
pub(crate) enum ErrorType {
    /// A JSON-RPC error with this code.
    Code(i32),
    /// A tool result with `isError`.
    ToolError,
    /// No answer: the request was dropped while it was served.
    Cancelled,
}

/// Whether metrics are being recorded (an exporter or a scrape endpoint was set up).
#[inline]
pub(crate) fn metrics_on() -> bool {
    #[cfg(feature = "otel")]
    {
        imp::installed()
    }
    #[cfg(not(feature = "otel"))]
    {
        false
    }
}

/// Records one request's `mcp.server.operation.duration`.
#[inline]
pub(crate) fn record_operation(operation: &Operation, seconds: f64) {
    #[cfg(feature = "otel")]
    imp::record_operation(operation, seconds);
    #[cfg(not(feature = "otel"))]
    let _ = (operation, seconds);
}

/// Records a legacy session's `mcp.server.session.duration` when it ends.
#[inline]
pub(crate) fn record_session(seconds: f64, version: &'static str, network: &'static str) {
    #[cfg(feature = "otel")]
    imp::record_session(seconds, version, network);
    #[cfg(not(feature = "otel"))]
    let _ = (seconds, version, network);
}

/// The current span's context as a W3C `traceparent`, when it is exported:
/// what an MRTR round seals and a task record keeps, so that a later span
/// can link to it (on this replica or another).
pub(crate) fn current_link() -> Option<String> {
    #[cfg(feature = "otel")]
    {
        imp::current_link()
    }
    #[cfg(not(feature = "otel"))]
    {
        None
    }
}

/// Puts the current span's W3C trace context in the `_meta` of a request
/// this process sends (`traceparent`, and `tracestate` when there is one),
/// so that the receiver's span is a child of the current one, as the MCP
/// semantic conventions propagate it. Nothing when the current span is not
/// exported, or when `meta` names a trace already (a gateway's caller's).
pub(crate) fn carry_trace(meta: &mut serde_json::Map<String, serde_json::Value>) {
    #[cfg(feature = "otel")]
    if !meta.contains_key("traceparent") {
        if let Some((parent, state)) = imp::outgoing_trace() {
            meta.insert("traceparent".into(), serde_json::Value::String(parent));
            if let Some(state) = state {
                meta.insert("tracestate".into(), serde_json::Value::String(state));
            }
        }
    }
    #[cfg(not(feature = "otel"))]
    let _ = meta;
}

/// Links the current span to the span a `traceparent` from
/// [`current_link`] names (nothing if it is malformed or absent).
pub(crate) fn link_current(traceparent: Option<&str>) {
    #[cfg(feature = "otel")]
    if let Some(traceparent) = traceparent {
        imp::link(&tracing::Span::current(), traceparent);
    }
    #[cfg(not(feature = "otel"))]
    let _ = traceparent;
}

/// Renames an exported span that has started already (`otel.name` only
/// names a span before it starts).
pub(crate) fn rename(span: &tracing::Span, name: String) {
    #[cfg(feature = "otel")]
    {
        use opentelemetry::trace::TraceContextExt;
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        span.context().span().update_name(name);
    }
    #[cfg(not(feature = "otel"))]
    let _ = (span, name);
}

/// The span of one request, `mcp.request` at DEBUG, with the fields of the
/// OpenTelemetry MCP conventions (most recorded as the request is routed)
/// and tracing-opentelemetry's `otel.*` fields: exported, it is the
/// request's SERVER span. One callsite for every request, so that it costs a
/// callsite check when nothing records DEBUG.
pub(crate) fn request_span(method: &str, id: &RequestId, principal: Option<&str>) -> tracing::Span {
    tracing::debug_span!(
        "mcp.request",
        "otel.name" = %cap(method),
        "otel.kind" = "server",
        "otel.status_code" = tracing::field::Empty,
        "otel.status_description" = tracing::field::Empty,
        "mcp.method.name" = %cap(method),
        "jsonrpc.request.id" = %IdText(id),
        "mcp.protocol.version" = tracing::field::Empty,
        "mcp.session.id" = tracing::field::Empty,
        "mcp.resource.uri" = tracing::field::Empty,
        "gen_ai.operation.name" = tracing::field::Empty,
        "gen_ai.tool.name" = tracing::field::Empty,
        "gen_ai.prompt.name" = tracing::field::Empty,
        "network.transport" = tracing::field::Empty,
        "network.protocol.name" = tracing::field::Empty,
        "network.protocol.version" = tracing::field::Empty,
        "error.type" = tracing::field::Empty,
        "rpc.response.status_code" = tracing::field::Empty,
        "mcp_runtime.era" = tracing::field::Empty,
        "mcp_runtime.principal" = principal.map(cap),
        "mcp_runtime.mrtr.round" = tracing::field::Empty,
        "mcp_runtime.task.id" = tracing::field::Empty,
    )
}

/// Observes a notification the client sent while `handle` acts on it: a
/// SERVER span named after its method (`mcp.notification`, at DEBUG, a
/// child of the caller's span when `params._meta` has a `traceparent`) and
/// a point of `mcp.server.operation.duration`, as the MCP conventions
/// observe every request and notification. `network` and `http` as for
/// [`Observed::begin`]; `session` is a legacy session's id (on HTTP) and
/// revision.
pub(crate) fn notification<T>(
    method: &str,
    params: Option<&serde_json::value::RawValue>,
    network: &'static str,
    http: Option<(&'static str, &http::HeaderMap)>,
    session: Option<(Option<&str>, &'static str)>,
    handle: impl FnOnce() -> T,
) -> T {
    let span = tracing::debug_span!(
        "mcp.notification",
        "otel.name" = %cap(method),
        "otel.kind" = "server",
        "mcp.method.name" = %cap(method),
        "mcp.protocol.version" = session.map(|(_, version)| version),
        "mcp.session.id" = tracing::field::Empty,
        "network.transport" = tracing::field::Empty,
        "network.protocol.name" = tracing::field::Empty,
        "network.protocol.version" = tracing::field::Empty,
    );
    let metrics = metrics_on();
    if span.is_disabled() && !metrics {
        return handle();
    }
    let id = session.and_then(|(id, _)| id);
    let (version, headers) = (http.map(|(version, _)| version), http.map(|(_, headers)| headers));
    let observed = Observed::begin(span, metrics, params, headers, Some(network), version, id);
    let out = observed.span().in_scope(handle);
    let method = crate::method::Method::parse(method).map_or("_OTHER", crate::method::Method::as_str);
    observed.end(method, Some(Ok(false)), None, session.map(|(_, version)| version));
    out
}

/// A request id as the conventions' `jsonrpc.request.id` writes it: the
/// string itself, or the number.
struct IdText<'a>(&'a RequestId);

impl std::fmt::Display for IdText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => f.write_str(cap(s)),
        }
    }
}

/// One observed request: its span (recorded when something records it)
/// and, with metrics on, its duration and the in-flight gauge.
pub(crate) struct Observed {
    span: tracing::Span,
    started: std::time::Instant,
    metrics: bool,
    network: Option<&'static str>,
    _in_flight: Option<Held>,
}

impl Observed {
    /// Starts observing a request over `network` (`pipe`, `tcp`, or none in
    /// process), over HTTP of version `http` if any, of a legacy session
    /// `session_id`: the span continues the caller's W3C trace from
    /// `params._meta`, else from the `traceparent` and `tracestate` of the
    /// HTTP request's `headers` (before it is first entered, which starts
    /// its OpenTelemetry span).
    pub(crate) fn begin(
        span: tracing::Span,
        metrics: bool,
        params: Option<&serde_json::value::RawValue>,
        headers: Option<&http::HeaderMap>,
        network: Option<&'static str>,
        http: Option<&'static str>,
        session_id: Option<&str>,
    ) -> Observed {
        if !span.is_disabled() {
            #[cfg(feature = "otel")]
            imp::continue_trace(&span, params, headers);
            if let Some(network) = network {
                span.record("network.transport", network);
            }
            if let Some(version) = http {
                span.record("network.protocol.name", "http");
                span.record("network.protocol.version", version);
            }
            if let Some(id) = session_id {
                span.record("mcp.session.id", cap(id));
            }
        }
        #[cfg(not(feature = "otel"))]
        let _ = (params, headers);
        Observed {
            span,
            started: std::time::Instant::now(),
            metrics,
            network,
            _in_flight: metrics.then(|| Held::new(Gauge::Requests)),
        }
    }

    /// The request's span.
    pub(crate) fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// Ends the request: `outcome` is whether its result was a tool error,
    /// or its JSON-RPC error's code and message, or `None` when it ended
    /// unanswered (its future dropped: cancelled). The span is marked failed
    /// and the metric recorded.
    pub(crate) fn end(
        self,
        method: &'static str,
        outcome: Option<Result<bool, (i32, &str)>>,
        target: Option<Target>,
        version: Option<&'static str>,
    ) {
        let error = match outcome {
            None => {
                record_error(&self.span, &keys::CANCELLED, "the request ended unanswered (cancelled)");
                Some(ErrorType::Cancelled)
            }
            Some(Err((code, message))) => {
                record_error(&self.span, &code, message);
                if !self.span.is_disabled() {
                    self.span
                        .record("rpc.response.status_code", tracing::field::display(code));
                }
                Some(ErrorType::Code(code))
            }
            Some(Ok(true)) => {
                record_error(&self.span, &keys::TOOL_ERROR, "the tool's result is an error (isError)");
                Some(ErrorType::ToolError)
            }
            Some(Ok(false)) => None,
        };
        if self.metrics {
            let operation = Operation {
                method,
                target,
                error,
                version,
                network: self.network,
            };
            record_operation(&operation, self.started.elapsed().as_secs_f64());
        }
    }
}

/// The span a task's work runs in, `execute_tool {tool}` (kind INTERNAL),
/// a root linked to the span of the request that created the task.
pub(crate) fn task_span(tool: &str, task_id: &str, created_by: Option<&str>) -> tracing::Span {
    let span = tracing::debug_span!(
        parent: None,
        "mcp.task",
        "otel.name" = %format_args!("{} {tool}", keys::EXECUTE_TOOL),
        "otel.kind" = "internal",
        "otel.status_code" = tracing::field::Empty,
        "otel.status_description" = tracing::field::Empty,
        "gen_ai.operation.name" = keys::EXECUTE_TOOL,
        "gen_ai.tool.name" = tool,
        "error.type" = tracing::field::Empty,
        "mcp_runtime.task.id" = task_id,
    );
    #[cfg(feature = "otel")]
    if let Some(traceparent) = created_by {
        if !span.is_disabled() {
            imp::link(&span, traceparent);
        }
    }
    #[cfg(not(feature = "otel"))]
    let _ = created_by;
    span
}

/// Marks `span` failed: `error.type` and status ERROR with `message`.
pub(crate) fn record_error(span: &tracing::Span, error_type: &dyn std::fmt::Display, message: &str) {
    if span.is_disabled() {
        return;
    }
    span.record("error.type", tracing::field::display(error_type));
    span.record("otel.status_code", "ERROR");
    span.record("otel.status_description", cap(message));
}

/// A client-supplied string cut to at most 256 bytes (on a character
/// boundary) before it is copied into a span.
pub(crate) fn cap(text: &str) -> &str {
    const MAX: usize = 256;
    if text.len() <= MAX {
        return text;
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The `otel` feature's side: the instruments, once installed.
#[cfg(feature = "otel")]
pub(crate) mod imp {
    use crate::telemetry::{keys, ErrorType, Gauge, Operation, Target};
    use opentelemetry::metrics::{Histogram, Meter, UpDownCounter};
    use opentelemetry::KeyValue;
    use std::sync::OnceLock;

    /// The bucket boundaries the conventions give both duration histograms.
    pub const BOUNDARIES: [f64; 14] = [
        0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
    ];

    struct Instruments {
        operation: Histogram<f64>,
        session: Histogram<f64>,
        gauges: [UpDownCounter<i64>; 4],
    }

    static INSTRUMENTS: OnceLock<Instruments> = OnceLock::new();

    /// Creates the instruments on `meter` (once per process).
    pub fn install(meter: &Meter) {
        let gauge = |name: &'static str, unit: &'static str, description: &'static str| {
            meter
                .i64_up_down_counter(name)
                .with_unit(unit)
                .with_description(description)
                .build()
        };
        let installed = INSTRUMENTS.set(Instruments {
            operation: meter
                .f64_histogram("mcp.server.operation.duration")
                .with_unit("s")
                .with_description(
                    "MCP request or notification duration as observed on the receiver from the time it was \
                     received until the result or ack is sent.",
                )
                .with_boundaries(BOUNDARIES.to_vec())
                .build(),
            session: meter
                .f64_histogram("mcp.server.session.duration")
                .with_unit("s")
                .with_description("The duration of the MCP session as observed on the MCP server.")
                .with_boundaries(BOUNDARIES.to_vec())
                .build(),
            gauges: [
                gauge(
                    "mcp_runtime.server.active_requests",
                    "{request}",
                    "Requests being served.",
                ),
                gauge(
                    "mcp_runtime.server.active_listen_streams",
                    "{stream}",
                    "Open subscriptions/listen streams and legacy GET streams.",
                ),
                gauge(
                    "mcp_runtime.server.active_tasks",
                    "{task}",
                    "Tasks running in this process.",
                ),
                gauge(
                    "mcp_runtime.server.active_sessions",
                    "{session}",
                    "Legacy (2025-11-25) sessions alive in this process.",
                ),
            ],
        });
        if installed.is_ok() {
            // Every gauge is there from the start, at zero.
            for gauge in INSTRUMENTS.get().iter().flat_map(|i| i.gauges.iter()) {
                gauge.add(0, &[]);
            }
        }
    }

    #[inline]
    pub fn installed() -> bool {
        INSTRUMENTS.get().is_some()
    }

    pub fn gauge_add(gauge: Gauge, delta: i64) -> bool {
        let Some(instruments) = INSTRUMENTS.get() else {
            return false;
        };
        let index = match gauge {
            Gauge::Requests => 0,
            Gauge::ListenStreams => 1,
            Gauge::Tasks => 2,
            Gauge::Sessions => 3,
        };
        instruments.gauges[index].add(delta, &[]);
        true
    }

    pub fn record_operation(operation: &Operation, seconds: f64) {
        let Some(instruments) = INSTRUMENTS.get() else {
            return;
        };
        let mut attributes = Vec::with_capacity(8);
        attributes.push(KeyValue::new(keys::METHOD, operation.method));
        match &operation.target {
            Some(Target::Tool(name)) => {
                attributes.push(KeyValue::new(keys::TOOL, name.clone()));
                attributes.push(KeyValue::new(keys::OPERATION, keys::EXECUTE_TOOL));
            }
            Some(Target::Prompt(name)) => attributes.push(KeyValue::new(keys::PROMPT, name.clone())),
            None => {}
        }
        match operation.error {
            Some(ErrorType::Code(code)) => {
                let code = code.to_string();
                attributes.push(KeyValue::new(keys::ERROR_TYPE, code.clone()));
                attributes.push(KeyValue::new(keys::STATUS_CODE, code));
            }
            Some(ErrorType::ToolError) => attributes.push(KeyValue::new(keys::ERROR_TYPE, keys::TOOL_ERROR)),
            Some(ErrorType::Cancelled) => attributes.push(KeyValue::new(keys::ERROR_TYPE, keys::CANCELLED)),
            None => {}
        }
        if let Some(version) = operation.version {
            attributes.push(KeyValue::new(keys::PROTOCOL_VERSION, version));
        }
        if let Some(network) = operation.network {
            attributes.push(KeyValue::new(keys::NETWORK_TRANSPORT, network));
            if network == "tcp" {
                attributes.push(KeyValue::new(keys::NETWORK_PROTOCOL, "http"));
            }
        }
        instruments.operation.record(seconds, &attributes);
    }

    pub fn record_session(seconds: f64, version: &'static str, network: &'static str) {
        if let Some(instruments) = INSTRUMENTS.get() {
            instruments.session.record(
                seconds,
                &[
                    KeyValue::new(keys::PROTOCOL_VERSION, version),
                    KeyValue::new(keys::NETWORK_TRANSPORT, network),
                ],
            );
        }
    }

    pub fn outgoing_trace() -> Option<(String, Option<String>)> {
        use opentelemetry::propagation::TextMapPropagator;
        use opentelemetry::trace::TraceContextExt;
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        let span = tracing::Span::current();
        if span.is_disabled() {
            return None;
        }
        let context = span.context();
        if !context.span().span_context().is_valid() {
            return None;
        }
        let mut carrier = std::collections::HashMap::with_capacity(2);
        opentelemetry_sdk::propagation::TraceContextPropagator::new().inject_context(&context, &mut carrier);
        let parent = carrier.remove("traceparent")?;
        let state = carrier.remove("tracestate").filter(|s| !s.is_empty());
        Some((parent, state))
    }

    pub fn current_link() -> Option<String> {
        use opentelemetry::trace::TraceContextExt;
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        let span = tracing::Span::current();
        if span.is_disabled() {
            return None;
        }
        let context = span.context();
        let span_context = context.span().span_context().clone();
        span_context.is_valid().then(|| {
            format!(
                "00-{}-{}-{:02x}",
                span_context.trace_id(),
                span_context.span_id(),
                span_context.trace_flags().to_u8()
            )
        })
    }

    /// Adds to `span` a link to the span `traceparent` names.
    pub fn link(span: &tracing::Span, traceparent: &str) {
        use opentelemetry::trace::TraceContextExt;
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        if let Some(context) = extract(traceparent, None) {
            span.add_link(context.span().span_context().clone());
        }
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

    /// Makes `span` a child of the caller's span: the one `params._meta`
    /// names (the MCP conventions' carrier, one per message), else the one
    /// the HTTP request's headers name (an ingress's or a client's HTTP
    /// instrumentation), else none (a missing or malformed one leaves it a
    /// root, as W3C says).
    pub fn continue_trace(
        span: &tracing::Span,
        params: Option<&serde_json::value::RawValue>,
        headers: Option<&http::HeaderMap>,
    ) {
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        let from_meta = params
            .and_then(|p| serde_json::from_str::<Params<'_>>(p.get()).ok())
            .and_then(|p| p.meta)
            .and_then(|meta| extract(meta.traceparent.as_deref()?, meta.tracestate.as_deref()));
        // The headers are read only when `_meta` names no parent.
        let parent = from_meta.or_else(|| {
            let trace = crate::headers::trace_context(headers?)?;
            extract(trace.parent, trace.state.as_deref())
        });
        if let Some(parent) = parent {
            let _ = span.set_parent(parent);
        }
    }

    /// The remote span context a W3C `traceparent` (and `tracestate`)
    /// names; `None` when it is malformed.
    pub fn extract(traceparent: &str, tracestate: Option<&str>) -> Option<opentelemetry::Context> {
        use opentelemetry::propagation::TextMapPropagator;
        use opentelemetry::trace::TraceContextExt;
        let mut carrier = std::collections::HashMap::with_capacity(2);
        carrier.insert("traceparent".to_owned(), traceparent.to_owned());
        if let Some(state) = tracestate {
            carrier.insert("tracestate".to_owned(), state.to_owned());
        }
        let context = opentelemetry_sdk::propagation::TraceContextPropagator::new().extract(&carrier);
        context.span().span_context().is_valid().then_some(context)
    }
}
