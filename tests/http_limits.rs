//! What one client may hold of the stand-alone HTTP server (issue 26): silent
//! connections and a trickling request head are closed within the header
//! timeout, an idle kept-alive connection within the idle timeout, a body
//! slower than its deadline is answered 408 and closed, connections past the
//! caps (per address and in all) are answered 503 while the admitted ones are
//! served, and a DNS-rebinding request is refused on a 0.0.0.0 bind while the
//! allowed hosts are served. Timeouts are small, set through `HttpConfig`.

mod support;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Method, StatusCode};
use mcp_runtime::transport::http::{HostPolicy, HttpConfig, HttpServer};
use mcp_runtime::Server;
use serde_json::json;
use std::net::SocketAddr;
use std::time::Duration;
use support::http::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

/// A `server/discover` request as raw bytes, for `host` (and `origin`, if any).
fn raw_request(host: &str, origin: Option<&str>) -> Vec<u8> {
    let body = rpc(1, "server/discover", json!({}));
    let origin = origin.map(|o| format!("Origin: {o}\r\n")).unwrap_or_default();
    let mut raw = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\n{origin}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {VERSION}\r\n\
         Mcp-Method: server/discover\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    raw.extend_from_slice(&body);
    raw
}

/// Reads until the server closes the connection (or `limit` passes: `None`);
/// what it sent, and when it closed.
async fn until_closed(stream: &mut TcpStream, limit: Duration) -> Option<(String, Instant)> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0)) | Ok(Err(_)) => return Some((String::from_utf8_lossy(&got).into_owned(), Instant::now())),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
        }
    }
}

/// Reads one whole response (head and `Content-Length` body) off a kept-alive connection.
async fn read_response(stream: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&got).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length: ")
                        .map(str::to_owned)
                })
                .and_then(|n| n.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if body.len() >= length {
                return text;
            }
        }
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf))
            .await
            .expect("a response within 5 s")
            .expect("read");
        assert!(n > 0, "closed before the whole response: {text}");
        got.extend_from_slice(&buf[..n]);
    }
}

/// A hyper client connection from `from`, one request answered on it.
async fn admitted(from: &str, to: SocketAddr) -> Conn {
    let stream = stream_from(from, to).await;
    let (sender, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
        .await
        .expect("handshake");
    let task = tokio::spawn(async move {
        let _ = conn.await;
    });
    let mut conn = Conn { sender, task };
    discover_on(&mut conn, to).await;
    conn
}

/// `server/discover` on this connection: it must be served.
async fn discover_on(conn: &mut Conn, addr: SocketAddr) {
    let request = build(
        addr,
        Method::POST,
        "/mcp",
        &standard_headers("server/discover", None),
        rpc(1, "server/discover", json!({})),
    );
    let answer = read_all(conn.send(request).await).await;
    assert_eq!(answer.status, StatusCode::OK, "served: {}", answer.text);
}

fn config(f: impl FnOnce(&mut HttpConfig)) -> HttpConfig {
    let mut c = HttpConfig::default();
    f(&mut c);
    c
}

#[tokio::test]
async fn silent_connections_and_a_trickling_head_close_within_the_header_timeout() {
    let timeout = Duration::from_millis(400);
    let server = start_with(config(|c| c.header_read_timeout = timeout)).await;
    let opened = Instant::now();
    let mut silent = Vec::new();
    for _ in 0..50 {
        silent.push(TcpStream::connect(server.addr).await.unwrap());
    }
    let mut half = TcpStream::connect(server.addr).await.unwrap();
    half.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: app")
        .await
        .unwrap();
    // A head that never ends, one byte every 50 ms.
    let addr = server.addr;
    let trickling = tokio::spawn(async move {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let started = Instant::now();
        let _ = stream
            .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            .await;
        let mut sent = 0;
        loop {
            if stream.write_all(b"x").await.is_err() {
                return (started.elapsed(), sent);
            }
            sent += 1;
            let mut byte = [0u8; 1];
            match tokio::time::timeout(Duration::from_millis(50), stream.read(&mut byte)).await {
                Ok(Ok(0)) | Ok(Err(_)) => return (started.elapsed(), sent),
                Ok(Ok(_)) => {}
                Err(_) if started.elapsed() > Duration::from_secs(5) => return (started.elapsed(), sent),
                Err(_) => {}
            }
        }
    });
    // Meanwhile a real request is served.
    let (status, _) = call(server.addr, 1, "server/discover", None, json!({})).await;
    assert_eq!(status, StatusCode::OK);
    let limit = Duration::from_secs(3);
    for (i, stream) in silent.iter_mut().enumerate() {
        let (_, at) = until_closed(stream, limit)
            .await
            .unwrap_or_else(|| panic!("silent connection {i} still open after {limit:?}"));
        let after = at - opened;
        assert!(
            after >= timeout - Duration::from_millis(20),
            "closed too soon: {after:?}"
        );
    }
    let (_, at) = until_closed(&mut half, limit)
        .await
        .expect("the connection with half a head is closed");
    assert!(
        at - opened < timeout * 3,
        "within the timeout and a sweep: {:?}",
        at - opened
    );
    let (took, sent) = trickling.await.unwrap();
    assert!(
        took < Duration::from_millis(1500) && took >= timeout - Duration::from_millis(20),
        "the trickling head is closed after {took:?} ({sent} bytes)"
    );
}

#[tokio::test]
async fn a_kept_alive_connection_closes_when_idle_and_a_slow_next_head_sooner() {
    let head = Duration::from_millis(300);
    let idle = Duration::from_millis(1500);
    let server = start_with(config(|c| {
        c.header_read_timeout = head;
        c.idle_timeout = idle;
    }))
    .await;
    let host = server.addr.to_string();
    // Idle after a response: closed after the idle timeout, not the header one.
    let mut quiet = TcpStream::connect(server.addr).await.unwrap();
    quiet.write_all(&raw_request(&host, None)).await.unwrap();
    assert!(read_response(&mut quiet).await.starts_with("HTTP/1.1 200"));
    let answered = Instant::now();
    // A second connection whose next head trickles after its first response.
    let mut slow = TcpStream::connect(server.addr).await.unwrap();
    slow.write_all(&raw_request(&host, None)).await.unwrap();
    assert!(read_response(&mut slow).await.starts_with("HTTP/1.1 200"));
    tokio::time::sleep(Duration::from_millis(400)).await;
    let first_byte = Instant::now();
    let next = raw_request(&host, None);
    let trickle = tokio::spawn(async move {
        for b in next.iter().take(60) {
            if slow.write_all(&[*b]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(40)).await;
        }
        until_closed(&mut slow, Duration::from_secs(3)).await
    });
    let (_, closed) = until_closed(&mut quiet, Duration::from_secs(4))
        .await
        .expect("the idle connection is closed");
    let after = closed - answered;
    assert!(
        after >= idle - Duration::from_millis(20) && after < idle * 2,
        "idle connection closed after {after:?}"
    );
    let (_, closed) = trickle.await.unwrap().expect("the slow head is closed");
    let after = closed - first_byte;
    assert!(
        after >= head - Duration::from_millis(20) && after < idle,
        "slow next head closed {after:?} after its first byte"
    );
}

#[tokio::test]
async fn a_body_slower_than_its_deadline_is_answered_408_and_closed() {
    let deadline = Duration::from_millis(400);
    let server = start_with(config(|c| c.body_read_timeout = deadline)).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {VERSION}\r\n\
         Mcp-Method: server/discover\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\"",
        server.addr
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    let (reader, mut writer) = stream.into_split();
    let trickle = tokio::spawn(async move {
        for _ in 0..100 {
            if writer.write_all(b" ").await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    let mut stream = reader;
    let mut got = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(3), stream.read_to_end(&mut got)).await;
    trickle.abort();
    let text = String::from_utf8_lossy(&got).to_lowercase();
    assert!(closed.is_ok(), "still open after 3 s; got {text:?}");
    let took = started.elapsed();
    assert!(text.starts_with("http/1.1 408"), "{text}");
    assert!(text.contains("connection: close"), "{text}");
    assert!(text.contains("\"code\":-32600"), "{text}");
    assert!(took >= deadline && took < deadline * 3, "closed after {took:?}");
}

#[tokio::test]
async fn the_connection_caps_answer_503_while_admitted_connections_are_served() {
    let server = start_with(config(|c| {
        c.max_connections_per_peer = 3;
        c.max_connections = 5;
    }))
    .await;
    let addr = server.addr;
    let mut first = Vec::new();
    for _ in 0..3 {
        first.push(admitted("127.0.0.1", addr).await);
    }
    let refused = move |from: &'static str| async move {
        let mut stream = stream_from(from, addr).await;
        // The request goes unread: the answer comes first, then the close.
        let _ = stream.write_all(&raw_request(&addr.to_string(), None)).await;
        until_closed(&mut stream, Duration::from_secs(3))
            .await
            .expect("a refused connection is closed")
            .0
            .to_lowercase()
    };
    let answer = refused("127.0.0.1").await;
    assert!(
        answer.starts_with("http/1.1 503"),
        "a fourth from one address: {answer}"
    );
    assert!(
        answer.contains("retry-after: 1") && answer.contains("connection: close"),
        "{answer}"
    );
    assert!(
        answer.contains("too many open connections from this address"),
        "{answer}"
    );
    let mut second = [admitted("127.0.0.2", addr).await, admitted("127.0.0.2", addr).await];
    let answer = refused("127.0.0.2").await;
    assert!(answer.starts_with("http/1.1 503"), "a sixth in all: {answer}");
    assert!(answer.contains("too many open connections\""), "{answer}");
    // The admitted ones are served meanwhile, again and again.
    for conn in first.iter_mut().chain(second.iter_mut()) {
        discover_on(conn, addr).await;
    }
    // A closed connection makes room.
    drop(first.pop());
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut stream = stream_from("127.0.0.1", addr).await;
        stream.write_all(&raw_request(&addr.to_string(), None)).await.unwrap();
        let answer = read_response(&mut stream).await;
        if answer.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(Instant::now() < deadline, "no room after a close: {answer}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for conn in first.iter_mut().chain(second.iter_mut()) {
        discover_on(conn, addr).await;
    }
}

/// Serves on 0.0.0.0 (any address) with these hosts; the port, reached on loopback.
async fn serve_any(hosts: HostPolicy) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let server = Server::builder().name("http-test").version("1.2.3").build().unwrap();
    let config = config(|c| c.hosts = hosts);
    let http = HttpServer::bind(server, "0.0.0.0:0", config).await.unwrap();
    let port = http.local_addr().unwrap().port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(http.serve_until(async {
        let _ = stopped.await;
    }));
    (SocketAddr::from(([127, 0, 0, 1], port)), stop)
}

async fn status_for(addr: SocketAddr, host: &str, origin: Option<&str>) -> u16 {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(&raw_request(host, origin)).await.unwrap();
    let answer = read_response(&mut stream).await;
    answer.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0)
}

#[tokio::test]
async fn a_rebinding_request_is_refused_on_an_any_address_bind() {
    let (addr, _stop) = serve_any(HostPolicy::default()).await;
    let port = addr.port();
    let rebound = format!("rebind.example:{port}");
    // A page whose name now resolves here sends its own name as both.
    assert_eq!(
        status_for(addr, &rebound, Some(&format!("http://{rebound}"))).await,
        403
    );
    // A client that is not a browser sends no Origin: served under any name.
    assert_eq!(status_for(addr, &rebound, None).await, 200);
    assert_eq!(status_for(addr, &format!("10.1.2.3:{port}"), None).await, 200);
    // A page served from loopback is let in.
    assert_eq!(
        status_for(addr, &format!("127.0.0.1:{port}"), Some("http://localhost:5173")).await,
        200
    );
    assert_eq!(status_for(addr, &rebound, Some("null")).await, 403);
}

#[tokio::test]
async fn an_allowed_host_is_served_on_an_any_address_bind() {
    let (addr, _stop) = serve_any(HostPolicy::allowing(["mcp.example.com"]).unwrap()).await;
    assert_eq!(
        status_for(addr, "mcp.example.com", Some("https://mcp.example.com")).await,
        200
    );
    assert_eq!(status_for(addr, "MCP.example.com:443", None).await, 200);
    assert_eq!(status_for(addr, &addr.to_string(), None).await, 200, "loopback too");
    assert_eq!(
        status_for(addr, "rebind.example", Some("http://rebind.example")).await,
        403
    );
    assert_eq!(
        status_for(addr, "rebind.example", None).await,
        403,
        "only the named hosts"
    );
    assert_eq!(
        status_for(addr, "mcp.example.com", Some("https://evil.example")).await,
        403
    );
}

/// The axum way: `McpService::with_config` with the allowed hosts serves a
/// real domain (`McpService::new` keeps loopback only).
#[tokio::test]
async fn a_mounted_service_serves_the_hosts_it_is_given() {
    use mcp_runtime::transport::http::McpService;
    let server = Server::builder().name("http-test").version("1.2.3").build().unwrap();
    let request = |host: &str| {
        hyper::Request::builder()
            .method(Method::POST)
            .uri("/api/mcp")
            .header("host", host)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", VERSION)
            .header("mcp-method", "server/discover")
            .body(Full::new(Bytes::from(rpc(1, "server/discover", json!({})))))
            .unwrap()
    };
    let plain = McpService::new(server.clone());
    assert_eq!(plain.handle(request("mcp.example.com")).await.status(), 403);
    let hosts = HostPolicy::allowing(["mcp.example.com"]).unwrap();
    let named = McpService::with_config(server, config(|c| c.hosts = hosts));
    assert_eq!(named.handle(request("mcp.example.com")).await.status(), 200);
}

/// A `main!` binary takes the allowed hosts from `--allowed-host` and
/// `MCP_ALLOWED_HOSTS`, and its timeouts from the environment.
#[cfg(unix)]
#[test]
fn a_main_binary_takes_hosts_and_timeouts_from_its_flags_and_environment() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let exe = support::example_binary("everything");
    use support::Killed;
    let mut child = Killed(
        Command::new(&exe)
            .args(["--http", "0.0.0.0:0", "--allowed-host", "mcp.example.com"])
            .env("MCP_ALLOWED_HOSTS", "api.example.com, other.example.com")
            .env("MCP_HEADER_READ_TIMEOUT", "0.3")
            .env_remove("MCP_REDIS_URL")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut stderr = BufReader::new(child.0.stderr.take().unwrap());
    let mut line = String::new();
    let port: u16 = loop {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "the server says where it serves"
        );
        if let Some(rest) = line.split("http://").nth(1) {
            let authority = rest.split('/').next().unwrap();
            break authority.rsplit(':').next().unwrap().parse().unwrap();
        }
    };
    std::thread::spawn(move || {
        let mut sink = String::new();
        while stderr.read_line(&mut sink).unwrap_or(0) > 0 {
            sink.clear();
        }
    });
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        for host in ["mcp.example.com", "api.example.com", "other.example.com"] {
            assert_eq!(
                status_for(addr, host, Some(&format!("https://{host}"))).await,
                200,
                "{host}"
            );
        }
        assert_eq!(
            status_for(addr, "rebind.example", Some("http://rebind.example")).await,
            403
        );
        let mut silent = TcpStream::connect(addr).await.unwrap();
        let opened = Instant::now();
        until_closed(&mut silent, Duration::from_secs(3))
            .await
            .expect("MCP_HEADER_READ_TIMEOUT=0.3 closes a silent connection");
        assert!(opened.elapsed() < Duration::from_millis(1500));
    });
    let bad = Command::new(&exe)
        .args(["--http", "127.0.0.1:0"])
        .env("MCP_MAX_CONNECTIONS", "lots")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!bad.status.success());
    let said = String::from_utf8_lossy(&bad.stderr);
    assert!(
        said.contains("MCP_MAX_CONNECTIONS=\"lots\" is not a whole number"),
        "{said}"
    );
    let bad = Command::new(&exe)
        .args(["--allowed-host", "https://mcp.example.com", "--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!bad.status.success());
    let said = String::from_utf8_lossy(&bad.stderr);
    assert!(said.contains("is not a host name"), "{said}");
}
