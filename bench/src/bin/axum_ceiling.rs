//! Peer D, the axum ceiling: the same work as `ceiling` (parse the JSON
//! body with serde_json, write a fixed small JSON-RPC result), written as a
//! Rust web developer would write it in axum: a `Router` with one
//! `POST /mcp` route whose handler takes the body as `Bytes`. Served through
//! the same hyper HTTP/1.1 accept loop as the other peers, so the difference
//! from `ceiling` is axum's routing and extraction. `axum-ceiling --http ADDR`.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use bytes::Bytes;
use mcp_bench::{parse_serve_args, Serve};
use std::process::ExitCode;

const RESULT: &[u8] =
    br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}],"resultType":"complete"}}"#;

async fn answer(body: Bytes) -> Response {
    if serde_json::from_slice::<serde_json::Value>(&body).is_err() {
        return StatusCode::BAD_REQUEST.into_response();
    }
    ([(header::CONTENT_TYPE, "application/json")], Bytes::from_static(RESULT)).into_response()
}

#[tokio::main]
async fn main() -> ExitCode {
    let addr = match parse_serve_args() {
        Ok(Serve::Http(addr)) => addr,
        _ => {
            eprintln!("usage: axum-ceiling --http ADDR");
            return ExitCode::from(2);
        }
    };
    let listener = match tokio::net::TcpListener::bind(&addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("axum-ceiling: cannot bind {addr}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let app = Router::new().route("/mcp", post(answer));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .keep_alive(true)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}
