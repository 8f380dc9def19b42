//! A scripted HTTP/1.1 peer on a loopback port, for what the client does
//! with a server that says exactly one thing: each request it reads is kept
//! in order and answered as the script says (a status and body, a stream
//! held open, or nothing at all).

use serde_json::Value;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request as the peer read it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC method of the body, `""` when none.
    pub fn rpc(&self) -> &str {
        self.body.get("method").and_then(Value::as_str).unwrap_or("")
    }
}

/// How the peer answers one request.
pub enum Script {
    /// A status line's code and text, a content type and a whole body.
    Reply(&'static str, &'static str, String),
    /// 200 with an event stream: these chunks, then the stream held open.
    Stream(Vec<String>),
    /// This status line and content type, then this chunk sent
    /// again and again until the client stops reading.
    Endless(&'static str, &'static str, String),
    /// Nothing: the request is read and the connection held open.
    Hang,
}

/// The JSON body of a 200 answer.
pub fn json(body: Value) -> Script {
    Script::Reply("200 OK", "application/json", body.to_string())
}

/// `initialize` answered as a 2025-11-25 server with tools.
pub fn legacy_initialize(request: &Seen) -> Script {
    json(
        serde_json::json!({"jsonrpc": "2.0", "id": request.body["id"], "result": {
        "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
        "serverInfo": {"name": "scripted", "version": "1.0.0"}}}),
    )
}

/// Reads one request (head and `Content-Length` body); `None` when the
/// connection ends first.
pub async fn read_request(conn: &mut TcpStream) -> Option<Seen> {
    let mut buf = Vec::new();
    let end = loop {
        let mut chunk = [0u8; 4096];
        let n = conn.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let method = lines.next()?.split(' ').next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < end + length {
        let mut chunk = [0u8; 4096];
        let n = conn.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&buf[end..end + length]).unwrap_or(Value::Null);
    Some(Seen { method, headers, body })
}

/// Writes a whole answer and closes the connection.
pub async fn reply(conn: &mut TcpStream, status: &str, content_type: &str, body: &str) {
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\nmcp-session-id: s1\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = conn.write_all(head.as_bytes()).await;
    let _ = conn.write_all(body.as_bytes()).await;
    let _ = conn.shutdown().await;
}

/// Serves `script` on a loopback port: the endpoint's URL and the requests
/// read, in order.
pub async fn serve<F>(script: F) -> (String, Arc<Mutex<Vec<Seen>>>)
where
    F: Fn(&Seen) -> Script + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("an address"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let script = Arc::new(script);
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let log = log.clone();
            let script = script.clone();
            tokio::spawn(async move {
                let Some(request) = read_request(&mut conn).await else {
                    return;
                };
                log.lock().unwrap().push(request.clone());
                match script(&request) {
                    Script::Reply(status, content_type, body) => reply(&mut conn, status, content_type, &body).await,
                    Script::Stream(chunks) => {
                        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nmcp-session-id: s1\r\n\
                                    transfer-encoding: chunked\r\n\r\n";
                        let _ = conn.write_all(head.as_bytes()).await;
                        for chunk in chunks {
                            let framed = format!("{:x}\r\n{chunk}\r\n", chunk.len());
                            if conn.write_all(framed.as_bytes()).await.is_err() {
                                return;
                            }
                        }
                        // Held open until the client goes away.
                        let mut rest = [0u8; 64];
                        while matches!(conn.read(&mut rest).await, Ok(n) if n > 0) {}
                    }
                    Script::Endless(status, content_type, chunk) => {
                        let head = format!(
                            "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\nmcp-session-id: s1\r\n\
                             transfer-encoding: chunked\r\n\r\n"
                        );
                        let _ = conn.write_all(head.as_bytes()).await;
                        let framed = format!("{:x}\r\n{chunk}\r\n", chunk.len());
                        while conn.write_all(framed.as_bytes()).await.is_ok() {}
                    }
                    Script::Hang => {
                        let mut rest = [0u8; 64];
                        while matches!(conn.read(&mut rest).await, Ok(n) if n > 0) {}
                    }
                }
            });
        }
    });
    (url, seen)
}
