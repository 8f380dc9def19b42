//! The metrics as Prometheus text (exposition format 0.0.4) on an address of
//! their own: a reader the meter provider collects into on each scrape, and
//! a small HTTP/1.1 endpoint on a thread of its own that answers
//! `GET /metrics` and nothing else, so that a scrape never touches the
//! server's runtime or its public port.

use opentelemetry::KeyValue;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, Metric, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::reader::MetricReader;
use opentelemetry_sdk::metrics::{InstrumentKind, ManualReader, Pipeline, Temporality};
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// A manual reader the meter provider owns one handle of and the endpoint
/// the other.
#[derive(Debug, Clone)]
pub(crate) struct SharedReader(Arc<ManualReader>);

impl SharedReader {
    pub(crate) fn new() -> Self {
        SharedReader(Arc::new(
            ManualReader::builder()
                .with_temporality(Temporality::Cumulative)
                .build(),
        ))
    }

    /// Collects every instrument now and renders it.
    pub(crate) fn scrape(&self) -> Result<String, String> {
        let mut metrics = ResourceMetrics::default();
        self.0.collect(&mut metrics).map_err(|e| e.to_string())?;
        Ok(render(&metrics))
    }
}

impl MetricReader for SharedReader {
    fn register_pipeline(&self, pipeline: Weak<Pipeline>) {
        self.0.register_pipeline(pipeline);
    }

    fn collect(&self, metrics: &mut ResourceMetrics) -> OTelSdkResult {
        self.0.collect(metrics)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.0.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }

    fn temporality(&self, kind: InstrumentKind) -> Temporality {
        self.0.temporality(kind)
    }
}

/// `mcp.server.operation.duration` in `s` is `mcp_server_operation_duration_seconds`.
fn metric_name(metric: &Metric) -> String {
    let mut name = sanitize(metric.name(), true);
    let suffix = match metric.unit() {
        "s" => "_seconds",
        "ms" => "_milliseconds",
        "By" => "_bytes",
        _ => "",
    };
    if !name.ends_with(suffix) {
        name.push_str(suffix);
    }
    name
}

fn sanitize(text: &str, colons: bool) -> String {
    let mut out: String = text
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' => c,
            ':' if colons => c,
            _ => '_',
        })
        .collect();
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

fn labels<'a>(attributes: impl Iterator<Item = &'a KeyValue>, extra: Option<(&str, &str)>) -> String {
    let mut out = String::new();
    let mut pairs: Vec<(String, String)> = attributes
        .map(|kv| (sanitize(kv.key.as_str(), false), kv.value.to_string()))
        .collect();
    pairs.sort();
    if let Some((key, value)) = extra {
        pairs.push((key.to_owned(), value.to_owned()));
    }
    if pairs.is_empty() {
        return out;
    }
    out.push('{');
    for (i, (key, value)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(key);
        out.push_str("=\"");
        for c in value.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '"' => out.push_str("\\\""),
                '\n' => out.push_str("\\n"),
                c => out.push(c),
            }
        }
        out.push('"');
    }
    out.push('}');
    out
}

/// Renders every metric collected into Prometheus text.
pub(crate) fn render(metrics: &ResourceMetrics) -> String {
    let mut out = String::with_capacity(4096);
    for scope in metrics.scope_metrics() {
        for metric in scope.metrics() {
            match metric.data() {
                AggregatedMetrics::F64(data) => write_metric(&mut out, metric, data, |v| v),
                AggregatedMetrics::U64(data) => write_metric(&mut out, metric, data, |v| v as f64),
                AggregatedMetrics::I64(data) => write_metric(&mut out, metric, data, |v| v as f64),
            }
        }
    }
    out
}

fn write_metric<T: Copy>(out: &mut String, metric: &Metric, data: &MetricData<T>, float: impl Fn(T) -> f64) {
    let name = metric_name(metric);
    let help = metric.description().replace('\\', "\\\\").replace('\n', "\\n");
    match data {
        MetricData::Histogram(histogram) => {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
            for point in histogram.data_points() {
                let mut cumulative = 0u64;
                let counts: Vec<u64> = point.bucket_counts().collect();
                for (i, bound) in point.bounds().enumerate() {
                    cumulative = cumulative.saturating_add(counts.get(i).copied().unwrap_or(0));
                    let le = labels(point.attributes(), Some(("le", &bound.to_string())));
                    let _ = writeln!(out, "{name}_bucket{le} {cumulative}");
                }
                let all = labels(point.attributes(), Some(("le", "+Inf")));
                let plain = labels(point.attributes(), None);
                let _ = writeln!(out, "{name}_bucket{all} {}", point.count());
                let _ = writeln!(out, "{name}_sum{plain} {}", float(point.sum()));
                let _ = writeln!(out, "{name}_count{plain} {}", point.count());
            }
        }
        MetricData::Sum(sum) => {
            let (kind, name) = match sum.is_monotonic() {
                true => ("counter", format!("{name}_total")),
                false => ("gauge", name),
            };
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for point in sum.data_points() {
                let _ = writeln!(
                    out,
                    "{name}{} {}",
                    labels(point.attributes(), None),
                    float(point.value())
                );
            }
        }
        MetricData::Gauge(gauge) => {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
            for point in gauge.data_points() {
                let _ = writeln!(
                    out,
                    "{name}{} {}",
                    labels(point.attributes(), None),
                    float(point.value())
                );
            }
        }
        MetricData::ExponentialHistogram(_) => {}
    }
}

/// The endpoint: a listener on its own thread, closed when dropped.
#[derive(Debug)]
pub(crate) struct Endpoint {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

impl Endpoint {
    /// Listens on `addr` and serves `reader`'s metrics at `/metrics`.
    pub(crate) fn serve(addr: &str, reader: SharedReader) -> std::io::Result<Endpoint> {
        let listener = TcpListener::bind(addr)?;
        let local = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        std::thread::Builder::new().name("mcp-metrics".into()).spawn(move || {
            let answering = Arc::new(Answering::default());
            for stream in listener.incoming() {
                if stopping.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(stream) = stream else {
                    // Out of file descriptors, most often: a pause, not a
                    // loop that spins a core until one is freed.
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                };
                // Each on a thread of its own, so that a client that sends
                // nothing holds up no scrape; a few at once.
                let Some(id) = answering.admit(&stream) else { continue };
                let (reader, answering) = (reader.clone(), answering.clone());
                let spawned = std::thread::Builder::new().name("mcp-metrics-answer".into()).spawn({
                    let answering = answering.clone();
                    move || {
                        answer(stream, &reader, || answering.read(id));
                        answering.done(id);
                    }
                });
                if spawned.is_err() {
                    answering.done(id);
                }
            }
        })?;
        Ok(Endpoint { addr: local, stop })
    }

    pub(crate) fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wakes the accept loop so that it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

/// Requests answered at once. A connection past them takes the place of
/// the oldest one still sending its request (that one is closed), or is
/// closed when all are being answered: connections that send nothing, or
/// slowly, cannot keep a scraper out.
const MAX_ANSWERING: usize = 8;

/// The connections being answered, oldest first: (id, a handle to close
/// it by, whether its request is still being read).
#[derive(Default)]
struct Answering {
    slots: std::sync::Mutex<Vec<(u64, TcpStream, bool)>>,
    next: std::sync::atomic::AtomicU64,
}

impl Answering {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, TcpStream, bool)>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A slot for `stream`, the oldest connection still sending its
    /// request closed to make room; `None` when every slot is answering.
    fn admit(&self, stream: &TcpStream) -> Option<u64> {
        let handle = stream.try_clone().ok()?;
        let mut slots = self.lock();
        if slots.len() >= MAX_ANSWERING {
            let oldest = slots.iter().position(|(_, _, reading)| *reading)?;
            let (_, evicted, _) = slots.remove(oldest);
            let _ = evicted.shutdown(std::net::Shutdown::Both);
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        slots.push((id, handle, true));
        Some(id)
    }

    /// Connection `id`'s request arrived whole: it is answered, not evicted.
    fn read(&self, id: u64) {
        if let Some(slot) = self.lock().iter_mut().find(|(at, _, _)| *at == id) {
            slot.2 = false;
        }
    }

    fn done(&self, id: u64) {
        self.lock().retain(|(at, _, _)| *at != id);
    }
}

/// How long a request may take to arrive, whole.
const READ_WITHIN: Duration = Duration::from_secs(2);

/// Reads one request (a scraper's GET, at most 8 KiB, within 2 s in all)
/// and answers it.
/// `read` is called once the request arrived whole.
fn answer(mut stream: TcpStream, reader: &SharedReader, read: impl FnOnce()) {
    let _ = stream.set_write_timeout(Some(READ_WITHIN));
    let deadline = std::time::Instant::now() + READ_WITHIN;
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 8192 {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return;
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    read();
    let line = head.split(|&b| b == b'\r').next().unwrap_or_default();
    let mut parts = line.split(|&b| b == b' ');
    let (method, target) = (parts.next().unwrap_or_default(), parts.next().unwrap_or_default());
    let path = target.split(|&b| b == b'?').next().unwrap_or_default();
    let (status, body) = match (method, path) {
        (b"GET", b"/metrics") => match reader.scrape() {
            Ok(text) => ("200 OK", text),
            Err(e) => (
                "500 Internal Server Error",
                format!("cannot collect the metrics: {e}\n"),
            ),
        },
        (b"GET", _) => ("404 Not Found", "the metrics are at /metrics\n".to_owned()),
        _ => ("405 Method Not Allowed", "GET /metrics\n".to_owned()),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Clients that connect and send nothing hold up no scrape, even more
    /// of them than are answered at once.
    #[test]
    fn silent_clients_do_not_hold_up_a_scrape() {
        let endpoint = Endpoint::serve("127.0.0.1:0", SharedReader::new()).unwrap();
        let addr = endpoint.local_addr();
        let silent: Vec<TcpStream> = (0..MAX_ANSWERING + 2)
            .map(|_| TcpStream::connect(addr).unwrap())
            .collect();
        std::thread::sleep(Duration::from_millis(100));
        let started = std::time::Instant::now();
        let mut scraper = TcpStream::connect(addr).unwrap();
        scraper.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        scraper
            .write_all(b"GET /metrics HTTP/1.1\r\nHost: metrics\r\n\r\n")
            .unwrap();
        let mut answer = String::new();
        scraper.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 "), "{answer}");
        let took = started.elapsed();
        assert!(took < Duration::from_secs(1), "answered after {took:?}");
        drop(silent);
    }
}
