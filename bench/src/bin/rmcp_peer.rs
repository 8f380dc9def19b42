//! Peer B: the same one-tool `echo` server written with rmcp (the official
//! Rust SDK, from crates.io), the way its documentation shows it:
//! `#[tool_router]`, `#[tool]` and `#[tool_handler]`. `rmcp-peer` serves
//! stdio; `rmcp-peer --http ADDR` serves its Streamable HTTP service at
//! `http://ADDR/mcp`, stateless (`legacy_session_mode = false`) with JSON
//! responses (`json_response = true`), so a 2026-07-28 `tools/call` is
//! answered with one JSON body exactly as ours answers it.
//!
//! To measure the framework rather than a web framework, the service is
//! served by the same plain hyper HTTP/1.1 accept loop as ours (keep-alive,
//! `TCP_NODELAY`), not through axum, and the handler is built once and
//! cloned per request (rmcp's examples build a new one per request).

use mcp_bench::{parse_serve_args, Serve};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{ServerCapabilities, ServerConfig, SubscriptionFilter};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{schemars, tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use std::convert::Infallible;
use std::process::ExitCode;
use std::sync::Arc;

/// The arguments of `echo`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The text to echo.
    text: String,
}

#[derive(Debug, Clone)]
struct Echo {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Echo {
    fn new() -> Self {
        Echo {
            tool_router: Self::tool_router(),
        }
    }

    /// Echoes its text back.
    #[tool(description = "Echoes its text back.")]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }

    // `subscriptions/listen` streams stay open until the client goes away
    // (the default `listen`), for the footprint measurement.
    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }
}

async fn serve_http(addr: String) -> std::io::Result<()> {
    let prototype = Echo::new();
    let service = StreamableHttpService::new(
        move || Ok(prototype.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true),
    );
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!("rmcp-peer: Streamable HTTP at http://{}/mcp", listener.local_addr()?);
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                eprintln!("accept failed: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                let service = service.clone();
                async move {
                    if req.uri().path() == "/mcp" {
                        Ok::<_, Infallible>(service.handle(req).await)
                    } else {
                        let mut r = hyper::Response::new(http_body_util::BodyExt::boxed(http_body_util::Empty::new()));
                        *r.status_mut() = hyper::StatusCode::NOT_FOUND;
                        Ok(r)
                    }
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .keep_alive(true)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                .await;
        });
    }
}

async fn serve_stdio() -> Result<(), Box<dyn std::error::Error>> {
    let running = Echo::new().serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let outcome = match parse_serve_args() {
        Err(e) => {
            eprintln!("rmcp-peer: {e}");
            return ExitCode::from(2);
        }
        Ok(Serve::Http(addr)) => serve_http(addr).await.map_err(Into::into),
        Ok(Serve::Stdio) => serve_stdio().await,
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rmcp-peer: {e}");
            ExitCode::FAILURE
        }
    }
}
