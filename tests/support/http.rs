//! The HTTP side of the test support: a server on an ephemeral loopback
//! port, a real HTTP/1.1 client (hyper), requests with the standard MCP
//! headers, JSON and SSE answers read and schema-validated.

use super::validate_emitted;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{HeaderMap, Method, Request, Response, StatusCode};
use mcp_runtime::transport::http::{HttpConfig, HttpServer};
use mcp_runtime::Server;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

/// The revision the requests speak.
pub const VERSION: &str = "2026-07-28";

// ---------------------------------------------------------------- server

/// A server on an ephemeral loopback port, stopped when dropped.
pub struct TestServer {
    pub addr: SocketAddr,
    pub server: Server,
    pub stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

pub async fn start() -> TestServer {
    start_with(HttpConfig::default()).await
}

pub async fn start_with(config: HttpConfig) -> TestServer {
    let server = Server::builder()
        .name("http-test")
        .version("1.2.3")
        .build()
        .expect("the server builds");
    serve_with(server, config).await
}

/// `server` over Streamable HTTP on a loopback port until the returned
/// server drops.
pub async fn serve_with(server: Server, config: HttpConfig) -> TestServer {
    let http = HttpServer::bind(server.clone(), "127.0.0.1:0", config)
        .await
        .expect("bind an ephemeral loopback port");
    let addr = http.local_addr().unwrap();
    assert!(addr.ip().is_loopback() && addr.port() != 0);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(http.serve_until(async {
        let _ = stopped.await;
    }));
    TestServer {
        addr,
        server,
        stop: Some(stop),
    }
}

// ---------------------------------------------------------------- client

/// One HTTP/1.1 connection: the request sender and the task driving it.
pub struct Conn {
    pub sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    pub task: JoinHandle<()>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub async fn connect(addr: SocketAddr) -> Conn {
    let stream = TcpStream::connect(addr).await.expect("connect");
    handshake(stream).await
}

/// A TCP connection to `to` from the loopback address `from` (127.0.0.1,
/// 127.0.0.2...): a client the server tells apart by its address.
pub async fn stream_from(from: &str, to: SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
    socket
        .bind(format!("{from}:0").parse().expect("an address"))
        .expect("bind");
    socket.connect(to).await.expect("connect")
}

/// Like [`call`], on a connection from the loopback address `from`.
pub async fn call_from(
    from: &str,
    addr: SocketAddr,
    id: i64,
    method: &str,
    name: Option<&str>,
    params: Value,
) -> (StatusCode, Value) {
    let mut conn = handshake(stream_from(from, addr).await).await;
    let request = build(
        addr,
        Method::POST,
        "/mcp",
        &standard_headers(method, name),
        rpc(id, method, params),
    );
    let a = read_all(conn.send(request).await).await;
    let v = a.json(Some(method));
    (a.status, v)
}

pub async fn handshake(stream: TcpStream) -> Conn {
    let (sender, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
        .await
        .expect("handshake");
    let task = tokio::spawn(async move {
        let _ = conn.await;
    });
    Conn { sender, task }
}

impl Conn {
    pub async fn send(&mut self, request: Request<Full<Bytes>>) -> Response<Incoming> {
        tokio::time::timeout(Duration::from_secs(10), self.sender.send_request(request))
            .await
            .expect("timed out waiting for the response head")
            .expect("the request failed")
    }
}

/// The headers a conforming client sends with a request for `method`.
pub fn standard_headers(method: &str, name: Option<&str>) -> Vec<(String, String)> {
    let mut h = vec![
        ("content-type".to_owned(), "application/json".to_owned()),
        ("accept".to_owned(), "application/json, text/event-stream".to_owned()),
        ("mcp-protocol-version".to_owned(), VERSION.to_owned()),
        ("mcp-method".to_owned(), method.to_owned()),
    ];
    if let Some(name) = name {
        h.push(("mcp-name".to_owned(), name.to_owned()));
    }
    h
}

/// Replaces (or, with `None`, removes) one header of a list.
pub fn with_header(mut headers: Vec<(String, String)>, name: &str, value: Option<&str>) -> Vec<(String, String)> {
    headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    if let Some(v) = value {
        headers.push((name.to_owned(), v.to_owned()));
    }
    headers
}

/// A request to `path` with a loopback `Host` unless the headers name one.
pub fn build(
    addr: SocketAddr,
    http_method: Method,
    path: &str,
    headers: &[(String, String)],
    body: Vec<u8>,
) -> Request<Full<Bytes>> {
    let mut b = Request::builder().method(http_method).uri(path);
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        b = b.header("host", addr.to_string());
    }
    for (n, v) in headers {
        b = b.header(n.as_str(), v.as_str());
    }
    b.body(Full::new(Bytes::from(body))).unwrap()
}

/// A JSON-RPC request body with valid `_meta` merged into `params`.
pub fn rpc(id: i64, method: &str, params: Value) -> Vec<u8> {
    super::request(id, method, params).into_bytes()
}

/// A request body whose `params` are used as given (no `_meta` added).
pub fn rpc_raw(id: i64, method: &str, params: Option<Value>) -> Vec<u8> {
    let mut v = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if let Some(p) = params {
        v["params"] = p;
    }
    v.to_string().into_bytes()
}

/// A `_meta` object with another protocol version.
pub fn meta_version(version: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// What a POST answered with a single body.
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub text: String,
}

impl Answer {
    /// The body as one JSON-RPC message, schema-validated.
    pub fn json(&self, method: Option<&str>) -> Value {
        assert!(!self.text.contains('\n'), "not a single-line body: {:?}", self.text);
        let v: Value = serde_json::from_str(&self.text).unwrap_or_else(|e| panic!("not JSON: {:?}: {e}", self.text));
        validate_emitted(&v, method);
        v
    }

    pub fn content_type(&self) -> &str {
        self.headers
            .get("content-type")
            .map(|v| v.to_str().unwrap())
            .unwrap_or("")
    }
}

pub async fn read_all(response: Response<Incoming>) -> Answer {
    let (parts, body) = response.into_parts();
    let bytes = tokio::time::timeout(Duration::from_secs(10), body.collect())
        .await
        .expect("timed out reading the body")
        .expect("reading the body")
        .to_bytes();
    Answer {
        status: parts.status,
        headers: parts.headers,
        text: String::from_utf8(bytes.to_vec()).expect("a UTF-8 body"),
    }
}

/// Sends one request on a fresh connection and reads its whole body.
pub async fn exchange(addr: SocketAddr, http_method: Method, headers: &[(String, String)], body: Vec<u8>) -> Answer {
    let mut conn = connect(addr).await;
    let response = conn.send(build(addr, http_method, "/mcp", headers, body)).await;
    read_all(response).await
}

pub async fn post(addr: SocketAddr, headers: &[(String, String)], body: Vec<u8>) -> Answer {
    exchange(addr, Method::POST, headers, body).await
}

/// POSTs a request for `method` with the standard headers and reads one JSON answer.
pub async fn call(addr: SocketAddr, id: i64, method: &str, name: Option<&str>, params: Value) -> (StatusCode, Value) {
    let a = post(addr, &standard_headers(method, name), rpc(id, method, params)).await;
    assert_eq!(a.content_type(), "application/json", "{}", a.text);
    let v = a.json(Some(method));
    (a.status, v)
}

pub fn error_code(v: &Value) -> i64 {
    v["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {v}"))
}

/// Asserts an HTTP status and a JSON-RPC error code (and the echoed id).
pub fn assert_error(a: &Answer, method: Option<&str>, status: StatusCode, code: i64, id: Option<i64>) -> Value {
    let v = a.json(method);
    assert_eq!(a.status, status, "{v}");
    assert_eq!(error_code(&v), code, "{v}");
    match id {
        Some(id) => assert_eq!(v["id"], json!(id), "the id is echoed: {v}"),
        None => assert!(v.get("id").is_none(), "no readable id: {v}"),
    }
    v
}

/// A `text/event-stream` response read event by event.
pub struct Sse {
    pub body: Incoming,
    pub buf: String,
    pub comments: usize,
    pub method: String,
    pub _conn: Conn,
}

impl Sse {
    pub fn open(response: Response<Incoming>, method: &str, conn: Conn) -> Self {
        assert_eq!(response.status(), StatusCode::OK);
        let h = response.headers();
        assert_eq!(h["content-type"], "text/event-stream");
        assert_eq!(h["x-accel-buffering"], "no");
        assert!(h.get("mcp-session-id").is_none(), "no sessions in 2026-07-28");
        Sse {
            body: response.into_body(),
            buf: String::new(),
            comments: 0,
            method: method.to_owned(),
            _conn: conn,
        }
    }

    /// The next event's message (validated), or `None` when the stream ends
    /// or nothing arrives within `wait`.
    pub async fn next_within(&mut self, wait: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let mut data = Vec::new();
                for line in block.lines() {
                    if line.is_empty() {
                        continue;
                    }
                    if line.starts_with(':') {
                        self.comments += 1;
                    } else if let Some(d) = line.strip_prefix("data:") {
                        data.push(d.trim_start().to_owned());
                    } else {
                        assert!(
                            line.starts_with("event:") || line.starts_with("id:") || line.starts_with("retry:"),
                            "unexpected SSE line {line:?}"
                        );
                    }
                }
                if data.is_empty() {
                    continue;
                }
                assert_eq!(data.len(), 1, "one single-line data field per event: {block:?}");
                let v: Value =
                    serde_json::from_str(&data[0]).unwrap_or_else(|e| panic!("not JSON: {:?}: {e}", data[0]));
                let method = v.get("id").is_some().then_some(self.method.as_str());
                validate_emitted(&v, method);
                return Some(v);
            }
            let frame = match tokio::time::timeout_at(deadline, self.body.frame()).await {
                Err(_) => return None,
                Ok(None) => {
                    assert!(self.buf.trim().is_empty(), "stream ended mid-event: {:?}", self.buf);
                    return None;
                }
                Ok(Some(frame)) => frame.expect("reading the stream"),
            };
            if let Ok(data) = frame.into_data() {
                self.buf.push_str(std::str::from_utf8(&data).expect("UTF-8 stream"));
            }
        }
    }

    pub async fn next(&mut self) -> Value {
        self.next_within(Duration::from_secs(5))
            .await
            .expect("an event within 5 s")
    }
}

/// POSTs a request expected to answer with an event stream.
pub async fn open_stream(addr: SocketAddr, id: i64, method: &str, name: Option<&str>, params: Value) -> Sse {
    let mut conn = connect(addr).await;
    let response = conn
        .send(build(
            addr,
            Method::POST,
            "/mcp",
            &standard_headers(method, name),
            rpc(id, method, params),
        ))
        .await;
    Sse::open(response, method, conn)
}

/// Sends raw bytes on a fresh connection and reads the response head and body.
pub async fn raw_exchange(addr: SocketAddr, request: String) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut raw))
        .await
        .expect("the server answers and closes")
        .unwrap();
    let raw = String::from_utf8(raw).unwrap();
    let status = raw.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = raw
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// An HTTP answer read off a raw socket: status, headers, and the body
/// (de-chunked).
pub struct RawReply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl RawReply {
    /// Parses a whole HTTP/1.1 response.
    pub fn parse(raw: &str) -> RawReply {
        let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((raw, ""));
        let mut lines = head.lines();
        let status = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP response: {raw:?}"));
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
            .collect();
        let chunked = headers
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked"));
        let body = if chunked { dechunk(body) } else { body.to_owned() };
        RawReply { status, headers, body }
    }

    /// A header's value (names compared without case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC messages of the body: one JSON body, or an event
    /// stream's `data:` lines.
    pub fn messages(&self) -> Vec<Value> {
        if self
            .header("content-type")
            .is_some_and(|c| c.starts_with("text/event-stream"))
        {
            self.body
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| serde_json::from_str(d.trim_start()).unwrap())
                .collect()
        } else if self.body.is_empty() {
            Vec::new()
        } else {
            vec![serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON: {:?}: {e}", self.body))]
        }
    }
}

/// The body of a `Transfer-Encoding: chunked` message, put together.
pub fn dechunk(raw: &str) -> String {
    let mut out = String::new();
    let mut rest = raw;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || after.len() < n {
            break;
        }
        out.push_str(&after[..n]);
        rest = after.get(n + 2..).unwrap_or_default();
    }
    out
}
