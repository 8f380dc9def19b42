//! The command line every server binary shares:
//!
//! ```text
//! server            serve stdio (the default)
//! server --stdio    serve stdio
//! server --http 127.0.0.1:3000   serve Streamable HTTP at http://127.0.0.1:3000/mcp
//! server tools      list the tools: names, descriptions, input and output schemas
//! server discover   print what server/discover answers
//! server call NAME '{"json":"args"}' [--answers FILE]
//!                   run one tool in process and print its result
//! server --help     print usage
//! ```
//!
//! `--metrics ADDR` (or `MCP_METRICS_ADDR`), with either way of serving,
//! serves the metrics as Prometheus text at `http://ADDR/metrics` (the
//! `otel` feature).

mod auth;
mod local;

use crate::protocol::Implementation;
use crate::server::{Server, ServerBuilder};
use std::io::IsTerminal;
use std::process::ExitCode;

/// What the command line asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Serve stdio.
    Stdio,
    /// Serve Streamable HTTP on this address.
    Http(String),
    /// Print usage.
    Help,
    /// List the tools.
    Tools,
    /// Print the `server/discover` result.
    Discover,
    /// Run one tool in process.
    Call {
        /// The tool.
        name: String,
        /// Its arguments, a JSON object (`{}` when not given).
        arguments: String,
        /// A JSON file of answers to its asks, by key; without one they are asked on the terminal.
        answers: Option<String>,
    },
}

/// Takes `--metrics ADDR` out of the arguments, wherever it stands.
fn take_metrics_flag(args: impl Iterator<Item = String>) -> Result<(Vec<String>, Option<String>), String> {
    let mut rest = Vec::new();
    let mut metrics = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "--metrics" {
            let addr = args
                .next()
                .ok_or("--metrics needs an address, for example --metrics 127.0.0.1:9464")?;
            metrics = Some(addr);
        } else {
            rest.push(arg);
        }
    }
    Ok((rest, metrics))
}

/// Parses the arguments after the program name.
pub fn parse_args<I: IntoIterator<Item = String>>(args: I) -> Result<Command, String> {
    let mut args = args.into_iter();
    let command = match args.next().as_deref() {
        None | Some("--stdio") => Command::Stdio,
        Some("--help") | Some("-h") => Command::Help,
        Some("--http") => match args.next() {
            Some(addr) => Command::Http(addr),
            None => return Err("--http needs an address, for example --http 127.0.0.1:3000".into()),
        },
        Some("tools") => Command::Tools,
        Some("discover") => Command::Discover,
        Some("call") => {
            let name = args
                .next()
                .ok_or("call needs a tool name, for example: call greet '{\"name\": \"Ada\"}'")?;
            let mut arguments = None;
            let mut answers = None;
            while let Some(arg) = args.next() {
                if arg == "--answers" {
                    answers = Some(args.next().ok_or("--answers needs a file of JSON answers")?);
                } else if arguments.is_none() {
                    arguments = Some(arg);
                } else {
                    return Err(format!("unexpected argument {arg:?}"));
                }
            }
            return Ok(Command::Call {
                name,
                arguments: arguments.unwrap_or_else(|| "{}".into()),
                answers,
            });
        }
        Some(other) => return Err(format!("unknown argument {other:?}")),
    };
    match args.next() {
        Some(extra) => Err(format!("unexpected argument {extra:?}")),
        None => Ok(command),
    }
}

fn usage(name: &str) -> String {
    format!(
        "{name}: an MCP server\n\n\
         usage:\n  {name}                      serve MCP over stdio (the default)\n  \
         {name} --stdio              serve MCP over stdio\n  \
         {name} --http ADDR          serve Streamable HTTP at http://ADDR/mcp (e.g. --http 127.0.0.1:3000)\n  \
         {name} tools                list the tools: names, descriptions, input and output schemas\n  \
         {name} discover             print what server/discover answers\n  \
         {name} call NAME [JSON] [--answers FILE]\n                           \
         run one tool in process with JSON arguments (default {{}}) and print its result;\n                           \
         its questions (elicitation, sampling, roots) are asked here, or answered from\n                           \
         FILE, a JSON object of answers by key\n  \
         {name} --help               print this help\n\n\
         With --metrics ADDR (or {METRICS_ENV}=ADDR) next to --stdio or --http, the metrics are served\n\
         as Prometheus text at http://ADDR/metrics (e.g. --metrics 127.0.0.1:9464).\n\
         Logs go to stderr; set RUST_LOG (e.g. RUST_LOG=debug) to change the level.\n\
         Over HTTP, SIGTERM or Ctrl-C stops the server gracefully: requests in flight get\n\
         {SHUTDOWN_GRACE_ENV} seconds (default 30) to finish.\n{otel}",
        otel = OTEL_USAGE
    )
}

#[cfg(feature = "otel")]
const OTEL_USAGE: &str = "With OTEL_EXPORTER_OTLP_ENDPOINT set (e.g. http://127.0.0.1:4318), each request's span \
                          and the metrics are exported\nover OTLP (HTTP/protobuf), continuing the caller's \
                          traceparent; OTEL_SERVICE_NAME names the service.\n";
#[cfg(not(feature = "otel"))]
const OTEL_USAGE: &str = "";

/// Sends `tracing` output to stderr (never stdout), filtered by `RUST_LOG`
/// (default `info`). Does nothing if a subscriber is already set.
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(filter)
        .try_init();
}

fn banner(server: &Server) -> String {
    let info = &server.config().info;
    let tools = server.tool_names();
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| info.name.clone());
    format!(
        "{name} {version}: MCP server on stdio, serving {n} tool(s): {list}\n\
         This terminal is now its client: it reads JSON-RPC messages, one per line (Ctrl-D quits).\n\
         To connect a host, add to its mcpServers config:\n  \
         {{\"mcpServers\": {{\"{name}\": {{\"command\": \"{exe}\"}}}}}}\n\
         To serve Streamable HTTP instead: {exe} --http 127.0.0.1:3000\n",
        name = info.name,
        version = info.version,
        n = tools.len(),
        list = tools.join(", "),
    )
}

/// Runs a server binary: parses the command line, sets up logging to stderr,
/// builds the server from the registry (after `configure`), and serves.
/// Used by [`crate::main!`].
pub fn run(info: Implementation, configure: impl FnOnce(ServerBuilder) -> ServerBuilder) -> ExitCode {
    let name = info.name.clone();
    let parsed =
        take_metrics_flag(std::env::args().skip(1)).and_then(|(args, metrics)| Ok((parse_args(args)?, metrics)));
    let (command, metrics) = match parsed {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}\n\n{}", usage(&name));
            return ExitCode::from(2);
        }
    };
    if command == Command::Help {
        print!("{}", usage(&name));
        return ExitCode::SUCCESS;
    }
    let local = matches!(command, Command::Tools | Command::Discover | Command::Call { .. });
    // Exports spans and metrics while it lives, and sends what is left when
    // dropped, after the server stopped (the `otel` feature).
    #[cfg(feature = "otel")]
    let _otel = match telemetry(&name, metrics, local) {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("error: cannot start OpenTelemetry: {e}");
            return ExitCode::from(2);
        }
    };
    #[cfg(not(feature = "otel"))]
    if metrics.is_some() || std::env::var_os(METRICS_ENV).is_some() {
        eprintln!("error: --metrics and {METRICS_ENV} need the `otel` feature of mcp-runtime, which this binary was built without");
        return ExitCode::from(2);
    }
    init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let builder = match runtime.block_on(shared_state(Server::builder().info(info))) {
        Ok(builder) => builder,
        Err(e) => {
            eprintln!("error: cannot start the MCP server: {e}");
            return ExitCode::from(2);
        }
    };
    let server = match configure(builder).build() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot start the MCP server: {e}");
            return ExitCode::from(2);
        }
    };
    if local {
        let outcome = runtime.block_on(local::run(&server, command));
        runtime.shutdown_background();
        return outcome;
    }
    let outcome = runtime.block_on(serve(server, command));
    // Handlers still running past the transport's end are not waited for.
    runtime.shutdown_background();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The environment variable that sets the Prometheus text endpoint's address, like `--metrics`.
pub const METRICS_ENV: &str = crate::telemetry::METRICS_ADDR_ENV;

/// Sets up OTLP export and the metrics endpoint as the environment and
/// `--metrics` say; nothing for the in-process commands.
#[cfg(feature = "otel")]
fn telemetry(
    name: &str,
    metrics: Option<String>,
    local: bool,
) -> Result<Option<crate::otel::OtelGuard>, crate::otel::OtelError> {
    let mut options = crate::otel::Options::from_env();
    if metrics.is_some() {
        options.prometheus = metrics;
    }
    if local || !options.any() {
        return Ok(None);
    }
    let guard = crate::otel::init_with(name, options)?;
    if let Some(addr) = guard.metrics_addr() {
        eprintln!("metrics: Prometheus text at http://{addr}/metrics");
    }
    Ok(Some(guard))
}

/// Joins the store and bus replicas share when `MCP_REDIS_URL` is set, in
/// the namespace `MCP_REDIS_NAMESPACE` names (default: the server's name).
async fn shared_state(builder: ServerBuilder) -> Result<ServerBuilder, String> {
    let Some(url) = std::env::var_os("MCP_REDIS_URL") else {
        return Ok(builder);
    };
    let url = url.to_string_lossy().into_owned();
    #[cfg(feature = "redis")]
    {
        use crate::replicas::{RedisShared, REDIS_NAMESPACE_ENV};
        let shared = match std::env::var(REDIS_NAMESPACE_ENV) {
            Ok(namespace) => RedisShared::connect_in(&url, &namespace)
                .await
                .map_err(|e| format!("MCP_REDIS_URL={url} {REDIS_NAMESPACE_ENV}={namespace:?}: {e}"))?,
            Err(_) => RedisShared::connect(&url)
                .await
                .map_err(|e| format!("MCP_REDIS_URL={url}: {e}"))?,
        };
        tracing::info!("tasks and change events shared through Redis at {url}");
        Ok(shared.apply(builder))
    }
    #[cfg(not(feature = "redis"))]
    {
        let _ = builder;
        Err(format!(
            "MCP_REDIS_URL={url} is set, but this binary was built without the `redis` feature of mcp-runtime"
        ))
    }
}

/// The environment variable that sets [`HttpConfig::session_prefix`](crate::transport::http::HttpConfig::session_prefix).
pub const SESSION_PREFIX_ENV: &str = "MCP_SESSION_PREFIX";

/// The environment variable that sets how long a stopping HTTP server waits
/// for requests in flight, in seconds (default 30).
pub const SHUTDOWN_GRACE_ENV: &str = "MCP_SHUTDOWN_GRACE";

fn grace_from_env() -> std::io::Result<Option<std::time::Duration>> {
    let Ok(text) = std::env::var(SHUTDOWN_GRACE_ENV) else {
        return Ok(None);
    };
    match text.trim().parse::<u64>() {
        Ok(secs) => Ok(Some(std::time::Duration::from_secs(secs))),
        Err(_) => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{SHUTDOWN_GRACE_ENV}={text:?} is not a whole number of seconds"),
        )),
    }
}

/// Serves `server` as `command` says, until the transport ends.
pub async fn serve(server: Server, command: Command) -> std::io::Result<()> {
    match command {
        Command::Stdio | Command::Help | Command::Tools | Command::Discover | Command::Call { .. } => {
            if std::io::stdin().is_terminal() {
                eprint!("{}", banner(&server));
            }
            tracing::debug!("serving stdio");
            crate::transport::stdio::serve(server).await
        }
        Command::Http(addr) => {
            let mut config = crate::transport::http::HttpConfig::default();
            if let Some(grace) = grace_from_env()? {
                config.shutdown_grace = grace;
            }
            if let Ok(prefix) = std::env::var(SESSION_PREFIX_ENV) {
                config.session_prefix = prefix;
            }
            config.auth = auth::from_env(&server)
                .await
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
            let protection = match &config.auth {
                Some(rs) => format!(
                    "protected: tokens from {} for {} (metadata at {})",
                    rs.authorization_servers.join(" "),
                    rs.resource(),
                    rs.metadata_url()
                ),
                None => format!(
                    "not protected: anyone who reaches it may call it (set {} and {} to require OAuth tokens)",
                    auth::ISSUER_ENV,
                    auth::RESOURCE_ENV
                ),
            };
            let http = crate::transport::http::HttpServer::bind(server.clone(), &addr, config).await?;
            // Listening for SIGTERM before saying where it serves: a host
            // that reads the address may stop it at once.
            let stop = crate::transport::stop_signal_installed().await;
            let local = http.local_addr()?;
            let info = &server.config().info;
            eprintln!(
                "{} {}: MCP server on Streamable HTTP at http://{local}/mcp (SIGTERM or Ctrl-C stops it gracefully)\n\
                 Point a host at that URL, for example: {{\"mcpServers\": {{\"{}\": {{\"url\": \"http://{local}/mcp\"}}}}}}\n\
                 Authorization: {protection}",
                info.name, info.version, info.name
            );
            http.serve_until(stop).await
        }
    }
}
