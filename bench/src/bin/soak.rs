//! The soak test's load generator (`bash bench/soak.sh` runs it against
//! `examples/everything` built in release):
//!
//! ```text
//! soak --addr 127.0.0.1:29201 --pid PID [--requests 1000000] [--conns 32]
//!      [--warmup 100000] [--threads 1] [--tsv target/bench-results/soak-rss.tsv]
//! ```
//!
//! `--conns` workers, each with one keep-alive HTTP/1.1 connection (hyper's
//! client), send a fixed mix of requests until `--requests` have been sent:
//! plain `tools/call`s, MRTR rounds with a sealed `requestState`,
//! `subscriptions/listen` streams opened and dropped, progress streams
//! dropped mid-call, and malformed bodies. Every answer is checked (status,
//! content type, id, result or error code); anything else is an unexpected
//! error. The server's RSS (VmRSS of `--pid`) is sampled every second, when
//! `--warmup` requests are done, and at the end, and written to `--tsv`.
//! Prints `soak: PASS` and exits 0 only if there was no unexpected error and
//! the RSS at the end is at most the RSS after warm-up × 1.10 + 1 MiB.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use mcp_bench::{http_headers, PROTOCOL_VERSION};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long one operation (one or two requests) may take.
const OP_TIMEOUT: Duration = Duration::from_secs(30);
/// How many unexpected errors are printed in full.
const PRINTED_ERRORS: u64 = 5;

// ---------------------------------------------------------------- the mix

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// `tools/call` of `test_simple_text`.
    Simple,
    /// `tools/call` of `test_header_echo` with a different region each time.
    Echo,
    /// Two requests: `test_input_required_result_elicitation`, then its retry.
    MrtrElicit,
    /// Two requests: `test_input_required_result_request_state`, then its retry.
    MrtrState,
    /// `subscriptions/listen` on a fresh connection, dropped after the acknowledgement.
    Listen,
    /// `test_tool_with_progress` on a fresh connection, dropped after the first progress event.
    Cancel,
    /// A body that is not JSON.
    BadJson,
    /// A JSON-RPC request without `method` or without `jsonrpc`.
    BadRpc,
    /// A `tools/call` without `_meta`.
    NoMeta,
}

/// Each kind and its share of every 100 operations.
const MIX: [(Kind, u64); 9] = [
    (Kind::Simple, 36),
    (Kind::Echo, 30),
    (Kind::MrtrElicit, 7),
    (Kind::MrtrState, 7),
    (Kind::Listen, 2),
    (Kind::Cancel, 2),
    (Kind::BadJson, 6),
    (Kind::BadRpc, 5),
    (Kind::NoMeta, 5),
];

impl Kind {
    fn index(self) -> usize {
        MIX.iter()
            .position(|(k, _)| *k == self)
            .expect("every kind is in the mix")
    }

    /// Operation `op`'s kind: the 100 slots of the mix, visited in a
    /// scrambled but fixed order (37 is coprime with 100).
    fn of(op: u64) -> Kind {
        let mut slot = (op * 37) % 100;
        for (kind, share) in MIX {
            if slot < share {
                return kind;
            }
            slot -= share;
        }
        unreachable!("the shares add up to 100")
    }

    /// HTTP requests per operation.
    fn requests(self) -> u64 {
        match self {
            Kind::MrtrElicit | Kind::MrtrState => 2,
            _ => 1,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Kind::Simple => "tools/call test_simple_text",
            Kind::Echo => "tools/call test_header_echo (Mcp-Param-Region)",
            Kind::MrtrElicit => "MRTR test_input_required_result_elicitation (2 requests a round)",
            Kind::MrtrState => "MRTR test_input_required_result_request_state (2 requests a round)",
            Kind::Listen => "subscriptions/listen opened, acknowledged, dropped",
            Kind::Cancel => "test_tool_with_progress dropped after its first progress event",
            Kind::BadJson => "malformed: not JSON (400, -32700)",
            Kind::BadRpc => "malformed: no method / no jsonrpc (400, -32600)",
            Kind::NoMeta => "malformed: tools/call without _meta (400, -32602)",
        }
    }
}

// ---------------------------------------------------------------- options

struct Options {
    addr: String,
    pid: u32,
    requests: u64,
    conns: usize,
    warmup: u64,
    threads: usize,
    tsv: String,
}

fn parse_options() -> Result<Options, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut addr = None;
    let mut pid = None;
    let mut requests = 1_000_000u64;
    let mut conns = 32usize;
    let mut warmup = None;
    let mut threads = 1usize;
    let mut tsv = "target/bench-results/soak-rss.tsv".to_owned();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let bad = |e: std::num::ParseIntError| format!("{flag} {value}: {e}");
        match flag.as_str() {
            "--addr" => addr = Some(value.clone()),
            "--pid" => pid = Some(value.parse().map_err(bad)?),
            "--requests" => requests = value.parse().map_err(bad)?,
            "--conns" => conns = value.parse().map_err(bad)?,
            "--warmup" => warmup = Some(value.parse().map_err(bad)?),
            "--threads" => threads = value.parse().map_err(bad)?,
            "--tsv" => tsv = value.clone(),
            other => {
                return Err(format!(
                    "unknown option {other}; see the doc comment of bench/src/bin/soak.rs"
                ))
            }
        }
    }
    let requests = requests.max(1);
    Ok(Options {
        addr: addr.ok_or("--addr is required")?,
        pid: pid.ok_or("--pid is required")?,
        requests,
        conns: conns.max(1),
        // By default 100,000 requests, or a tenth of a shorter run.
        warmup: warmup.unwrap_or(100_000.min(requests / 10)).min(requests),
        threads: threads.max(1),
        tsv,
    })
}

// ---------------------------------------------------------------- /proc

fn rss_kib(pid: u32) -> Option<u64> {
    mcp_bench::proc_status_kib(pid, "VmRSS")
}

// ---------------------------------------------------------------- shared state

#[derive(Clone, Copy)]
struct Sample {
    secs: f64,
    requests: u64,
    rss_kib: u64,
    phase: &'static str,
}

struct Shared {
    addr: String,
    pid: u32,
    target: u64,
    warmup: u64,
    start: Instant,
    /// Operations handed out (their kind follows from the number).
    next_op: AtomicU64,
    /// Requests handed out; no operation starts once it reaches the target.
    issued: AtomicU64,
    /// Requests finished (answered or failed).
    done: AtomicU64,
    /// Operations finished, by kind.
    ops: [AtomicU64; MIX.len()],
    errors: AtomicU64,
    /// Keep-alive connections opened (once per worker unless one broke).
    connects: AtomicU64,
    samples: Mutex<Vec<Sample>>,
    warm: Mutex<Option<Sample>>,
    stop_sampling: AtomicBool,
}

impl Shared {
    fn sample(&self, phase: &'static str) -> Option<Sample> {
        let rss_kib = rss_kib(self.pid)?;
        let s = Sample {
            secs: self.start.elapsed().as_secs_f64(),
            requests: self.done.load(Ordering::Relaxed),
            rss_kib,
            phase,
        };
        self.samples.lock().unwrap().push(s);
        Some(s)
    }

    fn error(&self, op: u64, kind: Kind, what: String) {
        let n = self.errors.fetch_add(1, Ordering::Relaxed) + 1;
        if n <= PRINTED_ERRORS {
            eprintln!("soak: unexpected #{n} (operation {op}, {}): {what}", kind.label());
        }
    }
}

// ---------------------------------------------------------------- HTTP

/// One HTTP/1.1 connection: the request sender and the task driving it
/// (aborted, which closes the socket, when the connection is dropped).
struct Conn {
    sender: SendRequest<Full<Bytes>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn connect(addr: &str) -> Result<Conn, String> {
    let stream = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    stream.set_nodelay(true).map_err(|e| format!("nodelay: {e}"))?;
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    let task = tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(Conn { sender, task })
}

impl Conn {
    async fn send(&mut self, request: Request<Full<Bytes>>) -> Result<Response<Incoming>, String> {
        self.sender
            .ready()
            .await
            .map_err(|e| format!("connection not ready: {e}"))?;
        self.sender
            .send_request(request)
            .await
            .map_err(|e| format!("request failed: {e}"))
    }
}

/// A POST to `/mcp` with the standard headers of `method` (and tool `name`).
fn post(
    addr: &str,
    method: &str,
    name: Option<&str>,
    extra: Option<(&str, &str)>,
    body: String,
) -> Request<Full<Bytes>> {
    let mut b = Request::post("/mcp").header("Host", addr);
    for (n, v) in http_headers(method, name) {
        b = b.header(n, v);
    }
    if let Some((n, v)) = extra {
        b = b.header(n, v);
    }
    b.body(Full::new(Bytes::from(body))).expect("a valid request")
}

/// The `_meta` of a request with these client capabilities.
fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-bench-soak", "version": "0.1.0"}
    })
}

fn call_body(id: u64, name: &str, params: Value) -> String {
    let mut params = params;
    params["name"] = json!(name);
    if params.get("arguments").is_none() {
        params["arguments"] = json!({});
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

fn content_type(response: &Response<Incoming>) -> String {
    response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned()
}

/// Reads a whole single-JSON answer: status and message.
async fn read_json(response: Response<Incoming>) -> Result<(StatusCode, Value), String> {
    let status = response.status();
    let ct = content_type(&response);
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("reading the body: {e}"))?
        .to_bytes();
    if ct != "application/json" {
        return Err(format!(
            "status {status}, content-type {ct:?}, not application/json: {}",
            String::from_utf8_lossy(&body)
        ));
    }
    let v: Value = serde_json::from_slice(&body)
        .map_err(|e| format!("status {status}, not JSON ({e}): {}", String::from_utf8_lossy(&body)))?;
    if v["jsonrpc"] != "2.0" {
        return Err(format!("status {status}, no \"jsonrpc\": \"2.0\": {v}"));
    }
    Ok((status, v))
}

/// The result of a 200 answer to request `id`, whose `resultType` is `result_type`.
fn expect_result<'a>(status: StatusCode, v: &'a Value, id: u64, result_type: &str) -> Result<&'a Value, String> {
    if status != StatusCode::OK {
        return Err(format!("status {status}, not 200: {v}"));
    }
    if v["id"].as_u64() != Some(id) {
        return Err(format!("id is not {id}: {v}"));
    }
    let result = v.get("result").ok_or_else(|| format!("no result: {v}"))?;
    if result["resultType"] != result_type {
        return Err(format!("resultType is not {result_type:?}: {v}"));
    }
    if result.get("isError") == Some(&Value::Bool(true)) {
        return Err(format!("a tool error: {v}"));
    }
    Ok(result)
}

/// A complete `tools/call` result whose one text block is `text`.
fn expect_text(status: StatusCode, v: &Value, id: u64, text: &str) -> Result<(), String> {
    let result = expect_result(status, v, id, "complete")?;
    if result["content"] != json!([{"type": "text", "text": text}]) {
        return Err(format!("content is not the text {text:?}: {v}"));
    }
    Ok(())
}

/// An error answer with this HTTP status, JSON-RPC code and id (or none).
fn expect_error(
    status: StatusCode,
    v: &Value,
    want_status: StatusCode,
    code: i64,
    id: Option<u64>,
) -> Result<(), String> {
    if status != want_status {
        return Err(format!("status {status}, not {want_status}: {v}"));
    }
    if v["error"]["code"].as_i64() != Some(code) {
        return Err(format!("error code is not {code}: {v}"));
    }
    if !v["error"]["message"].is_string() {
        return Err(format!("error without a message: {v}"));
    }
    match id {
        Some(id) if v["id"].as_u64() != Some(id) => Err(format!("id is not {id}: {v}")),
        None if v.get("id").is_some_and(|id| !id.is_null()) => Err(format!("an id where none was readable: {v}")),
        _ => Ok(()),
    }
}

/// Reads an event stream up to its first message.
async fn first_event(response: Response<Incoming>) -> Result<Value, String> {
    let status = response.status();
    let ct = content_type(&response);
    if status != StatusCode::OK || ct != "text/event-stream" {
        let body = response
            .into_body()
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        return Err(format!(
            "status {status}, content-type {ct:?}, not a 200 event stream: {}",
            String::from_utf8_lossy(&body)
        ));
    }
    let mut body = response.into_body();
    let mut buf = String::new();
    loop {
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            let data: Vec<&str> = block
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            match data.as_slice() {
                [] => continue, // a keep-alive comment
                [one] => return serde_json::from_str(one).map_err(|e| format!("event not JSON ({e}): {block:?}")),
                _ => return Err(format!("an event with several data lines: {block:?}")),
            }
        }
        let frame = body
            .frame()
            .await
            .ok_or_else(|| format!("the stream ended before an event: {buf:?}"))?
            .map_err(|e| format!("reading the stream: {e}"))?;
        if let Ok(data) = frame.into_data() {
            buf.push_str(std::str::from_utf8(&data).map_err(|e| format!("not UTF-8: {e}"))?);
        }
    }
}

// ---------------------------------------------------------------- operations

/// The worker's keep-alive connection, opened (again) when needed.
async fn keep_alive<'a>(shared: &Shared, conn: &'a mut Option<Conn>) -> Result<&'a mut Conn, String> {
    if conn.as_ref().is_some_and(|c| c.sender.is_closed()) {
        *conn = None;
    }
    if conn.is_none() {
        *conn = Some(connect(&shared.addr).await?);
        shared.connects.fetch_add(1, Ordering::Relaxed);
    }
    Ok(conn.as_mut().expect("just opened"))
}

/// One request on the keep-alive connection, its whole JSON answer read.
async fn exchange(
    shared: &Shared,
    conn: &mut Option<Conn>,
    request: Request<Full<Bytes>>,
) -> Result<(StatusCode, Value), String> {
    let c = keep_alive(shared, conn).await?;
    let answer = match c.send(request).await {
        Ok(response) => read_json(response).await,
        Err(e) => Err(e),
    };
    if answer.is_err() {
        *conn = None; // its state is unknown: start afresh
    }
    answer
}

async fn operation(shared: &Shared, conn: &mut Option<Conn>, op: u64, kind: Kind) -> Result<(), String> {
    let addr = shared.addr.as_str();
    // Ids are unique across the run: two per operation.
    let id = op * 2;
    match kind {
        Kind::Simple => {
            let name = "test_simple_text";
            let body = call_body(id, name, json!({"_meta": meta(json!({}))}));
            let (status, v) = exchange(shared, conn, post(addr, "tools/call", Some(name), None, body)).await?;
            expect_text(status, &v, id, "This is a simple text response for testing.")
        }
        Kind::Echo => {
            let name = "test_header_echo";
            let region = format!("region-{op}");
            let body = call_body(
                id,
                name,
                json!({"arguments": {"region": region}, "_meta": meta(json!({}))}),
            );
            let request = post(
                addr,
                "tools/call",
                Some(name),
                Some(("Mcp-Param-Region", &region)),
                body,
            );
            let (status, v) = exchange(shared, conn, request).await?;
            expect_text(status, &v, id, &format!("region: {region}"))
        }
        Kind::MrtrElicit | Kind::MrtrState => {
            let (name, key, answer, expected) = if kind == Kind::MrtrElicit {
                let who = format!("n{op}");
                (
                    "test_input_required_result_elicitation",
                    "user_name",
                    json!({"action": "accept", "content": {"name": who}}),
                    format!("Hello, {who}!"),
                )
            } else {
                let ok = op.is_multiple_of(2);
                (
                    "test_input_required_result_request_state",
                    "confirm",
                    json!({"action": "accept", "content": {"ok": ok}}),
                    format!("state-ok: confirmed={ok}, state=started"),
                )
            };
            let caps = json!({"elicitation": {}});
            let body = call_body(id, name, json!({"_meta": meta(caps.clone())}));
            let (status, v) = exchange(shared, conn, post(addr, "tools/call", Some(name), None, body)).await?;
            let result = expect_result(status, &v, id, "input_required")?;
            if result["inputRequests"][key]["method"] != "elicitation/create" {
                return Err(format!("no elicitation/create input request {key:?}: {v}"));
            }
            let state = result["requestState"]
                .as_str()
                .ok_or_else(|| format!("no requestState: {v}"))?
                .to_owned();
            let body = call_body(
                id + 1,
                name,
                json!({
                    "inputResponses": {key: answer},
                    "requestState": state,
                    "_meta": meta(caps),
                }),
            );
            let (status, v) = exchange(shared, conn, post(addr, "tools/call", Some(name), None, body)).await?;
            expect_text(status, &v, id + 1, &expected)
        }
        Kind::Listen => {
            let asked = if op.is_multiple_of(2) {
                json!({"toolsListChanged": true})
            } else {
                json!({"promptsListChanged": true, "resourcesListChanged": true})
            };
            let body = json!({
                "jsonrpc": "2.0",
                "id": id,
                "method": "subscriptions/listen",
                "params": {"notifications": asked, "_meta": meta(json!({}))}
            })
            .to_string();
            let mut stream = connect(addr).await?;
            let response = stream
                .send(post(addr, "subscriptions/listen", None, None, body))
                .await?;
            let ack = first_event(response).await?;
            if ack["method"] != "notifications/subscriptions/acknowledged" || ack["params"]["notifications"] != asked {
                return Err(format!("not the acknowledgement of {asked}: {ack}"));
            }
            if ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].is_null() {
                return Err(format!("an acknowledgement without a subscriptionId: {ack}"));
            }
            drop(stream); // the subscription ends with its connection
            Ok(())
        }
        Kind::Cancel => {
            let name = "test_tool_with_progress";
            let mut m = meta(json!({}));
            m["progressToken"] = json!(format!("p{op}"));
            let body = call_body(id, name, json!({"_meta": m}));
            let mut stream = connect(addr).await?;
            let response = stream.send(post(addr, "tools/call", Some(name), None, body)).await?;
            let event = first_event(response).await?;
            let p = &event["params"];
            if event["method"] != "notifications/progress"
                || p["progressToken"] != format!("p{op}")
                || p["progress"] != 0.0
            {
                return Err(format!("not the first progress event of p{op}: {event}"));
            }
            drop(stream); // mid-call: the server cancels the handler
            Ok(())
        }
        Kind::BadJson => {
            let body = if op.is_multiple_of(2) {
                "{not json".to_owned()
            } else {
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"#)
            };
            let request = post(addr, "tools/call", Some("test_simple_text"), None, body);
            let (status, v) = exchange(shared, conn, request).await?;
            expect_error(status, &v, StatusCode::BAD_REQUEST, -32700, None)
        }
        Kind::BadRpc => {
            let params = json!({"name": "test_simple_text", "arguments": {}, "_meta": meta(json!({}))});
            let body = if op.is_multiple_of(2) {
                json!({"jsonrpc": "2.0", "id": id, "params": params})
            } else {
                json!({"id": id, "method": "tools/call", "params": params})
            };
            let request = post(addr, "tools/call", Some("test_simple_text"), None, body.to_string());
            let (status, v) = exchange(shared, conn, request).await?;
            expect_error(status, &v, StatusCode::BAD_REQUEST, -32600, Some(id))
        }
        Kind::NoMeta => {
            let name = "test_simple_text";
            let body = call_body(id, name, json!({}));
            let (status, v) = exchange(shared, conn, post(addr, "tools/call", Some(name), None, body)).await?;
            expect_error(status, &v, StatusCode::BAD_REQUEST, -32602, Some(id))
        }
    }
}

async fn worker(shared: Arc<Shared>) {
    let mut conn: Option<Conn> = None;
    loop {
        let op = shared.next_op.fetch_add(1, Ordering::Relaxed);
        let kind = Kind::of(op);
        let cost = kind.requests();
        if shared.issued.fetch_add(cost, Ordering::Relaxed) >= shared.target {
            break;
        }
        let outcome = match tokio::time::timeout(OP_TIMEOUT, operation(&shared, &mut conn, op, kind)).await {
            Ok(outcome) => outcome,
            Err(_) => {
                conn = None;
                Err(format!("no answer within {} s", OP_TIMEOUT.as_secs()))
            }
        };
        if let Err(what) = outcome {
            shared.error(op, kind, what);
        }
        shared.ops[kind.index()].fetch_add(1, Ordering::Relaxed);
        let before = shared.done.fetch_add(cost, Ordering::Relaxed);
        if before < shared.warmup && before + cost >= shared.warmup {
            let warm = shared.sample("warm");
            *shared.warm.lock().unwrap() = warm;
        }
    }
}

async fn sampler(shared: Arc<Shared>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_report = Instant::now();
    let mut last_done = 0;
    loop {
        tick.tick().await;
        if shared.stop_sampling.load(Ordering::Relaxed) {
            return;
        }
        let Some(s) = shared.sample("load") else { continue };
        if last_report.elapsed() >= Duration::from_secs(10) {
            let rate = (s.requests - last_done) as f64 / last_report.elapsed().as_secs_f64();
            eprintln!(
                "[soak {:>5.0} s] {} requests, {:.0}/s, RSS {} KiB, {} unexpected",
                s.secs,
                s.requests,
                rate,
                s.rss_kib,
                shared.errors.load(Ordering::Relaxed)
            );
            last_report = Instant::now();
            last_done = s.requests;
        }
    }
}

// ---------------------------------------------------------------- main

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Least-squares slope of RSS (KiB) over requests, in KiB per 100,000 requests.
fn growth_per_100k(samples: &[Sample]) -> Option<f64> {
    let n = samples.len() as f64;
    if samples.len() < 3 {
        return None;
    }
    let mx = samples.iter().map(|s| s.requests as f64).sum::<f64>() / n;
    let my = samples.iter().map(|s| s.rss_kib as f64).sum::<f64>() / n;
    let sxx: f64 = samples.iter().map(|s| (s.requests as f64 - mx).powi(2)).sum();
    let sxy: f64 = samples
        .iter()
        .map(|s| (s.requests as f64 - mx) * (s.rss_kib as f64 - my))
        .sum();
    (sxx > 0.0).then(|| sxy / sxx * 100_000.0)
}

async fn run(opts: Options) -> Result<bool, String> {
    let shared = Arc::new(Shared {
        addr: opts.addr.clone(),
        pid: opts.pid,
        target: opts.requests,
        warmup: opts.warmup,
        start: Instant::now(),
        next_op: AtomicU64::new(0),
        issued: AtomicU64::new(0),
        done: AtomicU64::new(0),
        ops: Default::default(),
        errors: AtomicU64::new(0),
        connects: AtomicU64::new(0),
        samples: Mutex::new(Vec::new()),
        warm: Mutex::new(None),
        stop_sampling: AtomicBool::new(false),
    });
    let first = shared
        .sample("start")
        .ok_or_else(|| format!("no VmRSS for pid {} (is the server running?)", opts.pid))?;
    eprintln!(
        "soak: {} requests over {} keep-alive connections to http://{}/mcp (server pid {}, RSS {} KiB at the start); warm-up {} requests",
        thousands(opts.requests),
        opts.conns,
        opts.addr,
        opts.pid,
        first.rss_kib,
        thousands(opts.warmup)
    );
    let sampling = tokio::spawn(sampler(shared.clone()));
    let load_start = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..opts.conns {
        workers.spawn(worker(shared.clone()));
    }
    while let Some(joined) = workers.join_next().await {
        joined.map_err(|e| format!("a worker panicked: {e}"))?;
    }
    let elapsed = load_start.elapsed().as_secs_f64();
    let end = shared.sample("end");
    shared.stop_sampling.store(true, Ordering::Relaxed);
    let _ = sampling.await;
    // Two quiet seconds, for the record: what the server keeps once idle.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let idle = shared.sample("idle");
    let hwm = mcp_bench::proc_status_kib(opts.pid, "VmHWM");

    // The samples, for the record.
    let samples = shared.samples.lock().unwrap().clone();
    let mut tsv = String::from("secs\trequests\trss_kib\tphase\n");
    for s in &samples {
        writeln!(tsv, "{:.3}\t{}\t{}\t{}", s.secs, s.requests, s.rss_kib, s.phase).unwrap();
    }
    if let Some(dir) = std::path::Path::new(&opts.tsv).parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    std::fs::write(&opts.tsv, tsv).map_err(|e| format!("writing {}: {e}", opts.tsv))?;

    let done = shared.done.load(Ordering::Relaxed);
    let errors = shared.errors.load(Ordering::Relaxed);
    let warm = *shared.warm.lock().unwrap();
    let max = samples.iter().map(|s| s.rss_kib).max().unwrap_or(0);
    println!("soak: requests by kind (share of operations / requests):");
    for (kind, share) in MIX {
        let ops = shared.ops[kind.index()].load(Ordering::Relaxed);
        println!(
            "soak:   {:>9}  {:>2}%  {}",
            thousands(ops * kind.requests()),
            share,
            kind.label()
        );
    }
    println!(
        "soak: total {} requests in {elapsed:.1} s = {:.0} requests/s ({} workers, {} keep-alive connections opened, plus one per stream)",
        thousands(done),
        done as f64 / elapsed,
        opts.conns,
        shared.connects.load(Ordering::Relaxed)
    );
    println!("soak: unexpected errors {errors}");
    let post_warm: Vec<Sample> = samples
        .iter()
        .filter(|s| s.requests >= opts.warmup && s.phase != "idle")
        .copied()
        .collect();
    if let Some(w) = warm {
        println!(
            "soak: RSS after warm-up ({} requests, {:.1} s) {} KiB",
            thousands(w.requests),
            w.secs,
            w.rss_kib
        );
    } else {
        println!("soak: RSS after warm-up: not sampled");
    }
    match end {
        Some(e) => println!("soak: RSS at the end {} KiB", e.rss_kib),
        None => println!("soak: RSS at the end: not sampled (the server is gone)"),
    }
    println!(
        "soak: max RSS {max} KiB (of {} samples, one a second; VmHWM {})",
        samples.len(),
        hwm.map_or("?".into(), |h| format!("{h} KiB"))
    );
    if let Some(i) = idle {
        println!("soak: RSS 2 s after the end (idle) {} KiB", i.rss_kib);
    }
    if let Some(g) = growth_per_100k(&post_warm) {
        println!("soak: RSS trend after warm-up {g:+.1} KiB per 100,000 requests (least squares, informative)");
    }
    println!("soak: RSS samples in {}", opts.tsv);
    let (pass, why) = match (warm, end) {
        (Some(w), Some(e)) => {
            let limit = w.rss_kib as f64 * 1.10 + 1024.0;
            println!("soak: RSS limit (after warm-up × 1.10 + 1 MiB) {limit:.0} KiB");
            if errors > 0 {
                (false, format!("{errors} unexpected errors"))
            } else if e.rss_kib as f64 > limit {
                (false, format!("RSS at the end {} KiB > {limit:.0} KiB", e.rss_kib))
            } else {
                (true, String::new())
            }
        }
        _ => (false, "RSS not sampled after warm-up and at the end".into()),
    };
    if pass {
        println!("soak: PASS");
    } else {
        println!("soak: FAIL ({why})");
    }
    Ok(pass)
}

fn main() -> ExitCode {
    let opts = match parse_options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("soak: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(opts.threads)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    match runtime.block_on(run(opts)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("soak: {e}");
            ExitCode::from(2)
        }
    }
}
