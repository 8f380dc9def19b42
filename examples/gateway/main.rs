//! A gateway: any MCP servers, stdio or HTTP, of either protocol era,
//! served behind this one, over Streamable HTTP (and stdio), with what every
//! `main!` binary has: authorization, guardrails, tracing and replicas from
//! the environment.
//!
//! ```sh
//! cargo run --example gateway -- --config gateway.json --http 127.0.0.1:3000
//! ```
//!
//! `gateway.json` is the `mcpServers` file hosts use (`config.rs` says what
//! an entry may hold). A 2025-11-25 stdio server behind the gateway is
//! spoken to in its era, and callers speak 2026-07-28 (or 2025-11-25) to the
//! gateway; the upstream's questions (elicitation, sampling, roots) reach the
//! caller as rounds. An upstream that cannot be reached at start is tried
//! again in the background while the others are served; a stdio upstream
//! that exits is started again.

mod config;

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let config = match args.iter().position(|a| a == "--config") {
        Some(at) if at + 1 < args.len() => {
            let path = args.remove(at + 1);
            args.remove(at);
            path
        }
        _ => {
            eprintln!("error: --config FILE is needed: the mcpServers file of the servers to serve\n\nusage: gateway --config gateway.json [--http ADDR | --stdio] [...]");
            return ExitCode::from(2);
        }
    };
    let upstreams = match config::Config::load(&config).and_then(config::Config::upstreams) {
        Ok(upstreams) => upstreams,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    mcp_runtime::cli::run_with_args(mcp_runtime::server_info!(), args, move |mut server| {
        let names: Vec<&str> = upstreams.iter().map(|u| u.name.as_str()).collect();
        server = server.instructions(format!("A gateway to these MCP servers: {}.", names.join(", ")));
        for upstream in upstreams {
            server = server.proxy_with(upstream.prefix, upstream.client, upstream.options);
        }
        server
    })
}
