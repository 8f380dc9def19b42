//! An MCP server with its own `main`, observed with OpenTelemetry: the
//! shape to copy when `mcp_runtime::main!` is not enough (your own runtime,
//! your own command line, other services in the same process).
//!
//! ```sh
//! # spans and metrics to a collector (OTLP over HTTP), metrics for Prometheus too
//! OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 MCP_METRICS_ADDR=127.0.0.1:9464 \
//!     cargo run --example observed -- 127.0.0.1:3000
//! ```
//!
//! Without any of those variables it serves just the same, logging to stderr.

use mcp_runtime::prelude::*;
use mcp_runtime::transport::http::{HttpConfig, HttpServer};
use std::process::ExitCode;

/// How many of an item the warehouse holds.
#[mcp_runtime::schema]
struct Stock {
    /// The item's SKU.
    sku: String,
    /// Units on the shelves.
    units: u32,
}

const SHELVES: [(&str, u32); 3] = [("LAMP-01", 12), ("DESK-07", 0), ("CHAIR-3", 41)];

/// Tells how many units of an item the warehouse holds.
#[tool(read_only, idempotent)]
fn stock(
    /// The item's SKU, for example LAMP-01.
    sku: String,
) -> Result<Json<Stock>, String> {
    let units = SHELVES
        .iter()
        .find(|(known, _)| *known == sku)
        .map(|(_, units)| *units)
        .ok_or_else(|| format!("no item with SKU {sku}"))?;
    Ok(Json(Stock { sku, units }))
}

/// Reserves units of an item for an order (takes a moment: it asks the
/// warehouse system).
#[tool]
async fn reserve(
    /// The item's SKU.
    sku: String,
    /// How many units.
    units: u32,
) -> Result<String, String> {
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let held = SHELVES
        .iter()
        .find(|(known, _)| *known == sku)
        .map(|(_, held)| *held)
        .ok_or_else(|| format!("no item with SKU {sku}"))?;
    if units > held {
        return Err(format!("only {held} units of {sku} on the shelves"));
    }
    Ok(format!("reserved {units} x {sku}"))
}

fn main() -> ExitCode {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:3000".to_owned());
    // Before the runtime: the exporters run on threads of their own. The
    // guard sends what is left when it is dropped, after the server stopped.
    let options = mcp_runtime::otel::Options::from_env();
    let telemetry = match options.any() {
        false => None,
        true => match mcp_runtime::otel::init_with("observed", options) {
            Ok(guard) => Some(guard),
            Err(e) => {
                eprintln!("error: cannot start OpenTelemetry: {e}");
                return ExitCode::from(2);
            }
        },
    };
    // Logs to stderr, unless the exporting subscriber (which logs too) is installed.
    mcp_runtime::cli::init_logging();
    if let Some(metrics) = telemetry.as_ref().and_then(|t| t.metrics_addr()) {
        eprintln!("metrics: Prometheus text at http://{metrics}/metrics");
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let served = runtime.block_on(async {
        let server = Server::builder()
            .name("observed")
            .version(env!("CARGO_PKG_VERSION"))
            .build()
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        let http = HttpServer::bind(server, &addr, HttpConfig::default()).await?;
        // SIGTERM and Ctrl-C stop it gracefully from here on.
        let stop = mcp_runtime::transport::stop_signal_installed().await;
        eprintln!(
            "observed: MCP server on Streamable HTTP at http://{}/mcp (SIGTERM or Ctrl-C stops it)",
            http.local_addr()?
        );
        http.serve_until(stop).await
    });
    runtime.shutdown_background();
    // Sends the spans and metrics of the last requests.
    drop(telemetry);
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
