//! Peer C, the transport ceiling: plain hyper (the same HTTP/1.1 server as
//! the other peers, through `mcp_bench::serve_http1`) answering `POST /mcp`
//! by parsing the JSON body with serde_json and writing a fixed small
//! JSON-RPC result. No MCP at all: what is left when the framework costs
//! nothing.
//! `ceiling --http ADDR`.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request, Response, StatusCode};
use std::convert::Infallible;
use std::process::ExitCode;

const RESULT: &[u8] =
    br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}],"resultType":"complete"}}"#;

async fn answer(req: Request<hyper::body::Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let reply = |status: StatusCode, body: Bytes| {
        let mut r = Response::new(Full::new(body));
        *r.status_mut() = status;
        r
    };
    if req.method() != Method::POST || req.uri().path() != "/mcp" {
        return Ok(reply(StatusCode::NOT_FOUND, Bytes::new()));
    }
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => return Ok(reply(StatusCode::BAD_REQUEST, Bytes::new())),
    };
    if serde_json::from_slice::<serde_json::Value>(&body).is_err() {
        return Ok(reply(StatusCode::BAD_REQUEST, Bytes::new()));
    }
    let mut r = reply(StatusCode::OK, Bytes::from_static(RESULT));
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    Ok(r)
}

#[tokio::main]
async fn main() -> ExitCode {
    mcp_bench::serve_http1("ceiling", hyper::service::service_fn(answer)).await
}
