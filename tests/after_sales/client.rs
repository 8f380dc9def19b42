//! What the after-sales tests drive: the example's binary over stdio (one
//! process per replica, each on the database its `DATABASE_URL` names), the
//! databases themselves (an SQLite file in a directory of the test's own,
//! or a fresh database on the PostgreSQL of `scripts/postgres.sh`), and SQL
//! run against them from outside the server.

use super::support::{self, Killed};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The `requestState` key every process of a test shares, as replicas do.
const KEYS: &str = "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=";
const TASKS: &str = "io.modelcontextprotocol/tasks";
const UI: &str = "io.modelcontextprotocol/ui";

/// The example's binary, built once per test run.
pub fn binary() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| support::example_binary("after-sales"))
}

/// A directory of the test's own, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("mcp-after-sales-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        Scratch(dir)
    }

    /// An SQLite database in this directory (created by the server).
    pub fn sqlite(&self) -> String {
        format!("sqlite://{}", self.0.join("desk.db").display())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One after-sales process serving stdio, its stderr in a file.
pub struct Desk {
    _child: Killed,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: i64,
    pub log: PathBuf,
    /// Declare that this client renders MCP Apps (the ui extension).
    pub renders_apps: bool,
}

impl Desk {
    /// Starts the server on `url` (without `DATABASE_URL` when empty), in
    /// `dir`; its stderr goes to `dir/NAME.log`.
    pub fn start(url: &str, dir: &Path, name: &str) -> Desk {
        let log = dir.join(format!("{name}.log"));
        let stderr = std::fs::File::create(&log).expect("a log file");
        let mut command = Command::new(binary());
        match url {
            "" => command.env_remove("DATABASE_URL"),
            url => command.env("DATABASE_URL", url),
        };
        let mut child = command
            .env("MCP_REQUEST_STATE_KEYS", KEYS)
            .env("RUST_LOG", "info")
            .env_remove("MCP_REDIS_URL")
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("the after-sales example starts");
        let stdin = child.stdin.take().expect("its stdin");
        let stdout = child.stdout.take().expect("its stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Desk {
            _child: Killed(child),
            stdin,
            lines,
            next_id: 0,
            renders_apps: false,
            log,
        }
    }

    /// What the process wrote on stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// One 2026-07-28 request (elicitation and the tasks extension declared);
    /// returns the response, validated against the schema.
    pub fn request(&mut self, method: &str, mut params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut extensions = json!({TASKS: {}});
        if self.renders_apps {
            extensions[UI] = json!({"mimeTypes": ["text/html;profile=mcp-app"]});
        }
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": extensions},
            "io.modelcontextprotocol/clientInfo": {"name": "after-sales-test", "version": "1.0.0"}
        });
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        writeln!(self.stdin, "{line}").expect("the server reads its stdin");
        self.stdin.flush().expect("the server reads its stdin");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no answer to {method} within 30 s; stderr:\n{}", self.stderr()));
            let message: Value = serde_json::from_str(&line).expect("a JSON line");
            if message["id"] == json!(id) {
                support::validate_emitted(&message, Some(method));
                return message;
            }
        }
    }

    /// The result of a request, which must not be a JSON-RPC error.
    pub fn result(&mut self, method: &str, params: Value) -> Value {
        let message = self.request(method, params);
        assert!(message.get("error").is_none(), "{method} failed: {message}");
        message["result"].clone()
    }

    /// A tool call's result.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.result("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    /// Round 1 of `after_sales_create_ticket`: the `input_required` result.
    pub fn ask_refund(&mut self, order_id: &str, reason: &str) -> Value {
        let asked = self.call(
            "after_sales_create_ticket",
            json!({"order_id": order_id, "reason": reason}),
        );
        assert_eq!(asked["resultType"], "input_required", "{asked}");
        assert_eq!(
            asked["inputRequests"]["refund"]["method"], "elicitation/create",
            "{asked}"
        );
        asked
    }

    /// The last round of `after_sales_create_ticket`, answering `asked` with `answer`.
    pub fn answer_refund(&mut self, order_id: &str, reason: &str, asked: &Value, answer: Value) -> Value {
        self.result(
            "tools/call",
            json!({
                "name": "after_sales_create_ticket",
                "arguments": {"order_id": order_id, "reason": reason},
                "requestState": asked["requestState"],
                "inputResponses": {"refund": answer},
            }),
        )
    }

    /// Opens a ticket in two rounds, the customer choosing `method`; its id.
    pub fn open_ticket(&mut self, order_id: &str, reason: &str, method: &str) -> String {
        let asked = self.ask_refund(order_id, reason);
        let answer = json!({"action": "accept", "content": {"method": method}});
        let done = self.answer_refund(order_id, reason, &asked, answer);
        assert_eq!(done["resultType"], "complete", "{done}");
        assert_ne!(done["isError"], true, "{done}");
        done["structuredContent"]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("no ticket id in {done}"))
            .to_owned()
    }

    /// `tasks/get` until the task is in one of `wanted` (at most 20 s).
    pub fn wait_task(&mut self, task_id: &str, wanted: &[&str]) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let task = self.result("tasks/get", json!({"taskId": task_id}));
            if wanted.iter().any(|w| task["status"] == *w) {
                return task;
            }
            assert!(Instant::now() < deadline, "task {task_id} still {}", task["status"]);
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// A tool result's text, when it is an error result.
pub fn tool_error(result: &Value) -> String {
    assert_eq!(result["isError"], true, "not a tool error: {result}");
    result["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

/// Runs `statements` in order on the database at `url`; returns the first
/// column (an integer) of each one's first row, or -1 for none.
pub fn sql(url: &str, statements: &[&str]) -> Vec<i64> {
    use sqlx::{Connection, Row};
    sqlx::any::install_default_drivers();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let mut conn = sqlx::AnyConnection::connect(url)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to {url}: {e}"));
        let mut firsts = Vec::new();
        for statement in statements {
            // The tests' own statements, never built from input.
            let row = sqlx::query(sqlx::AssertSqlSafe(*statement))
                .fetch_optional(&mut conn)
                .await
                .unwrap_or_else(|e| panic!("{statement}: {e}"));
            firsts.push(row.and_then(|r| r.try_get::<i64, _>(0).ok()).unwrap_or(-1));
        }
        let _ = conn.close().await;
        firsts
    })
}

/// How many rows the desk's tables hold: tickets, refunds, audit lines.
pub fn counts(url: &str) -> Vec<i64> {
    sql(
        url,
        &[
            "SELECT COUNT(*) FROM tickets",
            "SELECT COUNT(*) FROM refunds",
            "SELECT COUNT(*) FROM audit_log",
        ],
    )
}

/// The PostgreSQL of this test process (`scripts/postgres.sh`, stopped
/// when the process ends), as its admin URL; `None` (said loudly) where
/// there is none and none can be installed, outside CI.
pub fn postgres() -> Option<&'static str> {
    static ADMIN: OnceLock<Option<String>> = OnceLock::new();
    ADMIN
        .get_or_init(|| {
            let dir = std::env::temp_dir().join(format!("mcp-after-sales-pg-{}", std::process::id()));
            let out = postgres_script(&["up", &dir.to_string_lossy()], &[]);
            match out.status.code() {
                Some(0) => Some(String::from_utf8_lossy(&out.stdout).trim().to_owned()),
                Some(3) if std::env::var_os("CI").is_none() => {
                    eprintln!(
                        "\n*** SKIPPED: the PostgreSQL tests need PostgreSQL (scripts/postgres.sh could not install it: {}) ***\n",
                        String::from_utf8_lossy(&out.stderr).trim()
                    );
                    None
                }
                _ => panic!(
                    "scripts/postgres.sh up failed:\n{}",
                    String::from_utf8_lossy(&out.stderr)
                ),
            }
        })
        .as_deref()
}

/// Runs `scripts/postgres.sh ARGS`, the server stopped when this process ends.
pub fn postgres_script(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    Command::new("bash")
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/postgres.sh"))
        .args(args)
        .env("MCP_POSTGRES_OWNER_PID", std::process::id().to_string())
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("cannot run scripts/postgres.sh: {e}"))
}

/// A new, empty database `name` on `admin`'s server; its URL.
pub fn fresh_database(admin: &str, name: &str) -> String {
    sql(
        admin,
        &[
            &format!("DROP DATABASE IF EXISTS {name}"),
            &format!("CREATE DATABASE {name}"),
        ],
    );
    let base = admin.rsplit_once('/').map_or(admin, |(base, _)| base);
    format!("{base}/{name}")
}
