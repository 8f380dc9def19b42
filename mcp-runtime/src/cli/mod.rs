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

/// The flags that go with serving, wherever they stand on the command line.
#[derive(Debug, Default)]
struct ServeFlags {
    /// `--metrics ADDR`.
    metrics: Option<String>,
    /// Each `--allowed-host HOST`.
    allowed_hosts: Vec<String>,
    /// `--workers N`.
    workers: Option<String>,
}

/// Takes `--metrics ADDR` and `--allowed-host HOST` out of the arguments, wherever they stand.
fn take_serve_flags(args: impl Iterator<Item = String>) -> Result<(Vec<String>, ServeFlags), String> {
    let mut rest = Vec::new();
    let mut flags = ServeFlags::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "--metrics" {
            let addr = args
                .next()
                .ok_or("--metrics needs an address, for example --metrics 127.0.0.1:9464")?;
            flags.metrics = Some(addr);
        } else if arg == "--allowed-host" {
            let host = args
                .next()
                .ok_or("--allowed-host needs a host name, for example --allowed-host mcp.example.com")?;
            flags.allowed_hosts.push(host);
        } else if arg == "--workers" {
            let n = args
                .next()
                .ok_or("--workers needs a number of threads, for example --workers 4")?;
            flags.workers = Some(n);
        } else {
            rest.push(arg);
        }
    }
    Ok((rest, flags))
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
         With --http, --allowed-host HOST (repeatable; or {ALLOWED_HOSTS_ENV}=HOST,HOST) names a host\n\
         the server is reached as besides loopback (its Host header, and a browser's Origin);\n\
         without one, a loopback bind serves loopback hosts only, and another bind any Host but\n\
         only loopback Origins. Connections: {MAX_CONNECTIONS_ENV} (default 4096) and\n\
         {MAX_CONNECTIONS_PER_PEER_ENV} (256) cap them, answering 503, and {MAX_IN_FLIGHT_ENV} (none) the requests\n\
         being served; /healthz and /readyz answer probes; {HEADER_READ_TIMEOUT_ENV} (10),\n\
         {IDLE_TIMEOUT_ENV} (75) and {BODY_READ_TIMEOUT_ENV} (30) are seconds (0: none).\n\
         stdio serves on one thread; with --http, --workers N (or {WORKERS_ENV}=N) caps the worker\n\
         threads (default: one per core).\n\
         {TOOL_TIMEOUT_ENV}=SECONDS stops a tool call that runs longer (unless the tool sets its own);\n\
         {RATE_LIMIT_ENV}=RATE (e.g. 100/min, 10/s burst 20) limits each caller's calls (429 past it),\n\
         shared by replicas through Redis; {MAX_CALLS_PER_CALLER_ENV}=N its calls in progress. A caller is\n\
         the token's subject, the header {PRINCIPAL_HEADER_ENV} names (set by a trusted proxy), or the address.\n\
         Logs go to stderr; set RUST_LOG (e.g. RUST_LOG=debug) to change the level.\n\
         Over HTTP, SIGTERM or Ctrl-C stops the server gracefully: requests in flight get\n\
         {SHUTDOWN_GRACE_ENV} seconds (default 30) to finish. Over stdio they end the input as its\n\
         close does; the requests read get {SHUTDOWN_GRACE_ENV} seconds (default 5) to be answered.\n{otel}",
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
    let fmt = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    // Without `RUST_LOG`, a plain level: no filter to parse and no per-span
    // filter state (a server's start-up does nothing it does not need).
    let _ = match std::env::var_os("RUST_LOG") {
        Some(_) => {
            let filter = tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
            fmt.with_env_filter(filter).try_init()
        }
        None => fmt.with_max_level(tracing::Level::INFO).try_init(),
    };
}

fn banner(server: &Server) -> String {
    let info = &server.config().info;
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| info.name.clone());
    banner_for(&info.name, &info.version, &server.tool_names(), &exe)
}

/// The banner's text for a server named `name` at `exe`: the host's config
/// is JSON written by serde (a Windows path's `\` escaped), the command
/// line quotes a path with spaces, and the key that ends the input is the
/// platform's.
fn banner_for(name: &str, version: &str, tools: &[String], exe: &str) -> String {
    let config = serde_json::json!({ "mcpServers": { name: { "command": exe } } });
    let command = match exe.contains(' ') {
        true => format!("\"{exe}\""),
        false => exe.to_owned(),
    };
    let quit = if cfg!(windows) {
        "Ctrl-Z then Enter quits"
    } else {
        "Ctrl-D quits"
    };
    format!(
        "{name} {version}: MCP server on stdio, serving {n} tool(s): {list}\n\
         This terminal is now its client: it reads JSON-RPC messages, one per line ({quit}).\n\
         To connect a host, add to its mcpServers config:\n  {config}\n\
         To serve Streamable HTTP instead: {command} --http 127.0.0.1:3000\n",
        n = tools.len(),
        list = tools.join(", "),
    )
}

/// Runs a server binary: parses the command line, sets up logging to stderr,
/// builds the server from the registry (after `configure`), and serves.
/// Used by [`crate::main!`].
pub fn run(info: Implementation, configure: impl FnOnce(ServerBuilder) -> ServerBuilder) -> ExitCode {
    match utf8_args() {
        Ok(args) => run_with_args(info, args, configure),
        Err(code) => code,
    }
}

/// The arguments after the program name, read as the OS gives them: one
/// that is not UTF-8 is refused (exit 2), not a panic. Not generic, so
/// compiled here once, not in each server binary.
fn utf8_args() -> Result<Vec<String>, ExitCode> {
    std::env::args_os()
        .skip(1)
        .map(|a| a.into_string())
        .collect::<Result<Vec<String>, _>>()
        .map_err(|bad| {
            eprintln!("error: the argument {bad:?} is not UTF-8");
            ExitCode::from(2)
        })
}

/// [`run`] with the arguments given (those after the program name): for a
/// binary that takes arguments of its own out first.
pub fn run_with_args(
    info: Implementation,
    args: impl IntoIterator<Item = String>,
    configure: impl FnOnce(ServerBuilder) -> ServerBuilder,
) -> ExitCode {
    run_erased(info, args.into_iter().collect(), Box::new(configure))
}

/// [`run_with_args`] with nothing generic left. Everything a server does from
/// start-up to exit (the runtime, the transports, the dispatcher and every
/// future they poll) is compiled here, in this crate, once: a generic body
/// would be compiled again into every server binary, on every build of it.
#[inline(never)]
fn run_erased(
    info: Implementation,
    args: Vec<String>,
    configure: Box<dyn FnOnce(ServerBuilder) -> ServerBuilder + '_>,
) -> ExitCode {
    let name = info.name.clone();
    if let Some(var) = setting_not_utf8() {
        eprintln!("error: the value of {var} is not UTF-8");
        return ExitCode::from(2);
    }
    let parsed = take_serve_flags(args.into_iter()).and_then(|(args, flags)| {
        let command = parse_args(args)?;
        if !flags.allowed_hosts.is_empty() && !matches!(command, Command::Http(_)) {
            return Err("--allowed-host goes with --http".into());
        }
        if flags.workers.is_some() && !matches!(command, Command::Http(_)) {
            return Err("--workers goes with --http (stdio serves on one thread)".into());
        }
        if flags.metrics.is_some() && !matches!(command, Command::Http(_) | Command::Stdio | Command::Help) {
            return Err("--metrics goes with --stdio or --http (a command run in process serves nothing)".into());
        }
        Ok((command, flags))
    });
    let (
        command,
        ServeFlags {
            metrics,
            allowed_hosts,
            workers,
        },
    ) = match parsed {
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
    // As with the feature: the environment's address is for a server (the
    // in-process commands serve none), and an empty one is none.
    #[cfg(not(feature = "otel"))]
    if metrics.is_some() || (!local && std::env::var_os(METRICS_ENV).is_some_and(|v| !v.is_empty())) {
        eprintln!("error: --metrics and {METRICS_ENV} need the `otel` feature of mcp-runtime, which this binary was built without");
        return ExitCode::from(2);
    }
    // Only HTTP runs on workers: stdio and the local commands read none of these settings.
    let workers = match command {
        Command::Http(_) => workers_setting(workers.as_deref()),
        _ => Ok(None),
    };
    let workers = match workers {
        Ok(n) => n,
        Err(e) => {
            eprintln!("error: {e}\n\n{}", usage(&name));
            return ExitCode::from(2);
        }
    };
    init_logging();
    let runtime = match runtime_for(&command, workers) {
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
    let builder = match guardrails_from_env(configure(builder)) {
        Ok(builder) => builder,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let server = match builder.build() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot start the MCP server: {e}");
            return ExitCode::from(2);
        }
    };
    {
        let _inside = runtime.enter();
        server.start();
    }
    if local {
        let outcome = runtime.block_on(local::run(&server, command));
        runtime.shutdown_background();
        return outcome;
    }
    let outcome = runtime.block_on(serve_with_hosts(server, command, allowed_hosts));
    // Handlers still running past the transport's end are not waited for.
    runtime.shutdown_background();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        // A setting that cannot be right, as every other is refused: 2.
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A setting of the binary (`MCP_*`, `OTEL_*`, `TOKIO_WORKER_THREADS`,
/// `RUST_LOG`) whose value is not UTF-8: refused, where reading it as
/// text would take it as unset (a rate limit off without a word).
fn setting_not_utf8() -> Option<String> {
    std::env::vars_os().find_map(|(name, value)| {
        let name = name.to_str()?;
        let ours = name.starts_with("MCP_")
            || name.starts_with("OTEL_")
            || name == "TOKIO_WORKER_THREADS"
            || name == "RUST_LOG";
        (ours && value.to_str().is_none()).then(|| name.to_owned())
    })
}

/// The runtime a command runs on. stdio and the in-process commands serve
/// one client's stream: one thread does it (tokio's current-thread
/// runtime), so the server costs the same on a 64-core workstation as on a
/// 2-core VM; a handler marked `#[tool(blocking)]` runs on tokio's blocking
/// pool instead, so it never holds that thread. HTTP serves many clients on
/// one worker per core, or `workers` of them.
fn runtime_for(command: &Command, workers: Option<usize>) -> std::io::Result<tokio::runtime::Runtime> {
    match command {
        Command::Http(_) => {
            // Always a count of ours: tokio would read TOKIO_WORKER_THREADS
            // again itself, and panic on a value `workers_setting` refuses.
            let n = workers.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(n)
                .enable_all()
                .build()
        }
        _ => tokio::runtime::Builder::new_current_thread().enable_all().build(),
    }
}

/// The most HTTP workers a binary starts (each holds its own queues and a thread).
const MAX_WORKERS: usize = 1024;

/// The HTTP worker count: `--workers N`, else `MCP_WORKERS`, else
/// `TOKIO_WORKER_THREADS` (read here, so that a bad value is refused
/// rather than tokio's panic); `None` (or 0): one per core. At most
/// [`MAX_WORKERS`].
fn workers_setting(flag: Option<&str>) -> Result<Option<usize>, String> {
    const TOKIO: &str = "TOKIO_WORKER_THREADS";
    let n = match flag {
        Some(text) => text
            .trim()
            .parse::<usize>()
            .map_err(|_| format!("--workers {text:?} is not a whole number"))?,
        None => match count_from_env(WORKERS_ENV) {
            Ok(Some(n)) if n > 0 => n,
            Ok(_) => match std::env::var(TOKIO) {
                Ok(text) => match text.trim().parse::<usize>() {
                    Ok(n) if n > 0 => n,
                    _ => return Err(format!("{TOKIO}={text:?} is not a whole number above 0")),
                },
                Err(_) => 0,
            },
            Err(e) => return Err(e.to_string()),
        },
    };
    if n > MAX_WORKERS {
        return Err(format!("{n} workers is more than {MAX_WORKERS}"));
    }
    Ok((n > 0).then_some(n))
}

/// How long a tool call may run, in seconds, for the tools that do not set
/// their own timeout ([`ServerBuilder::tool_timeout`](crate::ServerBuilder::tool_timeout)).
pub const TOOL_TIMEOUT_ENV: &str = "MCP_TOOL_TIMEOUT";

/// Calls (tool calls, reads, gets) per caller for the whole server, such
/// as `100/min` or `10/s burst 20` ([`ServerBuilder::rate_limit`](crate::ServerBuilder::rate_limit)).
pub const RATE_LIMIT_ENV: &str = "MCP_RATE_LIMIT";

/// Calls in progress per caller, at most ([`ServerBuilder::max_calls_per_caller`](crate::ServerBuilder::max_calls_per_caller)).
pub const MAX_CALLS_PER_CALLER_ENV: &str = "MCP_MAX_CALLS_PER_CALLER";

/// The server's timeout and limits per caller, as the environment sets them.
fn guardrails_from_env(mut builder: ServerBuilder) -> Result<ServerBuilder, String> {
    match seconds_from_env(TOOL_TIMEOUT_ENV) {
        Ok(Some(limit)) if !limit.is_zero() => builder = builder.tool_timeout(limit),
        Ok(_) => {}
        Err(e) => return Err(e.to_string()),
    }
    if let Ok(text) = std::env::var(RATE_LIMIT_ENV) {
        let rate = text
            .parse::<crate::limits::Rate>()
            .map_err(|e| format!("{RATE_LIMIT_ENV}: {e}"))?;
        builder = builder.rate_limit(rate);
    }
    match count_from_env(MAX_CALLS_PER_CALLER_ENV) {
        Ok(Some(n)) if n > 0 => builder = builder.max_calls_per_caller(n),
        Ok(_) => {}
        Err(e) => return Err(e.to_string()),
    }
    Ok(builder)
}

/// The header an authenticating proxy in front sets to name the caller
/// (`HttpConfig::principal_header`): trusted, so set it only when every
/// request comes through that proxy.
pub const PRINCIPAL_HEADER_ENV: &str = "MCP_PRINCIPAL_HEADER";

/// The environment variable that caps the HTTP server's worker threads, like `--workers`.
pub const WORKERS_ENV: &str = "MCP_WORKERS";

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
    // Said on stderr and in logs: without its password.
    let shown = redacted(&url);
    #[cfg(feature = "redis")]
    {
        use crate::replicas::{RedisShared, REDIS_NAMESPACE_ENV};
        let shared = match std::env::var(REDIS_NAMESPACE_ENV) {
            Ok(namespace) => RedisShared::connect_in(&url, &namespace)
                .await
                .map_err(|e| format!("MCP_REDIS_URL={shown} {REDIS_NAMESPACE_ENV}={namespace:?}: {e}"))?,
            Err(_) => RedisShared::connect(&url)
                .await
                .map_err(|e| format!("MCP_REDIS_URL={shown}: {e}"))?,
        };
        tracing::info!("tasks and change events shared through Redis at {shown}");
        Ok(shared.apply(builder))
    }
    #[cfg(not(feature = "redis"))]
    {
        let _ = builder;
        Err(format!(
            "MCP_REDIS_URL={shown} is set, but this binary was built without the `redis` feature of mcp-runtime"
        ))
    }
}

/// A URL with the user and password of its authority (`redis://:secret@host`)
/// replaced by `***`, for logs and error messages.
///
/// ```
/// use mcp_runtime::cli::redacted;
/// assert_eq!(redacted("postgres://app:s3cret@db:5432/desk"), "postgres://***@db:5432/desk");
/// assert_eq!(redacted("sqlite://desk.db"), "sqlite://desk.db");
/// ```
pub fn redacted(url: &str) -> String {
    crate::redact::credentials(url)
}

/// The environment variable that sets [`HttpConfig::session_prefix`](crate::transport::http::HttpConfig::session_prefix).
pub const SESSION_PREFIX_ENV: &str = "MCP_SESSION_PREFIX";

/// The environment variable that sets how long a stopping HTTP server waits
/// for requests in flight, in seconds (default 30).
pub const SHUTDOWN_GRACE_ENV: &str = "MCP_SHUTDOWN_GRACE";

/// How long a stdio server stopped by a signal answers the requests it
/// has read (`MCP_SHUTDOWN_GRACE` sets it): hosts that send SIGTERM send
/// SIGKILL a few seconds later.
const STDIO_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// The longest grace `MCP_SHUTDOWN_GRACE` may ask for: a day.
const MAX_GRACE: std::time::Duration = std::time::Duration::from_secs(86_400);

/// `MCP_SHUTDOWN_GRACE`, in seconds (fractions allowed), at most [`MAX_GRACE`].
fn grace_from_env() -> std::io::Result<Option<std::time::Duration>> {
    let invalid = |message: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, message);
    match seconds_from_env(SHUTDOWN_GRACE_ENV) {
        Ok(Some(grace)) if grace > MAX_GRACE => Err(invalid(format!(
            "{SHUTDOWN_GRACE_ENV}={:?}: more than a day ({} s)",
            grace.as_secs_f64(),
            MAX_GRACE.as_secs()
        ))),
        Ok(grace) => Ok(grace),
        Err(_) => Err(invalid(format!(
            "{SHUTDOWN_GRACE_ENV} is not a number of seconds (0: stop at once)"
        ))),
    }
}

/// The environment variable naming the hosts an HTTP server is reached as,
/// comma-separated, like `--allowed-host` ([`HostPolicy::allowing`](crate::transport::http::HostPolicy::allowing)).
pub const ALLOWED_HOSTS_ENV: &str = "MCP_ALLOWED_HOSTS";
/// Sets [`HttpConfig::max_connections`](crate::transport::http::HttpConfig::max_connections).
pub const MAX_CONNECTIONS_ENV: &str = "MCP_MAX_CONNECTIONS";
/// Sets [`HttpConfig::max_connections_per_peer`](crate::transport::http::HttpConfig::max_connections_per_peer).
pub const MAX_CONNECTIONS_PER_PEER_ENV: &str = "MCP_MAX_CONNECTIONS_PER_PEER";
/// Sets [`HttpConfig::max_sessions_per_caller`](crate::transport::http::HttpConfig::max_sessions_per_caller).
pub const MAX_SESSIONS_PER_CALLER_ENV: &str = "MCP_MAX_SESSIONS_PER_CALLER";
/// Sets [`HttpConfig::max_in_flight`](crate::transport::http::HttpConfig::max_in_flight).
pub const MAX_IN_FLIGHT_ENV: &str = "MCP_MAX_IN_FLIGHT";
/// Sets [`HttpConfig::header_read_timeout`](crate::transport::http::HttpConfig::header_read_timeout), in seconds.
pub const HEADER_READ_TIMEOUT_ENV: &str = "MCP_HEADER_READ_TIMEOUT";
/// Sets [`HttpConfig::idle_timeout`](crate::transport::http::HttpConfig::idle_timeout), in seconds.
pub const IDLE_TIMEOUT_ENV: &str = "MCP_IDLE_TIMEOUT";
/// Sets [`HttpConfig::body_read_timeout`](crate::transport::http::HttpConfig::body_read_timeout), in seconds.
pub const BODY_READ_TIMEOUT_ENV: &str = "MCP_BODY_READ_TIMEOUT";

/// A setting of the environment or command line that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SettingError {
    /// Not a number of the kind the variable takes.
    #[error("{var}={value:?} is not {expected}")]
    NotANumber {
        /// The variable.
        var: &'static str,
        /// What it was set to.
        value: String,
        /// What it takes.
        expected: &'static str,
    },
    /// Not an HTTP header name.
    #[error("{var}={value:?} is not an HTTP header name")]
    NotAHeaderName {
        /// The variable.
        var: &'static str,
        /// What it was set to.
        value: String,
    },
    /// An allowed host that is not a host name.
    #[error("{source} ({origin})")]
    Host {
        /// Where it was given: `--allowed-host` or `MCP_ALLOWED_HOSTS`.
        origin: &'static str,
        /// What is wrong with it.
        source: crate::transport::http::InvalidHost,
    },
}

impl From<SettingError> for std::io::Error {
    fn from(e: SettingError) -> Self {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, e)
    }
}

/// A whole number from the environment, if the variable is set.
fn count_from_env(var: &'static str) -> Result<Option<usize>, SettingError> {
    let Ok(text) = std::env::var(var) else {
        return Ok(None);
    };
    text.trim().parse().map(Some).map_err(|_| SettingError::NotANumber {
        var,
        value: text,
        expected: "a whole number (0: no cap)",
    })
}

/// Seconds (a fraction allowed) from the environment, if the variable is set.
fn seconds_from_env(var: &'static str) -> Result<Option<std::time::Duration>, SettingError> {
    let Ok(text) = std::env::var(var) else {
        return Ok(None);
    };
    text.trim()
        .parse::<f64>()
        .ok()
        .and_then(|secs| std::time::Duration::try_from_secs_f64(secs).ok())
        .map(Some)
        .ok_or(SettingError::NotANumber {
            var,
            value: text,
            expected: "a number of seconds (0: no limit)",
        })
}

/// The HTTP settings the environment and `--allowed-host` give, over the defaults.
fn http_config_from_env(allowed_hosts: Vec<String>) -> Result<crate::transport::http::HttpConfig, SettingError> {
    use crate::transport::http::{HostPolicy, HttpConfig};
    let mut config = HttpConfig::default();
    let mut hosts = HostPolicy::allowing(&allowed_hosts).map_err(|source| SettingError::Host {
        origin: "--allowed-host",
        source,
    })?;
    if let Ok(list) = std::env::var(ALLOWED_HOSTS_ENV) {
        let named = list.split(',').map(str::trim).filter(|h| !h.is_empty());
        let from_env = HostPolicy::allowing(named).map_err(|source| SettingError::Host {
            origin: ALLOWED_HOSTS_ENV,
            source,
        })?;
        hosts.allowed_hosts.extend(from_env.allowed_hosts);
    }
    config.hosts = hosts;
    if let Some(n) = count_from_env(MAX_CONNECTIONS_ENV)? {
        config.max_connections = n;
    }
    if let Some(n) = count_from_env(MAX_CONNECTIONS_PER_PEER_ENV)? {
        config.max_connections_per_peer = n;
    }
    if let Some(n) = count_from_env(MAX_IN_FLIGHT_ENV)? {
        config.max_in_flight = n;
    }
    if let Some(n) = count_from_env(MAX_SESSIONS_PER_CALLER_ENV)? {
        config.max_sessions_per_caller = n;
    }
    if let Some(d) = seconds_from_env(HEADER_READ_TIMEOUT_ENV)? {
        config.header_read_timeout = d;
    }
    if let Some(d) = seconds_from_env(IDLE_TIMEOUT_ENV)? {
        config.idle_timeout = d;
    }
    if let Some(d) = seconds_from_env(BODY_READ_TIMEOUT_ENV)? {
        config.body_read_timeout = d;
    }
    if let Ok(name) = std::env::var(PRINCIPAL_HEADER_ENV) {
        let name = name.trim();
        // Empty: none.
        if !name.is_empty() && http::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(SettingError::NotAHeaderName {
                var: PRINCIPAL_HEADER_ENV,
                value: name.to_owned(),
            });
        }
        config.principal_header = (!name.is_empty()).then(|| name.to_ascii_lowercase());
    }
    Ok(config)
}

/// Serves `server` as `command` says, until the transport ends; HTTP settings
/// come from the environment (`MCP_ALLOWED_HOSTS`, `MCP_MAX_CONNECTIONS`...).
pub fn serve(server: Server, command: Command) -> impl std::future::Future<Output = std::io::Result<()>> + Send {
    serve_boxed(server, command)
}

/// [`serve`], compiled here (see [`crate::boxed::BoxFuture`]).
#[inline(never)]
fn serve_boxed(server: Server, command: Command) -> crate::boxed::BoxFuture<'static, std::io::Result<()>> {
    Box::pin(serve_with_hosts(server, command, Vec::new()))
}

/// [`serve`], allowing these hosts too (`--allowed-host`).
async fn serve_with_hosts(server: Server, command: Command, allowed_hosts: Vec<String>) -> std::io::Result<()> {
    match command {
        Command::Stdio | Command::Help | Command::Tools | Command::Discover | Command::Call { .. } => {
            if std::io::stdin().is_terminal() {
                eprint!("{}", banner(&server));
            }
            tracing::debug!("serving stdio");
            // A host stops a stdio server by closing its input, then by
            // SIGTERM if it does not exit: the signal ends the input as its
            // close would. The requests read are answered, for at most the
            // grace (5 s, or MCP_SHUTDOWN_GRACE); then the process exits,
            // its spans and metrics flushed on the way out, instead of dying
            // with them.
            let grace = grace_from_env()?.unwrap_or(STDIO_GRACE);
            let signal = crate::transport::stop_signal_installed().await;
            // Heard on a task of its own: the input's reader and the grace's
            // timer both learn of it, whatever either is waiting on.
            let (signalled, heard) = tokio::sync::watch::channel(false);
            tokio::spawn(async move {
                signal.await;
                let _ = signalled.send(true);
            });
            let mut input_heard = heard.clone();
            let stop = async move {
                let _ = input_heard.wait_for(|stopped| *stopped).await;
            };
            let serving = crate::transport::stdio::serve_until(server, stop);
            let mut grace_heard = heard;
            let give_up = async move {
                let stopped = grace_heard.wait_for(|stopped| *stopped).await.is_ok();
                if stopped {
                    tokio::time::sleep(grace).await;
                } else {
                    std::future::pending::<()>().await;
                }
            };
            tokio::select! {
                served = serving => served,
                () = give_up => {
                    tracing::warn!("requests still running {grace:?} after the stop signal are not answered");
                    Ok(())
                }
            }
        }
        Command::Http(addr) => {
            let mut config = http_config_from_env(allowed_hosts)?;
            if let Some(grace) = grace_from_env()? {
                config.shutdown_grace = grace;
            }
            if let Ok(prefix) = std::env::var(SESSION_PREFIX_ENV) {
                // A session id is visible ASCII (0x21 to 0x7E), the prefix too.
                if !prefix.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        format!("{SESSION_PREFIX_ENV}={prefix:?}: a session id's prefix is visible ASCII, no spaces"),
                    ));
                }
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
                // The way to protect it, as this binary can: a build without
                // the `auth` feature refuses the variables.
                #[cfg(feature = "auth")]
                None => format!(
                    "not protected: anyone who reaches it may call it (set {} and {} to require OAuth tokens)",
                    auth::ISSUER_ENV,
                    auth::RESOURCE_ENV
                ),
                #[cfg(not(feature = "auth"))]
                None => "not protected: anyone who reaches it may call it (built without the `auth` feature of \
                         mcp-runtime, which requires OAuth tokens)"
                    .to_owned(),
            };
            let http = crate::transport::http::HttpServer::bind(server.clone(), &addr, config).await?;
            // Listening for SIGTERM before saying where it serves: a host
            // that reads the address may stop it at once.
            let stop = crate::transport::stop_signal_installed().await;
            let local = http.local_addr()?;
            let info = &server.config().info;
            let url = format!("http://{local}/mcp");
            let host_config = serde_json::json!({ "mcpServers": { info.name.as_str(): { "url": url } } });
            eprintln!(
                "{} {}: MCP server on Streamable HTTP at {url} (SIGTERM or Ctrl-C stops it gracefully)\n\
                 Point a host at that URL, for example: {host_config}\n\
                 Authorization: {protection}",
                info.name, info.version
            );
            http.serve_until(stop).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_banner_gives_a_host_config_that_is_json_whatever_the_path() {
        let exe = r"C:\Program Files\my server\x.exe";
        let text = banner_for("my \"server\"", "1.0", &["echo".to_owned()], exe);
        let line = text.lines().nth(3).unwrap_or_default();
        let config: serde_json::Value = serde_json::from_str(line.trim()).unwrap_or_default();
        assert_eq!(config["mcpServers"]["my \"server\""]["command"], exe, "{text}");
        assert!(text.contains(&format!("\"{exe}\" --http")), "{text}");
    }
}
