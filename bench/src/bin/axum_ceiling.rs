//! Peer D, the axum ceiling: the same work as `ceiling` (parse the JSON
//! body with serde_json, write a fixed small JSON-RPC result), written as a
//! Rust web developer would write it in axum: a `Router` with one
//! `POST /mcp` route whose handler takes the body as `Bytes`. Served through
//! `mcp_bench::serve_http1`, the ceiling's accept loop, so the difference
//! from `ceiling` is axum's routing and extraction. `axum-ceiling --http ADDR`.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use bytes::Bytes;
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
    let app = Router::new().route("/mcp", post(answer));
    mcp_bench::serve_http1("axum-ceiling", hyper_util::service::TowerToHyperService::new(app)).await
}
