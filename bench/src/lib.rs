//! What the peer servers and the drivers of the benchmark suite share: the
//! one request every server is measured with, the check that an answer
//! is a real `echo` result, and reading a process's memory from `/proc`.
//!
//! The suite is run by `bash bench/run.sh`; see `bench/RESULTS.md`.

use serde_json::{json, Value};

/// The protocol revision every request speaks.
pub const PROTOCOL_VERSION: &str = "2026-07-28";

/// The text every `echo` call sends (and expects back).
pub const ECHO_TEXT: &str = "hello";

/// The `_meta` of every request: the protocol version and empty client
/// capabilities; with `BENCH_CLIENT_META=1` in the environment, the
/// `clientInfo` and the capabilities a client declares with every request
/// (the spec asks it to send both each time) instead.
pub fn request_meta() -> Value {
    if std::env::var_os("BENCH_CLIENT_META").is_some_and(|v| v == "1") {
        return json!({
            "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {
                "elicitation": {"form": {}}, "sampling": {}, "roots": {"listChanged": true}
            },
            "io.modelcontextprotocol/clientInfo": {"name": "mcp-bench", "title": "MCP bench", "version": "0.1.0"}
        });
    }
    json!({
        "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// One compact `tools/call` of `echo` with this id.
pub fn echo_call(id: u64) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": ECHO_TEXT}, "_meta": request_meta()}
    })
    .to_string()
}

/// One compact `subscriptions/listen` asking for tool list changes.
pub fn listen_call(id: u64) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": true}, "_meta": request_meta()}
    })
    .to_string()
}

/// The HTTP headers sent with a request of `method` (and tool `name`).
pub fn http_headers(method: &str, name: Option<&str>) -> Vec<(&'static str, String)> {
    let mut headers = vec![
        ("Content-Type", "application/json".to_owned()),
        ("Accept", "application/json, text/event-stream".to_owned()),
        ("MCP-Protocol-Version", PROTOCOL_VERSION.to_owned()),
        ("Mcp-Method", method.to_owned()),
    ];
    if let Some(name) = name {
        headers.push(("Mcp-Name", name.to_owned()));
    }
    headers
}

/// Checks that `body` is a JSON-RPC result of `echo` carrying [`ECHO_TEXT`]
/// (for `expected_id`, if given), with the checks of [`check_echo_line`].
/// An SSE body is accepted: its `data:` lines are read. Returns the
/// response's id.
pub fn check_echo_response(body: &[u8], expected_id: Option<u64>) -> Result<u64, String> {
    let text = std::str::from_utf8(body).map_err(|e| format!("not UTF-8: {e}"))?;
    let json_text = if text.trim_start().starts_with('{') {
        text.trim()
    } else {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .find(|l| l.starts_with('{'))
            .ok_or_else(|| format!("no JSON in the body: {text:?}"))?
    };
    let id =
        check_echo_line(json_text.as_bytes())?.ok_or_else(|| format!("a notification, not a result: {json_text}"))?;
    match expected_id {
        Some(expected) if id != expected => Err(format!("id {id} is not {expected}")),
        _ => Ok(id),
    }
}

/// One answer, read into borrowed, typed fields: no `Value`, no copy. The
/// stdio load checks every answer this way, cheaply enough that the server,
/// not the driver, is what runs out of time.
#[derive(serde::Deserialize)]
struct EchoLine<'a> {
    id: Option<u64>,
    #[serde(borrow)]
    result: Option<EchoResult<'a>>,
    error: Option<serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize)]
struct EchoResult<'a> {
    #[serde(borrow)]
    content: (EchoContent<'a>,),
    #[serde(rename = "isError")]
    is_error: Option<bool>,
}

#[derive(serde::Deserialize)]
struct EchoContent<'a> {
    #[serde(borrow)]
    text: std::borrow::Cow<'a, str>,
}

/// Checks one JSON-RPC message (a line a stdio server wrote): `Ok(None)`
/// for a notification (no id), `Ok(Some(id))` for a result of `echo` whose
/// one content block is the text [`ECHO_TEXT`] and that is not a tool error,
/// an error for anything else.
pub fn check_echo_line(line: &[u8]) -> Result<Option<u64>, String> {
    let text = || String::from_utf8_lossy(line).trim().to_owned();
    let answer: EchoLine<'_> =
        serde_json::from_slice(line).map_err(|e| format!("not an echo answer ({e}): {:?}", text()))?;
    if answer.error.is_some() {
        return Err(format!("an error, not a result: {}", text()));
    }
    let Some(id) = answer.id else {
        return match answer.result {
            None => Ok(None),
            Some(_) => Err(format!("a result without an id: {}", text())),
        };
    };
    let result = answer.result.ok_or_else(|| format!("no result: {}", text()))?;
    if result.is_error == Some(true) {
        return Err(format!("a tool error: {}", text()));
    }
    if result.content.0.text != ECHO_TEXT {
        return Err(format!("result is not the echo of {ECHO_TEXT:?}: {}", text()));
    }
    Ok(Some(id))
}

/// What a peer binary was asked to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Serve {
    /// stdio (no argument, or `--stdio`).
    Stdio,
    /// Streamable HTTP at `http://ADDR/mcp` (`--http ADDR`).
    Http(String),
}

/// Parses `[--stdio | --http ADDR]`, the command line all peers share.
pub fn parse_serve_args() -> Result<Serve, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        [] | ["--stdio"] => Ok(Serve::Stdio),
        ["--http", addr] => Ok(Serve::Http((*addr).to_owned())),
        other => Err(format!("usage: [--stdio | --http ADDR], got {other:?}")),
    }
}

/// Serves `--http ADDR` with `service` on every connection through a plain
/// hyper HTTP/1.1 accept loop (keep-alive, `TCP_NODELAY`, one task a
/// connection, as `rmcp-peer` serves): the ceilings' `main`. `name` names
/// the binary in its usage and errors.
pub async fn serve_http1<S, B>(name: &str, service: S) -> std::process::ExitCode
where
    S: hyper::service::Service<hyper::Request<hyper::body::Incoming>, Response = hyper::Response<B>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let addr = match parse_serve_args() {
        Ok(Serve::Http(addr)) => addr,
        _ => {
            eprintln!("usage: {name} --http ADDR");
            return std::process::ExitCode::from(2);
        }
    };
    let listener = match tokio::net::TcpListener::bind(&addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{name}: cannot bind {addr}: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .keep_alive(true)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

/// A `kB` field of `/proc/PID/status` (`VmRSS`, `VmHWM`), in KiB; `None`
/// where there is no `/proc` or no such field.
pub fn proc_status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
