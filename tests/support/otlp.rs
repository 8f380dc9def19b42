//! A real OTLP/HTTP receiver for the tests: an HTTP/1.1 server (hyper) on
//! an ephemeral loopback port that takes `POST /v1/traces` and
//! `POST /v1/metrics` with `Content-Type: application/x-protobuf`, decodes
//! the bodies with the official proto definitions (`opentelemetry-proto`'s
//! prost messages) and keeps what arrived as plain owned values, so that a
//! test can check what a server binary exported without a collector.
//!
//! It runs on a thread of its own with its own tokio runtime, so a test uses
//! it the same way from sync or async code. Three modes: `start()` answers
//! 200 with an empty `Export*ServiceResponse`; `refusing()` answers 503 to
//! everything; `hanging()` reads each request and never answers (a collector
//! that is stuck).
//!
//! Included by a test with `#[path = "support/otlp.rs"] mod otlp;`.
#![allow(dead_code)]

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use opentelemetry_proto::tonic::collector::metrics::v1::{ExportMetricsServiceRequest, ExportMetricsServiceResponse};
use opentelemetry_proto::tonic::collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse};
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, KeyValue};
use opentelemetry_proto::tonic::metrics::v1::{metric, number_data_point, NumberDataPoint};
use opentelemetry_proto::tonic::trace::v1::{span, status};
use prost::Message;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One span as it arrived.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub name: String,
    /// The proto enum's name without its prefix: "SERVER", "CLIENT", "INTERNAL", ...
    pub kind: String,
    /// Lowercase hex, as in a W3C `traceparent`.
    pub trace_id: String,
    pub span_id: String,
    /// Empty for a root span.
    pub parent_span_id: String,
    /// The W3C `tracestate` of the span's context (empty when none).
    pub trace_state: String,
    pub attributes: BTreeMap<String, String>,
    /// "UNSET", "OK" or "ERROR".
    pub status_code: String,
    pub status_message: String,
    /// (trace id, span id) of each link, in lowercase hex.
    pub links: Vec<(String, String)>,
    /// The attributes of the resource the span was sent under.
    pub resource: BTreeMap<String, String>,
}

impl Span {
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }

    /// (trace id, span id): what a link to this span names.
    pub fn context(&self) -> (String, String) {
        (self.trace_id.clone(), self.span_id.clone())
    }
}

/// One data point of a metric as it arrived.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricPoint {
    pub name: String,
    pub unit: String,
    /// "histogram", "sum", "gauge" (or "exponential_histogram", "summary").
    pub kind: String,
    /// For a sum: whether it only grows (a counter) or not (an UpDownCounter).
    pub monotonic: bool,
    pub attributes: BTreeMap<String, String>,
    /// Histograms: the count, the sum (when sent), the explicit bounds and
    /// the per-bucket counts.
    pub count: u64,
    pub sum: Option<f64>,
    pub bounds: Vec<f64>,
    pub bucket_counts: Vec<u64>,
    /// Sums and gauges: the value (integers as f64).
    pub value: Option<f64>,
    pub resource: BTreeMap<String, String>,
    /// Which metrics export (1, 2, ...) it came in: with cumulative
    /// temporality the latest export holds the totals.
    pub export: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Answer,
    Refuse,
    Hang,
}

#[derive(Default)]
struct State {
    spans: Vec<Span>,
    metrics: Vec<MetricPoint>,
    requests: usize,
    trace_requests: usize,
    metric_requests: usize,
    undecodable: usize,
    connections: usize,
    seen: Vec<String>,
}

/// The receiver; it stops (and closes every connection) when dropped.
pub struct Receiver {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Receiver {
    /// A receiver that takes everything and answers 200.
    pub fn start() -> Receiver {
        Receiver::with_mode(Mode::Answer)
    }

    /// A receiver that answers 503 Service Unavailable to every request.
    pub fn refusing() -> Receiver {
        Receiver::with_mode(Mode::Refuse)
    }

    /// A receiver that accepts connections, reads each request and never answers.
    pub fn hanging() -> Receiver {
        Receiver::with_mode(Mode::Hang)
    }

    fn with_mode(mode: Mode) -> Receiver {
        let state = Arc::new(Mutex::new(State::default()));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (bound, addr) = std::sync::mpsc::channel();
        let shared = state.clone();
        let thread = std::thread::Builder::new()
            .name("otlp-receiver".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .enable_all()
                    .build()
                    .expect("the receiver's runtime");
                rt.block_on(serve(mode, shared, bound, stopped));
                // Connections still open (a hanging receiver's) end here.
                rt.shutdown_background();
            })
            .expect("the receiver's thread");
        let addr = addr
            .recv_timeout(Duration::from_secs(10))
            .expect("the receiver binds a port");
        Receiver {
            addr,
            state,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// What `OTEL_EXPORTER_OTLP_ENDPOINT` is set to: `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn spans(&self) -> Vec<Span> {
        self.state.lock().unwrap().spans.clone()
    }

    /// Every metric point received, in order of arrival.
    pub fn metrics(&self) -> Vec<MetricPoint> {
        self.state.lock().unwrap().metrics.clone()
    }

    /// The points of metric `name` in the latest export that carried it.
    pub fn latest(&self, name: &str) -> Vec<MetricPoint> {
        let all: Vec<MetricPoint> = self.metrics().into_iter().filter(|m| m.name == name).collect();
        let last = all.iter().map(|m| m.export).max().unwrap_or(0);
        all.into_iter().filter(|m| m.export == last).collect()
    }

    /// Every request received, on any path, whatever the mode.
    pub fn requests(&self) -> usize {
        self.state.lock().unwrap().requests
    }

    pub fn trace_requests(&self) -> usize {
        self.state.lock().unwrap().trace_requests
    }

    pub fn metric_requests(&self) -> usize {
        self.state.lock().unwrap().metric_requests
    }

    /// Requests whose body was not a protobuf message of the path's kind
    /// (or not announced as `application/x-protobuf`).
    pub fn undecodable(&self) -> usize {
        self.state.lock().unwrap().undecodable
    }

    /// One line per request received: method, path, content type and
    /// encoding, body length (for a test's failure message).
    pub fn seen(&self) -> Vec<String> {
        self.state.lock().unwrap().seen.clone()
    }

    pub fn connections(&self) -> usize {
        self.state.lock().unwrap().connections
    }

    /// Polls (every 20 ms) until `done` holds or `timeout` has passed; whether it held.
    pub fn wait_for(&self, done: impl Fn(&Receiver) -> bool, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if done(self) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve(
    mode: Mode,
    state: Arc<Mutex<State>>,
    bound: std::sync::mpsc::Sender<SocketAddr>,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind an ephemeral loopback port");
    let _ = bound.send(listener.local_addr().unwrap());
    loop {
        let stream = tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => continue,
            },
        };
        state.lock().unwrap().connections += 1;
        let state = state.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| handle(mode, state.clone(), request));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

#[derive(Clone, Copy)]
enum Signal {
    Traces,
    Metrics,
}

async fn handle(
    mode: Mode,
    state: Arc<Mutex<State>>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, std::convert::Infallible> {
    let signal = match (request.method(), request.uri().path()) {
        (&Method::POST, "/v1/traces") => Some(Signal::Traces),
        (&Method::POST, "/v1/metrics") => Some(Signal::Metrics),
        _ => None,
    };
    let protobuf = request
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(';').next().unwrap_or("").trim() == "application/x-protobuf");
    let encoded = request
        .headers()
        .get("content-encoding")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| !v.eq_ignore_ascii_case("identity"));
    let line = format!(
        "{} {} content-type {:?} content-encoding {:?}",
        request.method(),
        request.uri().path(),
        request.headers().get("content-type"),
        request.headers().get("content-encoding"),
    );
    let body = request.into_body().collect().await.map(|b| b.to_bytes());
    {
        let mut s = state.lock().unwrap();
        s.requests += 1;
        let length = body.as_ref().map(|b| b.len()).unwrap_or(0);
        s.seen.push(format!("{line}, {length} bytes"));
    }
    match mode {
        Mode::Hang => std::future::pending::<()>().await,
        Mode::Refuse => {
            return Ok(reply(
                StatusCode::SERVICE_UNAVAILABLE,
                "text/plain",
                b"refusing".to_vec(),
            ))
        }
        Mode::Answer => {}
    }
    let Some(signal) = signal else {
        return Ok(reply(StatusCode::NOT_FOUND, "text/plain", b"not an OTLP path".to_vec()));
    };
    let body = match body {
        Ok(body) if protobuf && !encoded => body,
        _ => {
            state.lock().unwrap().undecodable += 1;
            return Ok(reply(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "text/plain",
                b"application/x-protobuf, not compressed".to_vec(),
            ));
        }
    };
    let answer = match signal {
        Signal::Traces => match ExportTraceServiceRequest::decode(body) {
            Ok(export) => {
                let mut s = state.lock().unwrap();
                s.trace_requests += 1;
                s.spans.extend(spans_of(export));
                ExportTraceServiceResponse::default().encode_to_vec()
            }
            Err(_) => return Ok(undecodable(&state)),
        },
        Signal::Metrics => match ExportMetricsServiceRequest::decode(body) {
            Ok(export) => {
                let mut s = state.lock().unwrap();
                s.metric_requests += 1;
                let n = s.metric_requests;
                s.metrics.extend(points_of(export, n));
                ExportMetricsServiceResponse::default().encode_to_vec()
            }
            Err(_) => return Ok(undecodable(&state)),
        },
    };
    Ok(reply(StatusCode::OK, "application/x-protobuf", answer))
}

fn undecodable(state: &Mutex<State>) -> Response<Full<Bytes>> {
    state.lock().unwrap().undecodable += 1;
    reply(StatusCode::BAD_REQUEST, "text/plain", b"undecodable body".to_vec())
}

fn reply(status: StatusCode, content_type: &str, body: Vec<u8>) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(Full::new(Bytes::from(body)))
        .unwrap()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// An attribute value as text: strings as they are, the rest formatted.
fn text(value: Option<&AnyValue>) -> String {
    match value.and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        Some(any_value::Value::BytesValue(b)) => hex(b),
        Some(any_value::Value::ArrayValue(a)) => {
            let items: Vec<String> = a.values.iter().map(|v| text(Some(v))).collect();
            format!("[{}]", items.join(","))
        }
        Some(any_value::Value::KvlistValue(kv)) => format!("{:?}", map(&kv.values)),
        Some(any_value::Value::StringValueStrindex(i)) => format!("#{i}"),
        None => String::new(),
    }
}

fn map(attributes: &[KeyValue]) -> BTreeMap<String, String> {
    attributes
        .iter()
        .map(|kv| (kv.key.clone(), text(kv.value.as_ref())))
        .collect()
}

fn spans_of(export: ExportTraceServiceRequest) -> Vec<Span> {
    let mut out = Vec::new();
    for rs in export.resource_spans {
        let resource = rs.resource.map(|r| map(&r.attributes)).unwrap_or_default();
        for ss in rs.scope_spans {
            for s in ss.spans {
                let kind = span::SpanKind::try_from(s.kind)
                    .map(|k| k.as_str_name().trim_start_matches("SPAN_KIND_").to_owned())
                    .unwrap_or_else(|_| format!("kind {}", s.kind));
                let (status_code, status_message) = match &s.status {
                    Some(st) => (
                        status::StatusCode::try_from(st.code)
                            .map(|c| c.as_str_name().trim_start_matches("STATUS_CODE_").to_owned())
                            .unwrap_or_else(|_| format!("code {}", st.code)),
                        st.message.clone(),
                    ),
                    None => ("UNSET".to_owned(), String::new()),
                };
                out.push(Span {
                    name: s.name,
                    kind,
                    trace_id: hex(&s.trace_id),
                    span_id: hex(&s.span_id),
                    parent_span_id: hex(&s.parent_span_id),
                    trace_state: s.trace_state,
                    attributes: map(&s.attributes),
                    status_code,
                    status_message,
                    links: s.links.iter().map(|l| (hex(&l.trace_id), hex(&l.span_id))).collect(),
                    resource: resource.clone(),
                });
            }
        }
    }
    out
}

fn number(p: &NumberDataPoint) -> Option<f64> {
    p.value.map(|v| match v {
        number_data_point::Value::AsDouble(d) => d,
        number_data_point::Value::AsInt(i) => i as f64,
    })
}

fn points_of(export: ExportMetricsServiceRequest, n: usize) -> Vec<MetricPoint> {
    let mut out = Vec::new();
    for rm in export.resource_metrics {
        let resource = rm.resource.map(|r| map(&r.attributes)).unwrap_or_default();
        for sm in rm.scope_metrics {
            for m in sm.metrics {
                let point = |kind: &str, attributes: &[KeyValue]| MetricPoint {
                    name: m.name.clone(),
                    unit: m.unit.clone(),
                    kind: kind.to_owned(),
                    monotonic: false,
                    attributes: map(attributes),
                    count: 0,
                    sum: None,
                    bounds: Vec::new(),
                    bucket_counts: Vec::new(),
                    value: None,
                    resource: resource.clone(),
                    export: n,
                };
                match &m.data {
                    Some(metric::Data::Histogram(h)) => {
                        for p in &h.data_points {
                            out.push(MetricPoint {
                                count: p.count,
                                sum: p.sum,
                                bounds: p.explicit_bounds.clone(),
                                bucket_counts: p.bucket_counts.clone(),
                                ..point("histogram", &p.attributes)
                            });
                        }
                    }
                    Some(metric::Data::Sum(s)) => {
                        for p in &s.data_points {
                            out.push(MetricPoint {
                                monotonic: s.is_monotonic,
                                value: number(p),
                                ..point("sum", &p.attributes)
                            });
                        }
                    }
                    Some(metric::Data::Gauge(g)) => {
                        for p in &g.data_points {
                            out.push(MetricPoint {
                                value: number(p),
                                ..point("gauge", &p.attributes)
                            });
                        }
                    }
                    Some(metric::Data::ExponentialHistogram(h)) => {
                        for p in &h.data_points {
                            out.push(MetricPoint {
                                count: p.count,
                                sum: p.sum,
                                ..point("exponential_histogram", &p.attributes)
                            });
                        }
                    }
                    Some(metric::Data::Summary(s)) => {
                        for p in &s.data_points {
                            out.push(MetricPoint {
                                count: p.count,
                                sum: Some(p.sum),
                                ..point("summary", &p.attributes)
                            });
                        }
                    }
                    None => {}
                }
            }
        }
    }
    out
}
