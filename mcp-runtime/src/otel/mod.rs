//! OpenTelemetry (the `otel` feature): request spans and metrics after the
//! OpenTelemetry semantic conventions for MCP, exported over OTLP
//! (HTTP/protobuf, to an `http://` or `https://` collector) and, for
//! operators who scrape, as Prometheus text on an address of its own.
//!
//! A [`main!`](crate::main!) binary sets this up by itself:
//! - with `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
//!   / `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`) set, for example
//!   `http://127.0.0.1:4318`, spans and metrics are exported over OTLP;
//! - with `--metrics 127.0.0.1:9464` (or `MCP_METRICS_ADDR`), the metrics
//!   are served as Prometheus text at `http://127.0.0.1:9464/metrics`,
//!   never on the MCP port.
//!
//! The standard variables apply: `OTEL_SERVICE_NAME` (default: the server's
//! name), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_HEADERS`,
//! `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_TRACES_SAMPLER` (and `_ARG`),
//! `OTEL_BSP_SCHEDULE_DELAY` and the other `OTEL_BSP_*`,
//! `OTEL_METRIC_EXPORT_INTERVAL`, `OTEL_TRACES_EXPORTER=none` /
//! `OTEL_METRICS_EXPORTER=none`. `OTEL_EXPORTER_OTLP_PROTOCOL` may be
//! `http/protobuf` (the default); `grpc` is not compiled in and is refused
//! at start.
//!
//! A binary with its own `main` calls [`init`] (or [`init_with`]) and keeps
//! the guard until it exits: dropping it sends what is not sent yet. An
//! application with its own subscriber adds
//! `tracing_opentelemetry::layer().with_tracer(..)` itself: the spans carry
//! the conventions' names and attributes either way.
//!
//! A collector that is down or slow never slows or stops serving: spans
//! wait in a bounded queue (`OTEL_BSP_MAX_QUEUE_SIZE`, 2048) and are dropped
//! when it is full; a failed export is said on stderr at most once a minute.
//!
//! What is emitted, for each request: a span of kind SERVER named
//! `{mcp.method.name} {target}` (the tool or prompt name; no URI) with
//! `mcp.method.name`, `jsonrpc.request.id`, `mcp.protocol.version`,
//! `network.transport` (`pipe` on stdio, `tcp` over HTTP, with
//! `network.protocol.name`), `mcp.session.id` (legacy sessions),
//! `mcp.resource.uri`, `gen_ai.operation.name` and `gen_ai.tool.name` (tool
//! calls), `gen_ai.prompt.name`, and on failure `error.type` (the JSON-RPC
//! code, or `tool_error`), `rpc.response.status_code` and status ERROR; our
//! own facts under `mcp_runtime.` (`principal`, `era`, `mrtr.round`,
//! `task.id`). A retried MRTR round links to the round before; a task's work
//! runs in a span `execute_tool {tool}` linked to the call that created it,
//! as are `tasks/*` requests for it. Metrics: `mcp.server.operation.duration`
//! and `mcp.server.session.duration` (histograms, seconds, the conventions'
//! buckets), and the gauges `mcp_runtime.server.active_requests`,
//! `.active_listen_streams`, `.active_tasks`, `.active_sessions`.

mod export;
mod prometheus;

use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::time::Duration;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

/// The environment variable naming the Prometheus text endpoint's address.
pub const METRICS_ADDR_ENV: &str = crate::telemetry::METRICS_ADDR_ENV;

/// How long dropping the guard may take to send what is left.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// Why OpenTelemetry could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum OtelError {
    /// The OTLP exporter could not be built (a malformed endpoint, say).
    #[error("the OTLP exporter: {0}")]
    Exporter(String),
    /// A protocol this build does not speak.
    #[error("OTEL_EXPORTER_OTLP_PROTOCOL={0:?}: only http/protobuf is compiled in (a collector's port 4318)")]
    Protocol(String),
    /// Another global `tracing` subscriber is already installed.
    #[error("a tracing subscriber is already installed: {0}")]
    Subscriber(String),
    /// The Prometheus endpoint could not listen.
    #[error("the metrics endpoint {0}: {1}")]
    Metrics(String, std::io::Error),
}

/// What to set up; [`Options::from_env`] reads the standard variables.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Export spans over OTLP.
    pub otlp_traces: bool,
    /// Export metrics over OTLP.
    pub otlp_metrics: bool,
    /// Serve the metrics as Prometheus text on this address.
    pub prometheus: Option<String>,
}

impl Options {
    /// OTLP traces and metrics when an endpoint variable names them (and
    /// `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` is not `none`), and
    /// the Prometheus endpoint at `MCP_METRICS_ADDR` if it is set.
    pub fn from_env() -> Options {
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        let not_none = |name: &str| std::env::var(name).map_or(true, |v| v.trim() != "none");
        let any = set("OTEL_EXPORTER_OTLP_ENDPOINT");
        Options {
            otlp_traces: (any || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) && not_none("OTEL_TRACES_EXPORTER"),
            otlp_metrics: (any || set("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")) && not_none("OTEL_METRICS_EXPORTER"),
            prometheus: std::env::var(METRICS_ADDR_ENV).ok().filter(|v| !v.is_empty()),
        }
    }

    /// Whether anything is to be set up.
    pub fn any(&self) -> bool {
        self.otlp_traces || self.otlp_metrics || self.prometheus.is_some()
    }
}

/// Whether the environment asks for OTLP export or a metrics endpoint.
pub fn configured() -> bool {
    Options::from_env().any()
}

/// Keeps the exporters running; dropping it sends the spans and metrics not
/// yet sent (waiting at most 5 s) and closes the metrics endpoint.
#[derive(Debug)]
pub struct OtelGuard {
    tracer: Option<SdkTracerProvider>,
    meter: Option<SdkMeterProvider>,
    prometheus: Option<prometheus::Endpoint>,
}

impl OtelGuard {
    /// Where the Prometheus text endpoint listens, if it was asked for.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.prometheus.as_ref().map(prometheus::Endpoint::local_addr)
    }

    /// Whether spans are exported (a subscriber with the exporting layer was installed).
    pub fn exports_traces(&self) -> bool {
        self.tracer.is_some()
    }
}

impl Drop for OtelGuard {
    fn drop(&mut self) {
        // Spans and metrics are flushed at once, side by side: with a
        // collector that does not answer, each waits its 5 s, not one after
        // the other.
        std::thread::scope(|scope| {
            let meter = self.meter.as_ref().map(|meter| {
                scope.spawn(move || {
                    if let Err(e) = meter.shutdown_with_timeout(FLUSH_TIMEOUT) {
                        eprintln!("OpenTelemetry: the last metrics were not all sent: {e}");
                    }
                })
            });
            if let Some(tracer) = &self.tracer {
                if let Err(e) = tracer.shutdown_with_timeout(FLUSH_TIMEOUT) {
                    eprintln!("OpenTelemetry: the last spans were not all sent: {e}");
                }
            }
            // A panic of the flush is the exporter's; the process ends anyway.
            let _ = meter.map(std::thread::ScopedJoinHandle::join);
        });
    }
}

/// Sets up OTLP export of spans and metrics (to the endpoint the standard
/// `OTEL_EXPORTER_OTLP_*` variables name, by default
/// `http://localhost:4318`) for the service `OTEL_SERVICE_NAME`, else
/// `service_name`, and installs the global subscriber: logs to stderr as
/// `RUST_LOG` says (default `info`), and every request's span exported.
pub fn init(service_name: &str) -> Result<OtelGuard, OtelError> {
    let mut options = Options::from_env();
    options.otlp_traces = true;
    options.otlp_metrics = true;
    init_with(service_name, options)
}

/// Sets up what `options` asks for. The global subscriber (logs to stderr
/// and the exporting layer) is installed only when spans are exported;
/// otherwise install your own, or call [`crate::cli::init_logging`].
pub fn init_with(service_name: &str, options: Options) -> Result<OtelGuard, OtelError> {
    if let Ok(protocol) = std::env::var("OTEL_EXPORTER_OTLP_PROTOCOL") {
        if !matches!(protocol.trim(), "" | "http/protobuf") {
            return Err(OtelError::Protocol(protocol));
        }
    }
    // reqwest builds its TLS configuration with the client, https or not.
    crate::tls::install_provider();
    let resource = resource(service_name);
    let meter = match options.otlp_metrics || options.prometheus.is_some() {
        false => None,
        true => Some(meter_provider(&options, resource.clone())?),
    };
    let prometheus = match (&options.prometheus, &meter) {
        (Some(addr), Some((_, Some(reader)))) => {
            Some(prometheus::Endpoint::serve(addr, reader.clone()).map_err(|e| OtelError::Metrics(addr.clone(), e))?)
        }
        _ => None,
    };
    let meter = meter.map(|(provider, _)| provider);
    if let Some(provider) = &meter {
        crate::telemetry::imp::install(&provider.meter("mcp-runtime"));
    }
    let tracer = match options.otlp_traces {
        false => None,
        true => Some(tracer_provider(resource)?),
    };
    if let Some(provider) = &tracer {
        install_subscriber(provider)?;
    }
    Ok(OtelGuard {
        tracer,
        meter,
        prometheus,
    })
}

/// The resource: the standard detectors (`OTEL_RESOURCE_ATTRIBUTES`,
/// `OTEL_SERVICE_NAME`), with `service_name` when neither names the service.
fn resource(service_name: &str) -> opentelemetry_sdk::Resource {
    let named = std::env::var_os("OTEL_SERVICE_NAME").is_some_and(|v| !v.is_empty())
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|attributes| {
            attributes
                .split(',')
                .any(|pair| pair.split('=').next().is_some_and(|key| key.trim() == "service.name"))
        });
    let builder = opentelemetry_sdk::Resource::builder();
    match named {
        true => builder.build(),
        false => builder.with_service_name(service_name.to_owned()).build(),
    }
}

fn tracer_provider(resource: opentelemetry_sdk::Resource) -> Result<SdkTracerProvider, OtelError> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .build()
        .map_err(|e| OtelError::Exporter(e.to_string()))?;
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(export::Warned::new(exporter, "spans"))
        .with_resource(resource)
        .build())
}

type MeterParts = (SdkMeterProvider, Option<prometheus::SharedReader>);

fn meter_provider(options: &Options, resource: opentelemetry_sdk::Resource) -> Result<MeterParts, OtelError> {
    let mut builder = SdkMeterProvider::builder().with_resource(resource);
    if options.otlp_metrics {
        let exporter = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .build()
            .map_err(|e| OtelError::Exporter(e.to_string()))?;
        builder = builder.with_periodic_exporter(export::Warned::new(exporter, "metrics"));
    }
    let reader = options.prometheus.as_ref().map(|_| prometheus::SharedReader::new());
    if let Some(reader) = &reader {
        builder = builder.with_reader(reader.clone());
    }
    Ok((builder.build(), reader))
}

/// The spans (and the events in them) exported: the requests' own (DEBUG,
/// in `mcp_runtime`), and those at INFO and above of every other crate (the
/// handlers', their database's and HTTP clients'), except the exporter's
/// own HTTP stack, whose spans exporting would make more of.
fn exported() -> tracing_subscriber::filter::Targets {
    use tracing_subscriber::filter::LevelFilter;
    tracing_subscriber::filter::Targets::new()
        .with_default(LevelFilter::INFO)
        .with_target("mcp_runtime", LevelFilter::DEBUG)
        .with_targets(["opentelemetry", "hyper", "h2", "reqwest", "tonic"].map(|t| (t, LevelFilter::OFF)))
}

fn install_subscriber(provider: &SdkTracerProvider) -> Result<(), OtelError> {
    let tracer = provider.tracer("mcp-runtime");
    let spans = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_filter(exported());
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
        .map_err(|e| OtelError::Subscriber(e.to_string()))
}
