//! The drivers of the benchmark suite, one subcommand each (`bench/run.sh`
//! calls them; every measurement is printed as a tab-separated row
//! `metric server param value` for `results.tsv`):
//!
//! ```text
//! driver wrk-script                      the wrk Lua script of the HTTP load (the shared request)
//! driver check FILE                      FILE (a curl body) is a real echo result, or exit 1
//! driver stdio-load LABEL N K [ROWS] -- CMD..   pipeline N tools/call with K in flight through CMD's stdio
//! driver cold-start LABEL RUNS [ROWS] -- CMD..  spawn-to-first-stdio-response time, RUNS times
//! driver listen LABEL ADDR N PID         RSS of PID with N open subscriptions/listen HTTP streams
//! driver idle LABEL ADDR N PID           RSS of PID with N idle keep-alive connections (one call each)
//! driver shed ADDR CONNS SECS MS         CONNS connections calling `nap` (MS ms) back to back for SECS s
//!                                        against `guarded`: latency and rate of its 200s and 503s
//! driver gen-crates DIR RUNTIME_PATH     write the two 50-tool crates (ours, rmcp) under DIR
//! driver bump FILE                       change one tool body of FILE (for the incremental build)
//! driver report RAW_DIR OUT CRITERION    write RESULTS.md from the rows and criterion's estimates
//! driver sizes                           the size of the future `Server::handle_request` returns
//! ```
//!
//! `ROWS` is `[--prefix P] [--param V]`: the rows' metric names start with P
//! (`--prefix sweep_` gives `sweep_stdio_rps`) and their param is V instead of
//! K or `stdio` (the worker-count sweep of `bench/run.sh` passes the count).

use mcp_bench::{check_echo_line, check_echo_response, echo_call, http_headers, listen_call};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::Command;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("driver: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Vec<String>) -> Result<()> {
    let (head, command) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], args[i + 1..].to_vec()),
        None => (&args[..], Vec::new()),
    };
    let mut head: Vec<&str> = head.iter().map(String::as_str).collect();
    let mut rows = Rows::default();
    for (flag, slot) in [("--prefix", &mut rows.prefix), ("--param", &mut rows.param)] {
        if let Some(i) = head.iter().position(|a| *a == flag) {
            let value = head.get(i + 1).ok_or_else(|| format!("{flag} needs a value"))?;
            *slot = Some((*value).to_owned());
            head.drain(i..i + 2);
        }
    }
    match head.as_slice() {
        ["wrk-script"] => {
            print!("{}", wrk_script());
            Ok(())
        }
        ["check", file] => {
            let body = std::fs::read(file)?;
            check_echo_response(&body, None)?;
            Ok(())
        }
        ["stdio-load", label, n, k] => stdio_load(label, n.parse()?, k.parse()?, &rows, &command).await,
        ["cold-start", label, runs] => cold_start(label, runs.parse()?, &rows, &command).await,
        ["listen", label, addr, n, pid] => listen(label, addr, n.parse()?, pid.parse()?).await,
        ["idle", label, addr, n, pid] => idle(label, addr, n.parse()?, pid.parse()?).await,
        ["shed", addr, conns, secs, ms] => shed(addr, conns.parse()?, secs.parse()?, ms.parse()?).await,
        ["gen-crates", dir, runtime] => gen_crates(Path::new(dir), Path::new(runtime)),
        ["bump", file] => bump(Path::new(file)),
        ["sizes"] => {
            sizes();
            Ok(())
        }
        ["report", raw, out, criterion] => report(Path::new(raw), Path::new(out), Path::new(criterion)),
        _ => Err("unknown subcommand; see the doc comment of bench/src/bin/driver.rs".into()),
    }
}

fn row(metric: &str, server: &str, param: &str, value: f64) {
    println!("{metric}\t{server}\t{param}\t{value}");
}

/// `--prefix P` and `--param V` of `stdio-load` and `cold-start`.
#[derive(Default)]
struct Rows {
    prefix: Option<String>,
    param: Option<String>,
}

impl Rows {
    /// One row: the metric name after the prefix, the param V or else `param`.
    fn row(&self, metric: &str, server: &str, param: &str, value: f64) {
        let metric = format!("{}{metric}", self.prefix.as_deref().unwrap_or(""));
        row(&metric, server, self.param.as_deref().unwrap_or(param), value);
    }
}

// ---------------------------------------------------------------- wrk

fn wrk_script() -> String {
    let mut s = String::from("-- Generated by `driver wrk-script`: the one request every server is measured with.\n");
    s.push_str("wrk.method = \"POST\"\n");
    writeln!(s, "wrk.body = [[{}]]", echo_call(1)).unwrap();
    for (name, value) in http_headers("tools/call", Some("echo")) {
        writeln!(s, "wrk.headers[\"{name}\"] = \"{value}\"").unwrap();
    }
    s.push_str(
        r#"
done = function(summary, latency, requests)
  local e = summary.errors
  local errors = e.connect + e.read + e.write + e.status + e.timeout
  io.write(string.format("WRKRESULT\t%.1f\t%d\t%d\t%d\t%d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(99), summary.requests, errors))
end
"#,
    );
    s
}

// ---------------------------------------------------------------- /proc

/// utime + stime of a process, in seconds.
fn proc_cpu_secs(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_comm = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after_comm.split_whitespace().collect();
    // Fields 14 and 15 of stat(5); after the comm, the state is index 0 (field 3).
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

// ---------------------------------------------------------------- stdio

fn spawn(command: &[String]) -> Result<tokio::process::Child> {
    let (program, args) = command.split_first().ok_or("no command after --")?;
    Ok(Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?)
}

async fn stdio_load(label: &str, n: u64, in_flight: usize, rows: &Rows, command: &[String]) -> Result<()> {
    let mut child = spawn(command)?;
    let pid = child.id().ok_or("the child has no pid")?;
    let mut stdin = BufWriter::with_capacity(64 * 1024, child.stdin.take().ok_or("no stdin")?);
    let mut stdout = BufReader::with_capacity(64 * 1024, child.stdout.take().ok_or("no stdout")?);

    // One request first: the server is up (and has chosen its lifecycle).
    stdin.write_all(format!("{}\n", echo_call(0)).as_bytes()).await?;
    stdin.flush().await?;
    let mut line = String::new();
    tokio::time::timeout(Duration::from_secs(20), stdout.read_line(&mut line)).await??;
    check_echo_response(line.as_bytes(), Some(0)).map_err(|e| format!("{label}: first response: {e}"))?;

    // All request lines, encoded before the clock starts.
    let lines: Vec<Vec<u8>> = (1..=n).map(|id| format!("{}\n", echo_call(id)).into_bytes()).collect();
    let permits = Arc::new(tokio::sync::Semaphore::new(in_flight));
    let cpu_before = proc_cpu_secs(pid).unwrap_or(0.0);
    let start = Instant::now();
    let writer = {
        let permits = permits.clone();
        tokio::spawn(async move {
            for line in &lines {
                permits.acquire().await.expect("open semaphore").forget();
                stdin.write_all(line).await?;
                if permits.available_permits() == 0 {
                    stdin.flush().await?;
                }
            }
            stdin.flush().await?;
            Ok::<_, std::io::Error>(stdin)
        })
    };
    // Each answer is checked in place (`check_echo_line`): the driver's core
    // must outpace the server's, or the run measures the driver.
    let mut answer = Vec::with_capacity(1024);
    let mut seen = 0u64;
    let mut bad = 0u64;
    while seen < n {
        answer.clear();
        let read = tokio::time::timeout(Duration::from_secs(30), stdout.read_until(b'\n', &mut answer)).await??;
        if read == 0 {
            return Err(format!("{label}: the server closed stdout after {seen} responses").into());
        }
        match check_echo_line(&answer) {
            Ok(None) => continue, // a notification
            Ok(Some(_)) => {}
            Err(e) => {
                bad += 1;
                if bad == 1 {
                    eprintln!("{label}: {e}");
                }
            }
        }
        seen += 1;
        permits.add_permits(1);
    }
    let elapsed = start.elapsed().as_secs_f64();
    let cpu = proc_cpu_secs(pid).unwrap_or(0.0) - cpu_before;
    let hwm = mcp_bench::proc_status_kib(pid, "VmHWM").unwrap_or(0);
    let stdin = writer.await??;
    drop(stdin);
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    let _ = child.kill().await;
    if bad > 0 {
        return Err(format!("{label}: {bad} of {n} responses were not echo results").into());
    }
    let k = in_flight.to_string();
    rows.row("stdio_rps", label, &k, n as f64 / elapsed);
    rows.row("stdio_secs", label, &k, elapsed);
    rows.row("stdio_cpu_us_per_req", label, &k, cpu * 1e6 / n as f64);
    rows.row("stdio_peak_rss_kib", label, &k, hwm as f64);
    Ok(())
}

async fn cold_start(label: &str, runs: usize, rows: &Rows, command: &[String]) -> Result<()> {
    let request = format!("{}\n", echo_call(1));
    for _ in 0..runs {
        let start = Instant::now();
        let mut child = spawn(command)?;
        let mut stdin = child.stdin.take().ok_or("no stdin")?;
        let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        stdin.write_all(request.as_bytes()).await?;
        stdin.flush().await?;
        let mut line = String::new();
        tokio::time::timeout(Duration::from_secs(20), stdout.read_line(&mut line)).await??;
        let elapsed = start.elapsed();
        check_echo_response(line.as_bytes(), Some(1)).map_err(|e| format!("{label}: {e}"))?;
        drop(stdin);
        let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
        let _ = child.kill().await;
        rows.row("cold_start_ms", label, "stdio", elapsed.as_secs_f64() * 1e3);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

// ---------------------------------------------------------------- listen

async fn open_listen(addr: &str, id: u64) -> Result<tokio::net::TcpStream> {
    let body = listen_call(id);
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in http_headers("subscriptions/listen", None) {
        write!(request, "{name}: {value}\r\n").unwrap();
    }
    request.push_str("\r\n");
    request.push_str(&body);
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    stream.write_all(request.as_bytes()).await?;
    let mut seen = Vec::with_capacity(1024);
    let mut buf = [0u8; 2048];
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let n = tokio::time::timeout_at(deadline.into(), stream.read(&mut buf)).await??;
        if n == 0 {
            return Err(format!(
                "stream closed before the acknowledgement: {}",
                String::from_utf8_lossy(&seen)
            )
            .into());
        }
        seen.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&seen);
        if !text.starts_with("HTTP/1.1 200") && text.contains("\r\n") {
            return Err(format!("not 200: {text}").into());
        }
        if text.contains("notifications/subscriptions/acknowledged") {
            return Ok(stream);
        }
    }
}

async fn open_many(addr: &str, first_id: u64, n: u64) -> Result<Vec<tokio::net::TcpStream>> {
    let mut streams = Vec::with_capacity(n as usize);
    let mut id = first_id;
    while streams.len() < n as usize {
        let batch = (n as usize - streams.len()).min(50);
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..batch {
            let addr = addr.to_owned();
            let this = id;
            id += 1;
            set.spawn(async move { open_listen(&addr, this).await });
        }
        while let Some(opened) = set.join_next().await {
            streams.push(opened??);
        }
    }
    Ok(streams)
}

async fn listen(label: &str, addr: &str, n: u64, pid: u32) -> Result<()> {
    // Warm-up: the first streams' lazily allocated structures are not per stream.
    let warm = open_many(addr, 1, 20).await?;
    drop(warm);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = mcp_bench::proc_status_kib(pid, "VmRSS").ok_or("no VmRSS")?;
    let start = Instant::now();
    let streams = open_many(addr, 1000, n).await?;
    let opened_in = start.elapsed();
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let after = mcp_bench::proc_status_kib(pid, "VmRSS").ok_or("no VmRSS")?;
    let per_stream = (after.saturating_sub(before) * 1024) as f64 / n as f64;
    row("listen_rss_before_kib", label, &n.to_string(), before as f64);
    row("listen_rss_after_kib", label, &n.to_string(), after as f64);
    row("listen_bytes_per_stream", label, &n.to_string(), per_stream);
    row("listen_open_ms", label, &n.to_string(), opened_in.as_secs_f64() * 1e3);
    drop(streams);
    Ok(())
}

/// One keep-alive connection that has made one `tools/call` of `echo` and
/// read the whole answer: the transport's own cost of an idle connection.
async fn open_idle(addr: &str) -> Result<tokio::net::TcpStream> {
    let body = echo_call(1);
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in http_headers("tools/call", Some("echo")) {
        write!(request, "{name}: {value}\r\n").unwrap();
    }
    request.push_str("\r\n");
    request.push_str(&body);
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    stream.write_all(request.as_bytes()).await?;
    let mut seen = Vec::with_capacity(1024);
    let mut buf = [0u8; 2048];
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let n = tokio::time::timeout_at(deadline.into(), stream.read(&mut buf)).await??;
        if n == 0 {
            return Err("connection closed before the answer".into());
        }
        seen.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&seen);
        let Some(end) = text.find("\r\n\r\n") else { continue };
        let length: usize = text[..end]
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length:")
                    .map(|v| v.trim().to_owned())
            })
            .ok_or("no content-length")?
            .parse()?;
        if seen.len() >= end + 4 + length {
            check_echo_response(&seen[end + 4..end + 4 + length], None)?;
            return Ok(stream);
        }
    }
}

async fn idle(label: &str, addr: &str, n: u64, pid: u32) -> Result<()> {
    let mut warm = Vec::new();
    for _ in 0..20 {
        warm.push(open_idle(addr).await?);
    }
    drop(warm);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = mcp_bench::proc_status_kib(pid, "VmRSS").ok_or("no VmRSS")?;
    let mut conns = Vec::with_capacity(n as usize);
    while conns.len() < n as usize {
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..(n as usize - conns.len()).min(50) {
            let addr = addr.to_owned();
            set.spawn(async move { open_idle(&addr).await });
        }
        while let Some(opened) = set.join_next().await {
            conns.push(opened??);
        }
    }
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let after = mcp_bench::proc_status_kib(pid, "VmRSS").ok_or("no VmRSS")?;
    row(
        "idle_bytes_per_conn",
        label,
        &n.to_string(),
        (after.saturating_sub(before) * 1024) as f64 / n as f64,
    );
    drop(conns);
    Ok(())
}

// ---------------------------------------------------------------- shed

/// One HTTP/1.1 `tools/call` of the `nap` tool (`guarded`) sleeping `ms`.
fn nap_request(addr: &str, id: u64, ms: u64) -> Vec<u8> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {"name": "nap", "arguments": {"ms": ms}, "_meta": mcp_bench::request_meta()}
    })
    .to_string();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in http_headers("tools/call", Some("nap")) {
        write!(request, "{name}: {value}\r\n").unwrap();
    }
    request.push_str("\r\n");
    request.push_str(&body);
    request.into_bytes()
}

/// One HTTP/1.1 response.
struct Answer {
    status: u16,
    /// The server closes the connection after it (`Connection: close`, or a
    /// body that ends with the connection).
    close: bool,
    body: Vec<u8>,
}

/// The body of a chunked response in `data` and the bytes it takes, once
/// `data` holds all of it.
fn dechunk(data: &[u8]) -> Result<Option<(Vec<u8>, usize)>> {
    let mut body = Vec::new();
    let mut at = 0;
    loop {
        let Some(eol) = data[at..].windows(2).position(|w| w == b"\r\n") else {
            return Ok(None);
        };
        let line = std::str::from_utf8(&data[at..at + eol])?;
        let size = usize::from_str_radix(line.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| format!("bad chunk size line {line:?}"))?;
        at += eol + 2;
        if size == 0 {
            // Trailers, if any, up to an empty line.
            loop {
                let Some(eol) = data[at..].windows(2).position(|w| w == b"\r\n") else {
                    return Ok(None);
                };
                at += eol + 2;
                if eol == 0 {
                    return Ok(Some((body, at)));
                }
            }
        }
        if data.len() < at + size + 2 {
            return Ok(None);
        }
        body.extend_from_slice(&data[at..at + size]);
        at += size + 2;
    }
}

/// Reads one response from `stream` (`buf` holds what was read past the
/// previous one). `Ok(None)`: the connection ended (EOF or reset) before
/// the first byte of the response.
async fn read_answer(stream: &mut tokio::net::TcpStream, buf: &mut Vec<u8>) -> Result<Option<Answer>> {
    let mut chunk = [0u8; 4096];
    let mut eof = false;
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let status: u16 = head
                .split_whitespace()
                .nth(1)
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| format!("not an HTTP response: {head:?}"))?;
            let header = |name: &str| {
                head.lines()
                    .skip(1)
                    .find_map(|l| l.strip_prefix(name)?.strip_prefix(':').map(|v| v.trim().to_owned()))
            };
            let mut close = header("connection").is_some_and(|v| v.contains("close"));
            let start = end + 4;
            let body = if let Some(length) = header("content-length") {
                let length: usize = length.parse()?;
                (buf.len() >= start + length).then(|| (buf[start..start + length].to_vec(), start + length))
            } else if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
                dechunk(&buf[start..])?.map(|(body, used)| (body, start + used))
            } else if eof {
                close = true;
                Some((buf[start..].to_vec(), buf.len()))
            } else {
                None
            };
            if let Some((body, used)) = body {
                buf.drain(..used);
                return Ok(Some(Answer { status, close, body }));
            }
        }
        if eof {
            return if buf.is_empty() {
                Ok(None)
            } else {
                Err(format!("the connection closed mid-response: {:?}", String::from_utf8_lossy(buf)).into())
            };
        }
        match stream.read(&mut chunk).await {
            Ok(0) => eof = true,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if buf.is_empty() && e.kind() == std::io::ErrorKind::ConnectionReset => return Ok(None),
            Err(e) => return Err(e.into()),
        }
    }
}

/// Whether `body` (JSON or SSE) is the result of a `nap` call.
fn is_nap_result(body: &[u8]) -> bool {
    let text = String::from_utf8_lossy(body);
    let json = if text.trim_start().starts_with('{') {
        Some(text.trim())
    } else {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .find(|l| l.starts_with('{') && l.contains("\"result\""))
    };
    let Some(v) = json.and_then(|j| serde_json::from_str::<serde_json::Value>(j).ok()) else {
        return false;
    };
    v["result"]["isError"] != serde_json::Value::Bool(true)
        && v["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("slept"))
}

/// What one `shed` connection saw.
#[derive(Default)]
struct ShedTally {
    /// (status, latency in ms) of every answer.
    answers: Vec<(u16, f64)>,
    /// TCP connections opened (the first included).
    connects: u64,
    /// Answers that were neither a 503 nor a 200 carrying a `nap` result.
    bad: u64,
    /// The first of those, for the error message.
    first_bad: Option<String>,
}

/// One of `shed`'s connections: `nap` calls one after the other until the
/// deadline, reconnecting when the server closes the connection.
async fn shed_worker(addr: Arc<str>, deadline: Instant, ms: u64, first_id: u64) -> Result<ShedTally> {
    let mut tally = ShedTally::default();
    let mut conn: Option<tokio::net::TcpStream> = None;
    let mut buf = Vec::new();
    let mut id = first_id;
    let limit = Duration::from_millis(ms) + Duration::from_secs(30);
    while Instant::now() < deadline {
        id += 1;
        let request = nap_request(&addr, id, ms);
        // The clock includes connecting, when the previous answer closed the connection.
        let start = Instant::now();
        let answer = loop {
            let reused = conn.is_some();
            let stream = match &mut conn {
                Some(stream) => stream,
                None => {
                    let stream = tokio::net::TcpStream::connect(&*addr).await?;
                    stream.set_nodelay(true)?;
                    tally.connects += 1;
                    buf.clear();
                    conn.insert(stream)
                }
            };
            let exchange = async {
                match stream.write_all(&request).await {
                    Ok(()) => read_answer(stream, &mut buf).await,
                    Err(_) if reused => Ok(None),
                    Err(e) => Err(e.into()),
                }
            };
            match tokio::time::timeout(limit, exchange).await {
                Err(_) => return Err(format!("no answer in {limit:?}").into()),
                Ok(Err(e)) => return Err(e),
                Ok(Ok(Some(answer))) => break answer,
                // A kept-alive connection the server had closed: once more on a new one.
                Ok(Ok(None)) if reused => conn = None,
                Ok(Ok(None)) => return Err("a new connection closed before its answer".into()),
            }
        };
        let latency = start.elapsed().as_secs_f64() * 1e3;
        if answer.close {
            conn = None;
        }
        let good = match answer.status {
            503 => true,
            200 => is_nap_result(&answer.body),
            _ => false,
        };
        if !good {
            tally.bad += 1;
            tally
                .first_bad
                .get_or_insert_with(|| format!("{} {}", answer.status, String::from_utf8_lossy(&answer.body)));
        }
        tally.answers.push((answer.status, latency));
    }
    Ok(tally)
}

/// The value at quantile `q` of sorted `values` (nearest rank); NaN when empty.
fn quantile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let rank = (q * values.len() as f64).ceil() as usize;
    values[rank.clamp(1, values.len()) - 1]
}

/// `conns` connections calling `nap` (`ms` each) back to back for `secs`
/// seconds against a server that sheds past `MCP_MAX_IN_FLIGHT`: how fast
/// the refused are told, and how many get through.
async fn shed(addr: &str, conns: usize, secs: f64, ms: u64) -> Result<()> {
    let addr: Arc<str> = addr.into();
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(secs);
    let mut set = tokio::task::JoinSet::new();
    for i in 0..conns as u64 {
        set.spawn(shed_worker(addr.clone(), deadline, ms, i << 32));
    }
    let mut all = ShedTally::default();
    while let Some(tally) = set.join_next().await {
        let tally = tally??;
        all.answers.extend(tally.answers);
        all.connects += tally.connects;
        all.bad += tally.bad;
        if all.first_bad.is_none() {
            all.first_bad = tally.first_bad;
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    let latencies = |status: u16| {
        let mut v: Vec<f64> = all
            .answers
            .iter()
            .filter(|(s, _)| *s == status)
            .map(|(_, l)| *l)
            .collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let (shed, admitted) = (latencies(503), latencies(200));
    let param = conns.to_string();
    let server = "guarded";
    row("shed_503_p50_ms", server, &param, quantile(&shed, 0.5));
    row("shed_503_p99_ms", server, &param, quantile(&shed, 0.99));
    row("shed_200_p50_ms", server, &param, quantile(&admitted, 0.5));
    row("shed_200_p99_ms", server, &param, quantile(&admitted, 0.99));
    row("shed_admitted_rps", server, &param, admitted.len() as f64 / elapsed);
    row("shed_503_rps", server, &param, shed.len() as f64 / elapsed);
    row("shed_200_count", server, &param, admitted.len() as f64);
    row("shed_503_count", server, &param, shed.len() as f64);
    row("shed_other_count", server, &param, all.bad as f64);
    row("shed_connects", server, &param, all.connects as f64);
    row("shed_secs", server, &param, elapsed);
    if all.bad > 0 {
        return Err(format!(
            "{} answers were neither 503 nor a 200 `nap` result; the first: {}",
            all.bad,
            all.first_bad.unwrap_or_default()
        )
        .into());
    }
    Ok(())
}

/// Every in-flight request (and every open `subscriptions/listen` stream)
/// holds one `Server::handle_request` future, boxed by the HTTP transport.
fn sizes() {
    use mcp_runtime::__private::engine::{handle_request, parse, Message, Scope};
    let server = mcp_runtime::Server::builder()
        .empty()
        .request_state_keys(vec![[1; 32]])
        .build()
        .expect("the server builds");
    let Ok(Message::Request(request)) = parse(listen_call(1).as_bytes()) else {
        panic!("not a request")
    };
    let future = handle_request(&server, &request, Scope::default());
    row(
        "future_bytes",
        "ours",
        "handle_request",
        std::mem::size_of_val(&future) as f64,
    );
    row("future_bytes", "ours", "scope", std::mem::size_of::<Scope>() as f64);
}

// ---------------------------------------------------------------- generated crates

const GEN_TOOLS: usize = 50;
/// The tool whose body `bump` edits.
const BUMPED: usize = 25;

fn gen_crates(dir: &Path, runtime: &Path) -> Result<()> {
    let runtime = runtime.canonicalize()?;
    let ours = dir.join("ours");
    let rmcp = dir.join("rmcp");
    std::fs::create_dir_all(ours.join("src"))?;
    std::fs::create_dir_all(rmcp.join("src"))?;

    std::fs::write(
        ours.join("Cargo.toml"),
        format!(
            "[package]\nname = \"gen-ours\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n\
             [workspace]\n\n[dependencies]\nmcp-runtime = {{ path = {:?} }}\n",
            runtime.display().to_string()
        ),
    )?;
    let mut src = String::from(
        "//! Generated by `driver gen-crates`: 50 tools written with mcp-runtime.\n\nuse mcp_runtime::prelude::*;\n",
    );
    for i in 0..GEN_TOOLS {
        write!(
            src,
            r#"
/// Tool number {i}: combines its arguments into one line.
#[tool]
fn tool_{i}(
    /// A text.
    text: String,
    /// A count.
    count: u32,
    /// A flag.
    flag: Option<bool>,
) -> String {{
    format!("{{text}}:{{count}}:{{flag:?}}:{{}}", {i} + /*bump*/0)
}}
"#
        )
        .unwrap();
    }
    src.push_str("\nmcp_runtime::main!();\n");
    std::fs::write(ours.join("src/main.rs"), src)?;

    std::fs::write(
        rmcp.join("Cargo.toml"),
        "[package]\nname = \"gen-rmcp\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n\
         [workspace]\n\n[dependencies]\n\
         rmcp = { version = \"3.11\", default-features = false, features = [\"server\", \"macros\", \"schemars\", \"transport-io\"] }\n\
         serde = { version = \"1\", features = [\"derive\"] }\n\
         tokio = { version = \"1\", features = [\"rt-multi-thread\", \"macros\", \"io-std\"] }\n",
    )?;
    let mut src = String::from(
        "//! Generated by `driver gen-crates`: the same 50 tools written with rmcp.\n\n\
         use rmcp::handler::server::wrapper::Parameters;\n\
         use rmcp::{schemars, tool, tool_router, ServiceExt};\n",
    );
    for i in 0..GEN_TOOLS {
        write!(
            src,
            r#"
/// The arguments of tool {i}.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Args{i} {{
    /// A text.
    text: String,
    /// A count.
    count: u32,
    /// A flag.
    flag: Option<bool>,
}}
"#
        )
        .unwrap();
    }
    src.push_str("\n#[derive(Clone)]\npub struct Gen;\n\n#[tool_router(server_handler)]\nimpl Gen {\n");
    for i in 0..GEN_TOOLS {
        write!(
            src,
            r#"
    /// Tool number {i}: combines its arguments into one line.
    #[tool(description = "Tool number {i}: combines its arguments into one line.")]
    fn tool_{i}(&self, Parameters(Args{i} {{ text, count, flag }}): Parameters<Args{i}>) -> String {{
        format!("{{text}}:{{count}}:{{flag:?}}:{{}}", {i} + /*bump*/0)
    }}
"#
        )
        .unwrap();
    }
    src.push_str(
        "}\n\n#[tokio::main]\nasync fn main() -> Result<(), Box<dyn std::error::Error>> {\n    \
         Gen.serve(rmcp::transport::stdio()).await?.waiting().await?;\n    Ok(())\n}\n",
    );
    std::fs::write(rmcp.join("src/main.rs"), src)?;
    Ok(())
}

fn bump(file: &Path) -> Result<()> {
    let src = std::fs::read_to_string(file)?;
    let needle = format!("{BUMPED} + /*bump*/");
    let at = src.find(&needle).ok_or("no bump marker")? + needle.len();
    let end = at + src[at..].find(')').ok_or("no end of the bump marker")?;
    let value: u64 = src[at..end].parse()?;
    let new = format!("{}{}{}", &src[..at], value + 1, &src[end..]);
    std::fs::write(file, new)?;
    Ok(())
}

// ---------------------------------------------------------------- report

#[derive(Default)]
struct Stats {
    values: Vec<f64>,
}

impl Stats {
    fn median(&self) -> f64 {
        let mut v = self.values.clone();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n == 0 {
            f64::NAN
        } else if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    }
    fn min(&self) -> f64 {
        self.values.iter().copied().fold(f64::INFINITY, f64::min)
    }
    fn max(&self) -> f64 {
        self.values.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    }
}

type Table = BTreeMap<(String, String, String), Stats>;

fn read_rows(path: &Path) -> Result<Table> {
    let mut table = Table::new();
    for line in std::fs::read_to_string(path)?.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        if let [metric, server, param, value] = cols.as_slice() {
            if let Ok(v) = value.parse::<f64>() {
                table
                    .entry(((*metric).into(), (*server).into(), (*param).into()))
                    .or_default()
                    .values
                    .push(v);
            }
        }
    }
    Ok(table)
}

fn get<'a>(t: &'a Table, metric: &str, server: &str, param: &str) -> Option<&'a Stats> {
    t.get(&(metric.into(), server.into(), param.into()))
        .filter(|s| !s.values.is_empty())
}

fn med(t: &Table, metric: &str, server: &str, param: &str) -> Option<f64> {
    get(t, metric, server, param).map(Stats::median)
}

fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        "—".into()
    } else if v.abs() >= 1000.0 {
        let s = format!("{:.0}", v);
        let bytes = s.as_bytes();
        let mut out = String::new();
        for (i, b) in bytes.iter().enumerate() {
            if i > 0 && (bytes.len() - i) % 3 == 0 && *b != b'-' {
                out.push(',');
            }
            out.push(*b as char);
        }
        out
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn cell(t: &Table, metric: &str, server: &str, param: &str) -> String {
    stats_cell(get(t, metric, server, param))
}

/// The median, and the min–max when there are several values.
fn stats_cell(stats: Option<&Stats>) -> String {
    match stats {
        None => "n/a".into(),
        Some(s) if s.values.len() == 1 => fmt_num(s.median()),
        Some(s) => format!("{} ({}–{})", fmt_num(s.median()), fmt_num(s.min()), fmt_num(s.max())),
    }
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b != 0.0 => Some(a / b),
        _ => None,
    }
}

fn fmt_ratio(r: Option<f64>) -> String {
    r.map_or("n/a".into(), |r| format!("{r:.2}×"))
}

fn read_text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Criterion's estimates: benchmark id → (median, lower, upper) in ns.
fn criterion_estimates(dir: &Path) -> BTreeMap<String, (f64, f64, f64)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.ends_with("new/estimates.json") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, &mut files);
    let mut found = BTreeMap::new();
    for estimates in files {
        let new = estimates.parent().unwrap();
        let Ok(meta) = std::fs::read_to_string(new.join("benchmark.json")) else {
            continue;
        };
        let Ok(meta) = serde_json::from_str::<serde_json::Value>(&meta) else {
            continue;
        };
        let Some(id) = meta["full_id"].as_str() else { continue };
        let Ok(est) = serde_json::from_str::<serde_json::Value>(&read_text(&estimates)) else {
            continue;
        };
        let m = &est["median"];
        if let (Some(p), Some(lo), Some(hi)) = (
            m["point_estimate"].as_f64(),
            m["confidence_interval"]["lower_bound"].as_f64(),
            m["confidence_interval"]["upper_bound"].as_f64(),
        ) {
            found.insert(id.to_owned(), (p, lo, hi));
        }
    }
    found
}

fn fmt_ns(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

struct Target {
    what: &'static str,
    measured: String,
    met: Option<bool>,
}

/// The worker counts of the sweep's rows (`sweep_*`), in order.
fn sweep_workers(t: &Table) -> Vec<String> {
    let mut ws: Vec<u64> = t
        .keys()
        .filter(|(m, _, _)| m.starts_with("sweep_"))
        .filter_map(|(_, _, p)| p.parse().ok())
        .collect();
    ws.sort_unstable();
    ws.dedup();
    ws.iter().map(u64::to_string).collect()
}

/// The section "Worker-count sweep" (empty without sweep rows).
fn sweep_section(t: &Table) -> String {
    let workers = sweep_workers(t);
    let mut md = String::new();
    if workers.is_empty() {
        return md;
    }
    writeln!(
        md,
        "## Worker-count sweep: stdio and HTTP with `TOKIO_WORKER_THREADS` = {}\n",
        workers.join(", ")
    )
    .unwrap();
    md.push_str(
        "Every server runs with `TOKIO_WORKER_THREADS=w`, pinned to core 1, so `w` stands in for the number of \
         cores of the machine the server runs on. **raw** is `raw-stdio`, the stdio floor: std only, no async \
         runtime, a 64 KiB `BufReader` over stdin, each line parsed with serde_json and answered with the bytes ours \
         answers (it ignores `w`). stdio: pipelined `tools/call` of `echo` with 64 in flight (`driver stdio-load` on \
         core 0), and spawn → first response (`driver cold-start`, on core 1 with the server, which inherits the \
         core and the variable: an `env` and a `taskset` exec'd in between would add ~2.5 ms to every start). HTTP: \
         wrk (core 0) with 64 keep-alive connections against ours, rmcp, the ceiling (C) and the axum ceiling (D: \
         the ceiling's work as a one-route axum `Router`, served through the same accept loop), and the server's \
         peak RSS (VmHWM) after it. The stdio row `all` pools the runs of every worker count: a stdio server runs \
         on one thread whatever `w` is, so they are runs of the same program. **A'** is ours and **raw static** the \
         raw loop, built by the README's release recipe for Linux (\"A smaller binary\": glibc linked in, a \
         static-pie binary; ours traced with `scripts/symbol-order.sh`, its start-up's functions linked first and \
         its relocations packed; `bash bench/order.sh build`). **raw** and **A** are built the default way.\n\n",
    );
    md.push_str(
        "| workers | metric | raw | raw static | A ours | A' ours, recipe | B rmcp | A/raw | A'/raw | A'/raw static | A/B |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let stdio = [
        ("sweep_stdio_rps", "stdio requests/s"),
        ("sweep_stdio_peak_rss_kib", "stdio peak RSS KiB"),
        ("sweep_cold_start_ms", "cold start ms"),
    ];
    let stdio_ratios = [
        ("ours", "raw"),
        ("recipe", "raw"),
        ("recipe", "raw-static"),
        ("ours", "rmcp"),
    ];
    let stdio_columns = ["raw", "raw-static", "ours", "recipe", "rmcp"];
    sweep_rows(&mut md, t, &workers, &stdio_columns, &stdio_ratios, &stdio);
    // A stdio server runs on one thread whatever `w` is: every count's runs
    // measure the same program, and pooled they are one larger sample.
    let rps = |server| pooled(t, "sweep_stdio_rps", server, &workers);
    let median = |server| rps(server).as_ref().map(Stats::median);
    md.push_str("| all | stdio requests/s, every count's runs pooled |");
    for server in stdio_columns {
        write!(md, " {} |", stats_cell(rps(server).as_ref())).unwrap();
    }
    for (a, b) in stdio_ratios {
        write!(md, " {} |", fmt_ratio(ratio(median(a), median(b)))).unwrap();
    }
    md.push('\n');
    md.push_str(
        "\n| workers | HTTP, 64 conns | C ceiling | D axum | A ours | B rmcp | A/C | A/D | A/B |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    let http = [
        ("sweep_http_rps", "requests/s"),
        ("sweep_http_peak_rss_kib", "peak RSS KiB"),
    ];
    sweep_rows(
        &mut md,
        t,
        &workers,
        &["ceiling", "axum", "ours", "rmcp"],
        &[("ours", "ceiling"), ("ours", "axum"), ("ours", "rmcp")],
        &http,
    );
    md.push('\n');
    md
}

/// Every worker count's values of `metric` for `server`, as one sample.
fn pooled(t: &Table, metric: &str, server: &str, workers: &[String]) -> Option<Stats> {
    let values: Vec<f64> = workers
        .iter()
        .filter_map(|w| get(t, metric, server, w))
        .flat_map(|s| s.values.iter().copied())
        .collect();
    (!values.is_empty()).then_some(Stats { values })
}

/// One row per worker count and metric: the median of each of `columns`,
/// then each `(a, b)` of `ratios` as a/b.
fn sweep_rows(
    md: &mut String,
    t: &Table,
    workers: &[String],
    columns: &[&str],
    ratios: &[(&str, &str)],
    metrics: &[(&str, &str)],
) {
    for w in workers {
        for (metric, label) in metrics {
            write!(md, "| {w} | {label} |").unwrap();
            for server in columns {
                write!(md, " {} |", cell(t, metric, server, w)).unwrap();
            }
            for (a, b) in ratios {
                write!(
                    md,
                    " {} |",
                    fmt_ratio(ratio(med(t, metric, a, w), med(t, metric, b, w)))
                )
                .unwrap();
            }
            md.push('\n');
        }
    }
}

/// A target of the sweep: `server` over `base` for `metric` at every worker
/// count, compared with `bound` (`at_least`: ≥, else ≤).
fn sweep_target(
    t: &Table,
    what: &'static str,
    (metric, server, base): (&str, &str, &str),
    bound: f64,
    at_least: bool,
) -> Target {
    let workers = sweep_workers(t);
    let ratios: Vec<(&String, Option<f64>)> = workers
        .iter()
        .map(|w| (w, ratio(med(t, metric, server, w), med(t, metric, base, w))))
        .collect();
    let measured: Vec<String> = ratios.iter().map(|(w, r)| format!("{w}: {}", fmt_ratio(*r))).collect();
    let met = if ratios.iter().all(|(_, r)| r.is_none()) {
        None
    } else {
        Some(
            ratios
                .iter()
                .all(|(_, r)| r.is_some_and(|r| if at_least { r >= bound } else { r <= bound })),
        )
    };
    Target {
        what,
        measured: if measured.is_empty() {
            "n/a".into()
        } else {
            format!("by workers {}", measured.join(", "))
        },
        met,
    }
}

/// The sections of the full run: HTTP, stdio, the sweep, footprint, criterion.
fn main_sections(md: &mut String, t: &Table, criterion: &Path) {
    // HTTP
    md.push_str("## HTTP: `tools/call` of `echo`, keep-alive connections\n\n");
    md.push_str(
        "Server pinned to core 1, load generator (wrk, one thread) to core 0; rounds and durations as listed above. \
         Ratios are A's value over B's or C's: above 1 is better for requests/s, below 1 is better for latencies.\n\n",
    );
    md.push_str("| conns | metric | A ours | B rmcp | C ceiling | A/B | A/C |\n|---|---|---|---|---|---|---|\n");
    for conns in ["1", "16", "64"] {
        for (metric, label, higher_better) in [
            ("http_rps", "requests/s", true),
            ("http_p50_us", "p50 µs", false),
            ("http_p99_us", "p99 µs", false),
            ("http_server_cpu_pct", "server core busy %", false),
        ] {
            let a = med(t, metric, "ours", conns);
            let _ = higher_better;
            writeln!(
                md,
                "| {conns} | {label} | {} | {} | {} | {} | {} |",
                cell(t, metric, "ours", conns),
                cell(t, metric, "rmcp", conns),
                cell(t, metric, "ceiling", conns),
                fmt_ratio(ratio(a, med(t, metric, "rmcp", conns))),
                fmt_ratio(ratio(a, med(t, metric, "ceiling", conns))),
            )
            .unwrap();
        }
    }
    let errors: f64 = t
        .iter()
        .filter(|((m, _, _), _)| m == "http_errors")
        .map(|(_, s)| s.values.iter().sum::<f64>())
        .sum();
    writeln!(
        md,
        "\nErrors (connect, read, write, timeout, non-2xx) over all HTTP runs: {errors}.\n"
    )
    .unwrap();

    // stdio
    md.push_str("## stdio: pipelined `tools/call`, 64 in flight\n\n");
    md.push_str("| metric | A ours | B rmcp | A/B |\n|---|---|---|---|\n");
    for (metric, label) in [
        ("stdio_rps", "requests/s"),
        ("stdio_secs", "total s"),
        ("stdio_cpu_us_per_req", "server CPU µs/request"),
        ("stdio_peak_rss_kib", "server peak RSS KiB"),
    ] {
        writeln!(
            md,
            "| {label} | {} | {} | {} |",
            cell(t, metric, "ours", "64"),
            cell(t, metric, "rmcp", "64"),
            fmt_ratio(ratio(med(t, metric, "ours", "64"), med(t, metric, "rmcp", "64"))),
        )
        .unwrap();
    }
    md.push('\n');

    md.push_str(&sweep_section(t));

    // footprint
    md.push_str("## Footprint\n\n| metric | A ours | B rmcp | C ceiling | A/B |\n|---|---|---|---|---|\n");
    for (metric, param, label) in [
        (
            "http_peak_rss_kib",
            "64",
            "peak RSS KiB (VmHWM) after the 1/16/64-connection runs",
        ),
        (
            "listen_bytes_per_stream",
            "1000",
            "RSS bytes per open `subscriptions/listen` stream (1,000 open)",
        ),
        ("listen_rss_before_kib", "1000", "RSS KiB before opening them"),
        ("listen_rss_after_kib", "1000", "RSS KiB with 1,000 open"),
        (
            "idle_bytes_per_conn",
            "1000",
            "for comparison: RSS bytes per idle keep-alive connection after one call (1,000 open)",
        ),
        ("cold_start_ms", "stdio", "spawn → first stdio response, ms (20 runs)"),
        (
            "build_incremental_secs",
            "50",
            "`cargo build` after editing one of 50 tool bodies, s",
        ),
        (
            "build_full_secs",
            "50",
            "first `cargo build` of the 50-tool crate (clean, own target dir), s",
        ),
    ] {
        writeln!(
            md,
            "| {label} | {} | {} | {} | {} |",
            cell(t, metric, "ours", param),
            cell(t, metric, "rmcp", param),
            cell(t, metric, "ceiling", param),
            fmt_ratio(ratio(med(t, metric, "ours", param), med(t, metric, "rmcp", param))),
        )
        .unwrap();
    }
    if let Some(bytes) = med(t, "future_bytes", "ours", "handle_request") {
        writeln!(
            md,
            "\nThe future of `Server::handle_request` is {bytes:.0} bytes; the HTTP transport boxes one per request in \
             flight and per open stream (`driver sizes`).",
        )
        .unwrap();
    }
    md.push('\n');

    // criterion
    let est = criterion_estimates(criterion);
    md.push_str("## Dispatch path (criterion, bytes in → bytes out)\n\n");
    if est.is_empty() {
        md.push_str("No criterion estimates found.\n\n");
    } else {
        md.push_str("| benchmark | median | 95% CI of the median |\n|---|---|---|\n");
        for (id, (p, lo, hi)) in &est {
            writeln!(md, "| `{id}` | {} | {} – {} |", fmt_ns(*p), fmt_ns(*lo), fmt_ns(*hi)).unwrap();
        }
        md.push('\n');
    }
}

fn report(raw: &Path, out: &Path, criterion: &Path) -> Result<()> {
    let t = read_rows(&raw.join("results.tsv"))?;
    // `bash bench/run.sh sweep` measures the sweep alone: its report has only that.
    let sweep_only = !t.is_empty() && t.keys().all(|(m, _, _)| m.starts_with("sweep_"));
    let mut md = String::new();
    md.push_str("# Benchmark results\n\n");
    let raw_name = raw.file_name().map_or("bench-results".into(), |n| n.to_string_lossy());
    let command = if sweep_only {
        "bash bench/run.sh sweep"
    } else {
        "bash bench/run.sh"
    };
    write!(
        md,
        "Written by `{command}` from one run (raw rows in `target/{raw_name}/results.tsv`). ",
    )
    .unwrap();
    md.push_str(
        "Each cell is the median over the rounds, with the min–max in parentheses. \
         A is ours (`mcp-bench` binary `ours`: `#[tool]` + `mcp_runtime::main!()`), B is rmcp \
         (`rmcp-peer`), C is the ceiling (plain hyper + serde_json, no MCP), and D (in the worker-count sweep) is \
         the axum ceiling (`axum-ceiling`: C's work routed by axum).\n\n",
    );
    md.push_str(
        "How the peers are set up (see `bench/src/bin/`): all of them serve HTTP/1.1 through the same plain hyper \
         accept loop (keep-alive, `TCP_NODELAY`, tokio multi-thread runtime, which sizes itself to the one core \
         `taskset` leaves it). rmcp's `StreamableHttpService` runs stateless (`legacy_session_mode = false`) with \
         `json_response = true`, its handler built once and cloned per request, and is called directly rather than \
         through axum, so its numbers are, if anything, better than with its documented axum setup. The ceiling parses \
         the body into a `serde_json::Value` (with `preserve_order`, unified in from mcp-runtime) and writes a fixed \
         result. The load generator is wrk (Debian) rather than oha: one C thread with the request set up once in Lua \
         costs the pinned load core less per request, and the server core is ~99% busy from 16 connections on, so the \
         servers, not the generator, set the 16/64-connection numbers.\n\n",
    );
    let meta = read_text(&raw.join("meta.txt"));
    md.push_str("## Machine and versions\n\n");
    for line in meta.lines() {
        writeln!(md, "- {line}").unwrap();
    }
    md.push('\n');

    if !sweep_only {
        main_sections(&mut md, &t, criterion);
    } else {
        md.push_str(&sweep_section(&t));
    }

    // targets
    let rps64 = ratio(med(&t, "http_rps", "ours", "64"), med(&t, "http_rps", "rmcp", "64"));
    let rps64c = ratio(med(&t, "http_rps", "ours", "64"), med(&t, "http_rps", "ceiling", "64"));
    let p99 = ratio(
        med(&t, "http_p99_us", "ours", "64"),
        med(&t, "http_p99_us", "rmcp", "64"),
    );
    let p50 = ratio(med(&t, "http_p50_us", "ours", "1"), med(&t, "http_p50_us", "rmcp", "1"));
    let p50c = ratio(
        med(&t, "http_p50_us", "ours", "1"),
        med(&t, "http_p50_us", "ceiling", "1"),
    );
    let stdio = ratio(med(&t, "stdio_rps", "ours", "64"), med(&t, "stdio_rps", "rmcp", "64"));
    let rss = ratio(
        med(&t, "http_peak_rss_kib", "ours", "64"),
        med(&t, "http_peak_rss_kib", "rmcp", "64"),
    );
    let listen = med(&t, "listen_bytes_per_stream", "ours", "1000");
    let cold = med(&t, "cold_start_ms", "ours", "stdio");
    let build = ratio(
        med(&t, "build_incremental_secs", "ours", "50"),
        med(&t, "build_incremental_secs", "rmcp", "50"),
    );
    let sweep_targets = [
        sweep_target(
            &t,
            "sweep, stdio: requests/s ≥ 0.9× raw-stdio at every worker count",
            ("sweep_stdio_rps", "ours", "raw"),
            0.9,
            true,
        ),
        sweep_target(
            &t,
            "sweep, stdio: peak RSS ≤ 1.2× raw-stdio's at every worker count",
            ("sweep_stdio_peak_rss_kib", "ours", "raw"),
            1.2,
            false,
        ),
        sweep_target(
            &t,
            "sweep: cold start ≤ 1.2× raw-stdio's at every worker count",
            ("sweep_cold_start_ms", "ours", "raw"),
            1.2,
            false,
        ),
        sweep_target(
            &t,
            "sweep, stdio, ours by the release recipe (A'): requests/s ≥ 0.9× raw-stdio at every worker count",
            ("sweep_stdio_rps", "recipe", "raw"),
            0.9,
            true,
        ),
        sweep_target(
            &t,
            "sweep, stdio, A': peak RSS ≤ 1.2× raw-stdio's at every worker count",
            ("sweep_stdio_peak_rss_kib", "recipe", "raw"),
            1.2,
            false,
        ),
        sweep_target(
            &t,
            "sweep, A': cold start ≤ 1.2× raw-stdio's at every worker count",
            ("sweep_cold_start_ms", "recipe", "raw"),
            1.2,
            false,
        ),
        sweep_target(
            &t,
            "sweep, stdio, A': peak RSS ≤ 1.2× raw-stdio's linked the same way (raw static) at every worker count",
            ("sweep_stdio_peak_rss_kib", "recipe", "raw-static"),
            1.2,
            false,
        ),
        sweep_target(
            &t,
            "sweep, A': cold start ≤ 1.2× raw-stdio's linked the same way (raw static) at every worker count",
            ("sweep_cold_start_ms", "recipe", "raw-static"),
            1.2,
            false,
        ),
        sweep_target(
            &t,
            "sweep, HTTP 64 conns: requests/s ≥ 0.9× the axum ceiling (D) at every worker count",
            ("sweep_http_rps", "ours", "axum"),
            0.9,
            true,
        ),
        sweep_target(
            &t,
            "sweep, HTTP 64 conns: requests/s ≥ 0.9× the plain-hyper ceiling (C) at every worker count",
            ("sweep_http_rps", "ours", "ceiling"),
            0.9,
            true,
        ),
    ];
    let targets = [
        Target {
            what: "HTTP 64 conns: requests/s ≥ 2.0× rmcp",
            measured: fmt_ratio(rps64),
            met: rps64.map(|r| r >= 2.0),
        },
        Target {
            what: "HTTP 64 conns: requests/s ≥ 0.85× ceiling",
            measured: fmt_ratio(rps64c),
            met: rps64c.map(|r| r >= 0.85),
        },
        Target {
            what: "HTTP 64 conns: p99 ≤ rmcp's",
            measured: format!("{} of rmcp's", fmt_ratio(p99)),
            met: p99.map(|r| r <= 1.0),
        },
        Target {
            what: "HTTP 1 conn: p50 ≤ rmcp's",
            measured: format!("{} of rmcp's", fmt_ratio(p50)),
            met: p50.map(|r| r <= 1.0),
        },
        Target {
            what: "HTTP 1 conn: p50 within 15% of the ceiling",
            measured: format!("{} of the ceiling's", fmt_ratio(p50c)),
            met: p50c.map(|r| r <= 1.15),
        },
        Target {
            what: "stdio pipelined: requests/s ≥ 2.0× rmcp",
            measured: fmt_ratio(stdio),
            met: stdio.map(|r| r >= 2.0),
        },
        Target {
            what: "peak RSS (64-conn run) ≤ rmcp's",
            measured: format!("{} of rmcp's", fmt_ratio(rss)),
            met: rss.map(|r| r <= 1.0),
        },
        Target {
            what: "≤ 16 KiB per idle `subscriptions/listen` stream",
            measured: listen.map_or("n/a".into(), |b| format!("{:.1} KiB", b / 1024.0)),
            met: listen.map(|b| b <= 16.0 * 1024.0),
        },
        Target {
            what: "cold start ≤ 5 ms (median)",
            measured: cold.map_or("n/a".into(), |c| format!("{c:.2} ms")),
            met: cold.map(|c| c <= 5.0),
        },
        Target {
            what: "50-tool incremental build ≤ rmcp's",
            measured: format!("{} of rmcp's", fmt_ratio(build)),
            met: build.map(|r| r <= 1.0),
        },
    ];
    let mut head = String::from("## Targets\n\n| target | measured | status |\n|---|---|---|\n");
    // A sweep-only run lists only the targets it measures.
    let shown = targets.iter().filter(|_| !sweep_only).chain(&sweep_targets);
    for target in shown {
        let status = match target.met {
            Some(true) => "**met**",
            Some(false) => "**missed**",
            None => "not measured",
        };
        writeln!(head, "| {} | {} | {status} |", target.what, target.measured).unwrap();
    }
    head.push('\n');
    // Targets first, after the machine.
    let split = md
        .find("## HTTP")
        .or_else(|| md.find("## Worker-count sweep"))
        .unwrap_or(md.len());
    md.insert_str(split, &head);

    let notes = read_text(&raw.join("notes.txt"));
    if !notes.trim().is_empty() {
        md.push_str("## Notes from the run\n\n");
        for line in notes.lines() {
            writeln!(md, "- {line}").unwrap();
        }
        md.push('\n');
    }
    md.push_str("## Exact commands\n\n```sh\n");
    md.push_str(&read_text(&raw.join("commands.txt")));
    md.push_str("```\n");
    std::fs::write(out, md)?;
    Ok(())
}
