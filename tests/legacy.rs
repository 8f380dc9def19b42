//! The legacy era (2025-11-25) beside the modern one: the initialize
//! handshake, sessions on stdio and HTTP, real server-to-client requests for
//! the same MRTR handlers, both eras on one endpoint at once, session
//! expiry and DELETE. Every message is validated against its revision's schema.

mod support;

use mcp_runtime::prelude::*;
use mcp_runtime::transport::http::{HttpConfig, HttpServer};
use mcp_runtime::TaskConfig;
use serde_json::{json, Value};
use std::time::Duration;
use support::http::RawReply;
use support::{validate_emitted, validate_legacy};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// A name.
#[mcp_runtime::form]
struct Name {
    /// Your name.
    name: String,
}

/// Greets the user by the name it asks for.
#[tool]
fn greet_me(input: Input) -> Flow<String> {
    match input.elicit::<Name>("who", "What is your name?")? {
        Elicited::Accepted(n) => Ok(format!("Hello, {}!", n.name)),
        _ => Ok("Hello, stranger!".into()),
    }
}

/// Logs, reports progress, then answers.
#[tool]
fn noisy(ctx: Context) -> String {
    ctx.progress(1.0, Some(1.0), None);
    ctx.log(LoggingLevel::Info, None, &"working");
    ctx.log(LoggingLevel::Debug, None, &"detail");
    "done".into()
}

/// A resource to subscribe to.
#[resource(uri = "docs://watched")]
fn watched() -> &'static str {
    "watched"
}

/// A day's page, by its number.
#[resource(uri_template = "days://{day}")]
fn day_page(day: u32) -> String {
    format!("day {day}")
}

/// A task tool: for a legacy session it runs synchronously, and its ask
/// goes over the session's stream.
#[tool(task)]
async fn legacy_task(task: Task) -> Result<String, String> {
    task.status("ignored for a legacy session");
    let name = task.elicit::<Name>("who", "Who runs this?").await?;
    Ok(format!(
        "ran for {}",
        name.accepted().map(|n| n.name).unwrap_or_default()
    ))
}

/// A task that asks two questions at once, and says what it was told.
#[tool(task)]
async fn pair_task(task: Task) -> String {
    let (a, b) = tokio::join!(task.elicit::<Name>("a", "First?"), task.elicit::<Name>("b", "Second?"));
    let told = |answer: Option<Elicited<Name>>| {
        answer
            .and_then(Elicited::accepted)
            .map_or_else(|| "unanswered".to_owned(), |n| n.name)
    };
    format!("a: {}, b: {}", told(a.ok()), told(b.ok()))
}

/// Runs only as a task: a legacy session calls it with `task`.
#[tool(task = required)]
async fn legacy_task_required() -> &'static str {
    "at once"
}

/// Runs until its task is cancelled.
#[tool(task)]
async fn legacy_long(task: Task) -> &'static str {
    task.cancelled().await;
    "stopped"
}

/// Answers after `ms` milliseconds.
#[tool]
async fn slow_answer(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("after {ms} ms")
}

/// Sends the user to sign in at a URL.
#[tool]
fn sign_in(input: Input) -> Flow<String> {
    match input.elicit_url("login", "Sign in to continue.", "https://auth.example.com/login")? {
        Elicited::Accepted(()) => Ok("signed in".into()),
        _ => Ok("not signed in".into()),
    }
}

static OUTLIVED_TOLD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Spawns work that waits to be told to stop, and never ends itself; its
/// tasks live 300 ms (a requested ttl is raised to a minute, but never past
/// the tool's own).
#[tool(task(ttl_ms = 300))]
async fn outlived(task: Task) -> &'static str {
    let child = task.clone();
    tokio::spawn(async move {
        child.cancelled().await;
        OUTLIVED_TOLD.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    std::future::pending::<()>().await;
    "never"
}

static HELD_STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static HELD_STOPPED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Set when `held`'s future is dropped.
struct HeldStopped;

impl Drop for HeldStopped {
    fn drop(&mut self) {
        HELD_STOPPED.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Runs for a minute, unless stopped.
#[tool]
async fn held() -> &'static str {
    let _stopped = HeldStopped;
    HELD_STARTED.store(true, std::sync::atomic::Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(60)).await;
    "a minute"
}

fn init_request(id: i64, version: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": version,
        "capabilities": {"elicitation": {}, "sampling": {}},
        "clientInfo": {"name": "legacy-client", "version": "1.0.0"}}})
    .to_string()
}

fn legacy(id: i64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// A stdio session, validating every line against 2025-11-25 (or 2026-07-28
/// for modern requests served inside it).
struct Stdio {
    w: tokio::io::DuplexStream,
    r: tokio::io::Lines<BufReader<tokio::io::DuplexStream>>,
    methods: std::collections::HashMap<i64, String>,
}

impl Stdio {
    fn start() -> Self {
        Stdio::with(Server::builder().build().expect("the server builds"))
    }

    fn with(server: Server) -> Self {
        Stdio::serving(server).0
    }

    /// A session of `server`, and the task serving it (which ends when the
    /// server does).
    fn serving(server: Server) -> (Self, tokio::task::JoinHandle<std::io::Result<()>>) {
        let (cw, sr) = tokio::io::duplex(1 << 16);
        let (sw, cr) = tokio::io::duplex(1 << 16);
        let serving = tokio::spawn(mcp_runtime::transport::stdio::serve_io(server, sr, sw));
        let session = Stdio {
            w: cw,
            r: BufReader::new(cr).lines(),
            methods: Default::default(),
        };
        (session, serving)
    }

    /// Polls task `id` with `tasks/get` (request id `request`) until it
    /// waits for input, for 5 s at most.
    async fn until_asked(&mut self, request: i64, id: &str) {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            self.send(&legacy(request, "tasks/get", json!({"taskId": id}))).await;
            let got = self.recv().await;
            assert_eq!(got["result"]["taskId"], json!(id));
            if got["result"]["status"] == "input_required" {
                return;
            }
            assert!(std::time::Instant::now() < deadline, "never asked: {got}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn send(&mut self, line: &str) {
        let v: Value = serde_json::from_str(line).unwrap();
        if let (Some(id), Some(m)) = (v["id"].as_i64(), v["method"].as_str()) {
            self.methods.insert(id, m.to_owned());
        }
        self.w.write_all(format!("{line}\n").as_bytes()).await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(5), self.r.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        let method = v["id"].as_i64().and_then(|id| self.methods.get(&id)).cloned();
        if v.get("result").is_some_and(|r| r.get("resultType").is_some()) {
            validate_emitted(&v, method.as_deref());
        } else {
            validate_legacy(&v, method.as_deref());
        }
        v
    }
}

#[tokio::test]
async fn a_legacy_stdio_session_with_an_elicitation_round_trip() {
    let mut c = Stdio::start();
    c.send(&init_request(1, "2025-11-25")).await;
    let init = c.recv().await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(init["result"]["serverInfo"]["name"], "mcp-server");
    assert!(init["result"]["capabilities"]["tools"].is_object());
    c.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    c.send(&legacy(2, "ping", json!({}))).await;
    assert_eq!(c.recv().await["result"], json!({}));
    c.send(&legacy(3, "tools/list", json!({}))).await;
    let list = c.recv().await;
    assert!(list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "greet_me"));

    c.send(&legacy(4, "tools/call", json!({"name": "greet_me", "arguments": {}})))
        .await;
    let ask = c.recv().await;
    assert_eq!(ask["method"], "elicitation/create");
    assert_eq!(ask["params"]["message"], "What is your name?");
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Ada"}}});
    c.send(&answer.to_string()).await;
    let done = c.recv().await;
    assert_eq!(done["id"], 4);
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!");

    // A modern request inside the session is served statelessly.
    let modern =
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"_meta": support::meta_with(json!({}))}});
    c.send(&modern.to_string()).await;
    assert_eq!(c.recv().await["result"]["resultType"], "complete");
    // So is a modern call that needs input: an `input_required` round, not
    // the session's `elicitation/create`.
    let caps = json!({"elicitation": {"form": {}}});
    let modern = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {
        "name": "greet_me", "arguments": {}, "_meta": support::meta_with(caps)}});
    c.send(&modern.to_string()).await;
    let round = c.recv().await;
    support::validate_emitted(&round, Some("tools/call"));
    assert_eq!(round["id"], 6, "{round}");
    assert_eq!(round["result"]["resultType"], "input_required", "{round}");
    assert!(round["result"]["requestState"].is_string(), "{round}");
}

#[tokio::test]
async fn task_tools_run_synchronously_for_a_legacy_session() {
    let mut c = Stdio::start();
    c.send(&init_request(1, "2025-11-25")).await;
    let init = c.recv().await;
    assert!(init["result"]["capabilities"].get("extensions").is_none(), "{init}");
    c.send(&legacy(
        2,
        "tools/call",
        json!({"name": "legacy_task", "arguments": {}}),
    ))
    .await;
    let ask = c.recv().await;
    assert_eq!(ask["method"], "elicitation/create");
    assert_eq!(ask["params"]["message"], "Who runs this?");
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Lin"}}});
    c.send(&answer.to_string()).await;
    let done = c.recv().await;
    assert_eq!(done["id"], 2);
    assert_eq!(done["result"]["content"][0]["text"], "ran for Lin");
    assert!(done["result"].get("taskId").is_none());

    c.send(&legacy(
        3,
        "tools/call",
        json!({"name": "legacy_task_required", "arguments": {}}),
    ))
    .await;
    let refused = c.recv().await;
    // 2025-11-25: a tool that requires a task, called without one, is -32601.
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("only as a task"));
    for method in ["tasks/get", "tasks/cancel", "tasks/result"] {
        c.send(&legacy(4, method, json!({"taskId": "x"}))).await;
        assert_eq!(c.recv().await["error"]["code"], -32602, "{method}: an unknown task");
    }
    // 2026-07-28's own and 2025-11-25's undeclared ones are not served.
    for method in ["tasks/update", "tasks/list"] {
        c.send(&legacy(5, method, json!({"taskId": "x"}))).await;
        assert_eq!(c.recv().await["error"]["code"], -32601, "{method}");
    }
}

/// A URL elicitation's `elicitationId` is unique within the server (two
/// calls of one tool asked the same `login`), so that a client tells them
/// and their completions apart.
#[tokio::test]
async fn each_url_elicitation_has_an_id_of_its_own() {
    let mut c = Stdio::start();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {"form": {}, "url": {}}},
        "clientInfo": {"name": "legacy-client", "version": "1.0.0"}}});
    c.send(&init.to_string()).await;
    c.recv().await;
    let mut ids = Vec::new();
    for id in [2, 3] {
        c.send(&legacy(id, "tools/call", json!({"name": "sign_in", "arguments": {}})))
            .await;
        let ask = c.recv().await;
        assert_eq!(ask["method"], "elicitation/create", "{ask}");
        assert_eq!(ask["params"]["mode"], "url", "{ask}");
        let elicitation = ask["params"]["elicitationId"].as_str().unwrap().to_owned();
        assert!(elicitation.starts_with("login-"), "{ask}");
        ids.push(elicitation);
        let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept"}});
        c.send(&answer.to_string()).await;
        assert_eq!(c.recv().await["result"]["content"][0]["text"], "signed in");
    }
    assert_ne!(ids[0], ids[1]);
}

/// A task whose time to live ends while it runs: a `tasks/result` waiting
/// for it is answered (the task is gone: -32602) instead of waiting for
/// good, and the work the handler spawned is told to stop.
#[tokio::test]
async fn a_task_that_expires_while_it_runs_ends_its_waiters_and_its_work() {
    let mut c = Stdio::start();
    c.send(&init_request(1, "2025-11-25")).await;
    c.recv().await;
    let call = json!({"name": "outlived", "arguments": {}, "task": {"ttl": 300}});
    c.send(&legacy(2, "tools/call", call)).await;
    let created = c.recv().await;
    let id = created["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    c.send(&legacy(3, "tasks/result", json!({"taskId": id}))).await;
    let gone = c.recv().await;
    assert_eq!(gone["id"], 3, "{gone}");
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    while !OUTLIVED_TOLD.load(std::sync::atomic::Ordering::SeqCst) {
        assert!(std::time::Instant::now() < deadline, "the spawned work was never told");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// 2025-11-25's tasks: declared at `initialize`, tools listed with their
/// `execution`, a call with `task` answered with its task, which
/// `tasks/get` polls, `tasks/result` waits for (asking the task's questions
/// on its stream, each naming the task), and `tasks/cancel` stops.
#[tokio::test]
async fn a_legacy_session_runs_task_augmented_calls_as_tasks() {
    let mut c = Stdio::start();
    c.send(&init_request(1, "2025-11-25")).await;
    let init = c.recv().await;
    assert_eq!(
        init["result"]["capabilities"]["tasks"],
        json!({"cancel": {}, "requests": {"tools": {"call": {}}}}),
        "{init}"
    );
    c.send(&legacy(2, "tools/list", json!({}))).await;
    let list = c.recv().await;
    let execution = |name: &str| {
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["execution"].clone())
            .unwrap()
    };
    assert_eq!(execution("legacy_task"), json!({"taskSupport": "optional"}));
    assert_eq!(execution("legacy_task_required"), json!({"taskSupport": "required"}));
    assert_eq!(execution("greet_me"), Value::Null);

    // A task that asks: its question comes on the stream of `tasks/result`.
    let call = json!({"name": "legacy_task", "arguments": {}, "task": {"ttl": 60000}});
    c.send(&legacy(3, "tools/call", call)).await;
    let created = c.recv().await;
    let task = &created["result"]["task"];
    assert_eq!(task["status"], "working", "{created}");
    assert_eq!(task["ttl"], 60000, "{created}");
    let id = task["taskId"].as_str().unwrap().to_owned();
    c.until_asked(4, &id).await;
    c.send(&legacy(5, "tasks/result", json!({"taskId": id}))).await;
    let ask = c.recv().await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    assert_eq!(
        ask["params"]["_meta"]["io.modelcontextprotocol/related-task"],
        json!({"taskId": id})
    );
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Lin"}}});
    c.send(&answer.to_string()).await;
    let result = c.recv().await;
    assert_eq!(result["id"], 5, "{result}");
    assert_eq!(result["result"]["content"][0]["text"], "ran for Lin", "{result}");
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"],
        json!({"taskId": id})
    );
    c.send(&legacy(6, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(c.recv().await["result"]["status"], "completed");
    c.send(&legacy(7, "tasks/cancel", json!({"taskId": id}))).await;
    assert_eq!(
        c.recv().await["error"]["code"],
        -32602,
        "an ended task is not cancelled"
    );

    // A task-only tool that answers at once is still a task.
    let call = json!({"name": "legacy_task_required", "arguments": {}, "task": {}});
    c.send(&legacy(8, "tools/call", call)).await;
    let created = c.recv().await;
    assert_eq!(created["result"]["task"]["status"], "working", "{created}");
    let id = created["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    c.send(&legacy(9, "tasks/result", json!({"taskId": id}))).await;
    assert_eq!(c.recv().await["result"]["content"][0]["text"], "at once");

    // A time to live of 0 is raised to a minute: the task keeps its result.
    let call = json!({"name": "legacy_task_required", "arguments": {}, "task": {"ttl": 0}});
    c.send(&legacy(14, "tools/call", call)).await;
    let created = c.recv().await;
    assert_eq!(created["result"]["task"]["ttl"], 60000, "{created}");
    let id = created["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    c.send(&legacy(15, "tasks/result", json!({"taskId": id}))).await;
    let result = c.recv().await;
    assert_eq!(result["result"]["content"][0]["text"], "at once", "{result}");

    // A plain tool is not called as a task.
    let call = json!({"name": "greet_me", "arguments": {}, "task": {}});
    c.send(&legacy(10, "tools/call", call)).await;
    assert_eq!(c.recv().await["error"]["code"], -32601);

    // Cancelled while it runs: its result is an error from then on.
    let call = json!({"name": "legacy_long", "arguments": {}, "task": {}});
    c.send(&legacy(11, "tools/call", call)).await;
    let id = c.recv().await["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    c.send(&legacy(12, "tasks/cancel", json!({"taskId": id}))).await;
    let cancelled = c.recv().await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    c.send(&legacy(13, "tasks/result", json!({"taskId": id}))).await;
    let result = c.recv().await;
    assert_eq!(result["error"]["code"], -32603, "{result}");
}

/// `tasks/result` waits for its task to end: a question its client
/// answers with an error does not end the request (the task still waits
/// for input); it ends with the task, here cancelled.
#[tokio::test]
async fn tasks_result_waits_for_the_task_when_its_question_goes_unanswered() {
    let mut c = Stdio::start();
    c.send(&init_request(1, "2025-11-25")).await;
    c.recv().await;
    c.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    let call = json!({"name": "legacy_task", "arguments": {}, "task": {"ttl": 60000}});
    c.send(&legacy(2, "tools/call", call)).await;
    let id = c.recv().await["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    c.until_asked(3, &id).await;
    c.send(&legacy(4, "tasks/result", json!({"taskId": id}))).await;
    let ask = c.recv().await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let refusal = json!({"jsonrpc": "2.0", "id": ask["id"], "error": {"code": -32603, "message": "no user here"}});
    c.send(&refusal.to_string()).await;
    // Time for the refusal to reach `tasks/result` before the cancel.
    tokio::time::sleep(Duration::from_millis(300)).await;
    c.send(&legacy(5, "tasks/cancel", json!({"taskId": id}))).await;
    let first = c.recv().await;
    assert_eq!(first["id"], 5, "tasks/result ended before its task: {first}");
    assert_eq!(first["result"]["status"], "cancelled", "{first}");
    let result = c.recv().await;
    assert_eq!(result["id"], 4, "{result}");
    assert_eq!(result["error"]["code"], -32603, "{result}");
}

/// Two questions asked at once by `tasks/result`: the one the client
/// answers with an error is not put again, and the other's answer still
/// reaches the task (which, told nothing of the first within its input
/// timeout, ends).
#[tokio::test]
async fn one_question_refused_leaves_the_others_answer_with_the_task() {
    let config = TaskConfig {
        input_timeout: Duration::from_millis(400),
        ..TaskConfig::default()
    };
    let mut c = Stdio::with(Server::builder().tasks(config).build().unwrap());
    c.send(&init_request(1, "2025-11-25")).await;
    c.recv().await;
    let call = json!({"name": "pair_task", "arguments": {}, "task": {"ttl": 60000}});
    c.send(&legacy(2, "tools/call", call)).await;
    let id = c.recv().await["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    c.send(&legacy(3, "tasks/result", json!({"taskId": id}))).await;
    for _ in 0..2 {
        let ask = c.recv().await;
        assert_eq!(ask["method"], "elicitation/create", "{ask}");
        let answer = match ask["params"]["message"].as_str() {
            Some("First?") => {
                json!({"jsonrpc": "2.0", "id": ask["id"], "error": {"code": -1, "message": "User rejected the request"}})
            }
            _ => json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Bo"}}}),
        };
        c.send(&answer.to_string()).await;
    }
    let result = c.recv().await;
    assert_eq!(result["id"], 3, "{result}");
    assert_eq!(
        result["result"]["content"][0]["text"], "a: unanswered, b: Bo",
        "{result}"
    );
}

/// A client whose input ends while its `tasks/result` waits for an answer
/// it can no longer give: the request ends, and the server with it (not at
/// the task's input timeout, 10 minutes on).
#[tokio::test]
async fn a_client_that_goes_away_during_tasks_result_lets_the_server_end() {
    let (mut c, served) = Stdio::serving(Server::builder().build().expect("the server builds"));
    c.send(&init_request(1, "2025-11-25")).await;
    c.recv().await;
    let call = json!({"name": "legacy_task", "arguments": {}, "task": {"ttl": 60000}});
    c.send(&legacy(2, "tools/call", call)).await;
    let id = c.recv().await["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    c.send(&legacy(3, "tasks/result", json!({"taskId": id}))).await;
    let ask = c.recv().await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let Stdio { w, mut r, .. } = c;
    drop(w);
    let ended = tokio::time::timeout(Duration::from_secs(5), r.next_line()).await;
    let line = ended.expect("tasks/result answered").unwrap().unwrap();
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer["id"], 3, "{answer}");
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    tokio::time::timeout(Duration::from_secs(5), served)
        .await
        .expect("the server ends with its input")
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn legacy_logging_level_progress_and_version_negotiation() {
    let mut c = Stdio::start();
    c.send(&init_request(1, "1999-01-01")).await;
    assert_eq!(
        c.recv().await["result"]["protocolVersion"],
        "2025-11-25",
        "an unknown version gets the newest"
    );
    c.send(&legacy(2, "logging/setLevel", json!({"level": "info"}))).await;
    assert_eq!(c.recv().await["result"], json!({}));
    c.send(&legacy(
        3,
        "tools/call",
        json!({"name": "noisy", "arguments": {}, "_meta": {"progressToken": 7}}),
    ))
    .await;
    let mut methods = Vec::new();
    loop {
        let m = c.recv().await;
        if m["id"] == 3 {
            assert_eq!(m["result"]["content"][0]["text"], "done");
            break;
        }
        methods.push(m["method"].as_str().unwrap().to_owned());
    }
    assert_eq!(
        methods,
        ["notifications/progress", "notifications/message"],
        "debug is below the session's level"
    );

    let mut older = Stdio::start();
    older.send(&init_request(1, "2025-06-18")).await;
    assert_eq!(older.recv().await["result"]["protocolVersion"], "2025-06-18");
}

#[tokio::test]
async fn modern_only_mode_refuses_initialize_naming_the_supported_versions() {
    let (cw, sr) = tokio::io::duplex(1 << 16);
    let (sw, cr) = tokio::io::duplex(1 << 16);
    tokio::spawn(mcp_runtime::transport::stdio::serve_io(
        Server::builder().modern_only().build().expect("the server builds"),
        sr,
        sw,
    ));
    let mut w = cw;
    let mut r = BufReader::new(cr).lines();
    w.write_all(format!("{}\n", init_request(1, "2025-11-25")).as_bytes())
        .await
        .unwrap();
    let v: Value = serde_json::from_str(&r.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(v["error"]["code"], -32022);
    assert_eq!(v["error"]["data"]["supported"], json!(["2026-07-28"]));
}

// ---- HTTP -------------------------------------------------------------------

async fn http(addr: std::net::SocketAddr, method: &str, headers: &[(&str, &str)], body: &str) -> RawReply {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut req = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).await.unwrap();
    let mut raw = String::new();
    tokio::time::timeout(Duration::from_secs(5), s.read_to_string(&mut raw))
        .await
        .unwrap()
        .unwrap();
    RawReply::parse(&raw)
}

/// POSTs `body` in a task of its own: a request that runs on while the
/// test does more.
fn spawn_post(addr: std::net::SocketAddr, headers: &[(&str, &str)], body: String) -> tokio::task::JoinHandle<RawReply> {
    let headers: Vec<(String, String)> = headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    tokio::spawn(async move {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        http(addr, "POST", &headers, &body).await
    })
}

const JSON: (&str, &str) = ("content-type", "application/json");
const ACCEPT: (&str, &str) = ("accept", "application/json, text/event-stream");

async fn start(config: HttpConfig) -> std::net::SocketAddr {
    let server = HttpServer::bind(
        Server::builder().build().expect("the server builds"),
        "127.0.0.1:0",
        config,
    )
    .await
    .unwrap();
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.serve_until(std::future::pending()));
    addr
}

/// A server whose sessions expire after 300 ms idle, and a session of it.
async fn short_idle_session() -> (std::net::SocketAddr, String) {
    let addr = start(HttpConfig {
        session_idle: Duration::from_millis(300),
        ..HttpConfig::default()
    })
    .await;
    let id = open_session(addr).await;
    (addr, id)
}

async fn open_session(addr: std::net::SocketAddr) -> String {
    // The first validation compiles the schema, which takes longer than
    // the tests' shortest idle timeout: done before the session opens.
    validate_legacy(&json!({"jsonrpc": "2.0", "id": 0, "result": {}}), Some("ping"));
    let r = http(addr, "POST", &[JSON, ACCEPT], &init_request(1, "2025-11-25")).await;
    assert_eq!(r.status, 200);
    validate_legacy(&r.messages()[0], Some("initialize"));
    let id = r.header("mcp-session-id").expect("a session id").to_owned();
    let n = http(
        addr,
        "POST",
        &[JSON, ACCEPT, ("mcp-session-id", &id)],
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert_eq!(n.status, 202, "{}", n.body);
    assert!(
        id.len() >= 32 && id.bytes().all(|b| (0x21..=0x7e).contains(&b)),
        "visible ASCII, unguessable: {id}"
    );
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_eras_on_one_endpoint_concurrently() {
    let addr = start(HttpConfig::default()).await;
    let id = open_session(addr).await;
    let sid = ("mcp-session-id", id.as_str());
    let mut tasks = Vec::new();
    for i in 0..8i64 {
        let id = id.clone();
        tasks.push(tokio::spawn(async move {
            if i % 2 == 0 {
                let r = http(addr, "POST", &[JSON, ACCEPT, ("mcp-session-id", &id)], &legacy(10 + i, "tools/list", json!({}))).await;
                let m = &r.messages()[0];
                validate_legacy(m, Some("tools/list"));
            } else {
                let body = json!({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/list", "params": {"_meta": support::meta_with(json!({}))}});
                let headers = [JSON, ACCEPT, ("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/list")];
                let r = http(addr, "POST", &headers, &body.to_string()).await;
                let m = &r.messages()[0];
                validate_emitted(m, Some("tools/list"));
                assert_eq!(m["result"]["resultType"], "complete");
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let ping = http(addr, "POST", &[JSON, ACCEPT, sid], &legacy(30, "ping", json!({}))).await;
    validate_legacy(&ping.messages()[0], Some("ping"));
    let sub = http(
        addr,
        "POST",
        &[JSON, ACCEPT, sid],
        &legacy(31, "resources/subscribe", json!({"uri": "docs://watched"})),
    )
    .await;
    validate_legacy(&sub.messages()[0], Some("resources/subscribe"));
}

/// A session's client that takes only JSON answers gets no stream: its
/// calls are served, and only a handler that asks fails (it cannot be
/// asked during the call).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_whose_client_takes_only_json_is_served() {
    let addr = start(HttpConfig::default()).await;
    let id = open_session(addr).await;
    let only_json = [JSON, ("accept", "application/json"), ("mcp-session-id", id.as_str())];
    let r = http(
        addr,
        "POST",
        &only_json,
        &legacy(5, "tools/call", json!({"name": "slow_answer", "arguments": {"ms": 1}})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let m = &r.messages()[0];
    validate_legacy(m, Some("tools/call"));
    assert_eq!(m["result"]["content"][0]["text"], "after 1 ms", "{m}");
    let r = http(
        addr,
        "POST",
        &only_json,
        &legacy(6, "tools/call", json!({"name": "greet_me", "arguments": {}})),
    )
    .await;
    let m = &r.messages()[0];
    validate_legacy(m, Some("tools/call"));
    assert_eq!(m["error"]["code"], -32603, "{m}");
    assert!(m["error"]["message"].as_str().unwrap().contains("only JSON"), "{m}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_session_gets_server_requests_on_the_call_stream() {
    let addr = start(HttpConfig::default()).await;
    let id = open_session(addr).await;
    let sid = ("mcp-session-id", id.as_str());
    // The call's SSE stream carries the elicitation request; the answer is a separate POST.
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let body = legacy(5, "tools/call", json!({"name": "greet_me", "arguments": {}}));
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nmcp-session-id: {id}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut reader = BufReader::new(s);
    let mut ask = None;
    let mut line = String::new();
    while ask.is_none() {
        line.clear();
        tokio::time::timeout(Duration::from_secs(5), reader.read_line(&mut line))
            .await
            .unwrap()
            .unwrap();
        if let Some(data) = line.trim_end().strip_prefix("data: ") {
            ask = Some(serde_json::from_str::<Value>(data).unwrap());
        }
    }
    let ask = ask.unwrap();
    validate_legacy(&ask, None);
    assert_eq!(ask["method"], "elicitation/create");
    let answer =
        json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Grace"}}});
    let r = http(addr, "POST", &[JSON, ACCEPT, sid], &answer.to_string()).await;
    assert_eq!(r.status, 202);
    let mut result = None;
    while result.is_none() {
        line.clear();
        tokio::time::timeout(Duration::from_secs(5), reader.read_line(&mut line))
            .await
            .unwrap()
            .unwrap();
        if let Some(data) = line.trim_end().strip_prefix("data: ") {
            let v: Value = serde_json::from_str(data).unwrap();
            if v["id"] == 5 {
                result = Some(v);
            }
        }
    }
    let result = result.unwrap();
    validate_legacy(&result, Some("tools/call"));
    assert_eq!(result["result"]["content"][0]["text"], "Hello, Grace!");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_ends_a_session_and_idle_sessions_expire() {
    let (addr, id) = short_idle_session().await;
    let sid = ("mcp-session-id", id.as_str());
    assert_eq!(http(addr, "DELETE", &[sid], "").await.status, 200);
    let gone = http(addr, "POST", &[JSON, ACCEPT, sid], &legacy(2, "tools/list", json!({}))).await;
    assert_eq!(gone.status, 404);
    assert_eq!(http(addr, "DELETE", &[sid], "").await.status, 404);

    let id = open_session(addr).await;
    let sid = ("mcp-session-id", id.as_str());
    assert_eq!(
        http(addr, "POST", &[JSON, ACCEPT, sid], &legacy(3, "ping", json!({})))
            .await
            .status,
        200
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    let expired = http(addr, "POST", &[JSON, ACCEPT, sid], &legacy(4, "ping", json!({}))).await;
    assert_eq!(expired.status, 404, "an idle session is reaped");
    // Without a session, GET and DELETE stay 405.
    assert_eq!(http(addr, "GET", &[], "").await.status, 405);
    assert_eq!(http(addr, "DELETE", &[], "").await.status, 405);
}

/// `initialize` again on a live session is refused by that session (it is
/// initialized): no second session is opened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_on_a_live_session_opens_no_other() {
    let addr = start(HttpConfig::default()).await;
    let id = open_session(addr).await;
    let again = http(
        addr,
        "POST",
        &[JSON, ACCEPT, ("mcp-session-id", &id)],
        &init_request(5, "2025-11-25"),
    )
    .await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert!(
        again.header("mcp-session-id").is_none(),
        "a second session: {}",
        again.body
    );
    let m = &again.messages()[0];
    validate_legacy(m, None);
    assert_eq!(m["id"], 5, "{m}");
    assert_eq!(m["error"]["code"], -32600, "{m}");
    let still = http(
        addr,
        "POST",
        &[JSON, ACCEPT, ("mcp-session-id", &id)],
        &legacy(6, "ping", json!({})),
    )
    .await;
    assert_eq!(still.status, 200, "{}", still.body);
}

/// A session's answers follow `Accept` too: `initialize` comes as a stream
/// (with its session id) to a client that takes only event streams, and the
/// session's GET stream is 406 for a client that takes none.
#[tokio::test]
async fn a_sessions_answers_follow_the_accept_header() {
    let addr = start(HttpConfig::default()).await;
    let only_sse = ("accept", "text/event-stream");
    let r = http(addr, "POST", &[JSON, only_sse], &init_request(1, "2025-11-25")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("content-type"), Some("text/event-stream"), "{}", r.body);
    validate_legacy(&r.messages()[0], Some("initialize"));
    let id = r.header("mcp-session-id").expect("a session id").to_owned();
    let sid = ("mcp-session-id", id.as_str());
    let get = http(addr, "GET", &[("accept", "application/json"), sid], "").await;
    assert_eq!(get.status, 406, "{}", get.body);
    let ping = http(
        addr,
        "POST",
        &[JSON, ("accept", "application/json"), sid],
        &legacy(2, "ping", json!({})),
    )
    .await;
    assert_eq!(ping.status, 200, "{}", ping.body);
    assert_eq!(ping.header("content-type"), Some("application/json"), "{}", ping.body);
}

/// A session whose request runs longer than the idle timeout is not idle:
/// the request is answered and the session lives on, idle from its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_is_not_idle_while_a_request_runs() {
    let (addr, id) = short_idle_session().await;
    let sid = ("mcp-session-id", id.as_str());
    let call = legacy(
        2,
        "tools/call",
        json!({"name": "slow_answer", "arguments": {"ms": 1500}}),
    );
    let answered = http(addr, "POST", &[JSON, ACCEPT, sid], &call).await;
    assert_eq!(answered.status, 200, "{}", answered.body);
    let m = &answered.messages()[0];
    validate_legacy(m, Some("tools/call"));
    assert_eq!(m["result"]["content"][0]["text"], "after 1500 ms", "{m}");
    let after = http(addr, "POST", &[JSON, ACCEPT, sid], &legacy(3, "ping", json!({}))).await;
    assert_eq!(after.status, 200, "the session outlived its request: {}", after.body);
}

/// A session's request may not take the id of one still running (a
/// cancellation naming it could not tell them apart): it is refused, and
/// the running one goes on, cancellable, to its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_reusing_a_running_requests_id_is_refused() {
    let addr = start(HttpConfig::default()).await;
    let id = open_session(addr).await;
    let sid = ("mcp-session-id", id.as_str());
    let call = legacy(
        5,
        "tools/call",
        json!({"name": "slow_answer", "arguments": {"ms": 800}}),
    );
    let running = spawn_post(addr, &[JSON, ACCEPT, sid], call);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let again = http(addr, "POST", &[JSON, ACCEPT, sid], &legacy(5, "ping", json!({}))).await;
    assert_eq!(again.status, 200, "{}", again.body);
    let refused = &again.messages()[0];
    validate_legacy(refused, None);
    assert_eq!(refused["id"], 5, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let answered = running.await.unwrap();
    let m = &answered.messages()[0];
    assert_eq!(m["result"]["content"][0]["text"], "after 800 ms", "{m}");
    // Free again once answered.
    let later = http(addr, "POST", &[JSON, ACCEPT, sid], &legacy(5, "ping", json!({}))).await;
    assert!(later.messages()[0].get("result").is_some(), "{}", later.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_request_with_a_leftover_session_id_is_served_statelessly() {
    let addr = start(HttpConfig::default()).await;
    let live = open_session(addr).await;
    let body =
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": support::meta_with(json!({}))}});
    let modern = [
        JSON,
        ACCEPT,
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/list"),
    ];
    for (sid, event) in [("0123456789abcdef0123456789abcdef", None), (live.as_str(), Some("42"))] {
        let mut headers = modern.to_vec();
        headers.push(("mcp-session-id", sid));
        if let Some(e) = event {
            headers.push(("last-event-id", e));
        }
        let r = http(addr, "POST", &headers, &body.to_string()).await;
        assert_eq!(r.status, 200, "{sid}: {}", r.body);
        assert!(r.header("mcp-session-id").is_none(), "the session id is never echoed");
        let m = &r.messages()[0];
        validate_emitted(m, Some("tools/list"));
        assert_eq!(m["result"]["resultType"], "complete", "served as 2026-07-28: {m}");
    }
    // A legacy request with an unknown session id is still 404.
    let r = http(
        addr,
        "POST",
        &[JSON, ACCEPT, ("mcp-session-id", "0123456789abcdef0123456789abcdef")],
        &legacy(8, "ping", json!({})),
    )
    .await;
    assert_eq!(r.status, 404, "{}", r.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_nobody_waits_for_is_rejected() {
    let addr = start(HttpConfig::default()).await;
    let answer = r#"{"jsonrpc":"2.0","id":"s-1","result":{"roots":[]}}"#;
    let error = r#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}"#;
    for body in [answer, error] {
        let r = http(addr, "POST", &[JSON, ACCEPT], body).await;
        assert_eq!(r.status, 400, "no session: {}", r.body);
        let m = &r.messages()[0];
        validate_emitted(m, None);
        assert_eq!(m["error"]["code"], -32600, "{m}");
    }
    // Inside a session, an answer to a request that was never sent.
    let id = open_session(addr).await;
    let r = http(addr, "POST", &[JSON, ACCEPT, ("mcp-session-id", &id)], answer).await;
    assert_eq!(r.status, 400, "{}", r.body);
    let m = &r.messages()[0];
    validate_legacy(m, None);
    assert_eq!(m["error"]["code"], -32600, "{m}");
    assert_eq!(m["id"], "s-1", "{m}");
}

/// Found by the `dispatch` fuzz target: a second `initialize` on one stdio
/// process opened a second session whose event forwarder was never stopped,
/// so the server never exited after stdin closed.
#[tokio::test]
async fn a_second_initialize_is_an_error_and_the_server_still_exits_on_eof() {
    let (mut c, serving) = Stdio::serving(Server::builder().build().expect("the server builds"));
    c.send(&init_request(1, "2025-11-25")).await;
    assert_eq!(c.recv().await["result"]["protocolVersion"], "2025-11-25");
    c.send(&init_request(2, "2025-11-25")).await;
    let again = c.recv().await;
    assert_eq!(again["id"], 2);
    assert_eq!(again["error"]["code"], -32600, "{again}");
    drop(c.w);
    tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .expect("the server exits when stdin closes")
        .unwrap()
        .unwrap();
}

/// A session opened through an authenticating proxy (`principal_header`)
/// belongs to the principal it named: another principal is told it does not
/// exist, for a POST, a GET stream and a DELETE alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_belongs_to_the_principal_header_that_opened_it() {
    let addr = start(HttpConfig {
        principal_header: Some("x-user".into()),
        ..HttpConfig::default()
    })
    .await;
    let alice = ("x-user", "alice");
    let r = http(addr, "POST", &[JSON, ACCEPT, alice], &init_request(1, "2025-11-25")).await;
    assert_eq!(r.status, 200);
    let id = r.header("mcp-session-id").expect("a session id").to_owned();
    let ping = legacy(2, "ping", json!({}));
    let own = http(addr, "POST", &[JSON, ACCEPT, alice, ("mcp-session-id", &id)], &ping).await;
    assert_eq!(own.status, 200, "{}", own.body);
    for who in [Some("bob"), None] {
        let mut headers = vec![JSON, ACCEPT, ("mcp-session-id", id.as_str())];
        if let Some(who) = who {
            headers.push(("x-user", who));
        }
        let other = http(addr, "POST", &headers, &ping).await;
        assert_eq!(other.status, 404, "{who:?} may not use alice's session: {}", other.body);
        let stream = http(addr, "GET", &headers, "").await;
        assert_eq!(stream.status, 404, "{who:?}: no GET stream of alice's session");
        let delete = http(addr, "DELETE", &headers, "").await;
        assert_eq!(delete.status, 404, "{who:?} may not end alice's session");
    }
    let still = http(addr, "POST", &[JSON, ACCEPT, alice, ("mcp-session-id", &id)], &ping).await;
    assert_eq!(still.status, 200, "alice's session is still hers");
}

/// One caller opening sessions in a loop ends only its own: past its bound,
/// its own longest idle session makes room, never another caller's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_opening_sessions_in_a_loop_ends_only_its_own() {
    let addr = start(HttpConfig {
        principal_header: Some("x-user".into()),
        max_sessions: 50,
        max_sessions_per_caller: 5,
        ..HttpConfig::default()
    })
    .await;
    let open = |user: &'static str| async move {
        let r = http(
            addr,
            "POST",
            &[JSON, ACCEPT, ("x-user", user)],
            &init_request(1, "2025-11-25"),
        )
        .await;
        assert_eq!(r.status, 200);
        r.header("mcp-session-id").expect("a session id").to_owned()
    };
    let ping = |user: &'static str, id: String| async move {
        http(
            addr,
            "POST",
            &[JSON, ACCEPT, ("x-user", user), ("mcp-session-id", &id)],
            &legacy(2, "ping", json!({})),
        )
        .await
        .status
    };
    let alice = open("alice").await;
    let first = open("mallory").await;
    let mut last = String::new();
    for _ in 0..120 {
        last = open("mallory").await;
    }
    assert_eq!(
        ping("alice", alice).await,
        200,
        "alice's session outlived mallory's 121 initializes"
    );
    assert_eq!(ping("mallory", first).await, 404, "mallory's oldest made room");
    assert_eq!(ping("mallory", last).await, 200, "mallory's newest is served");
}

/// A 2025-11-25 session's JSON-RPC errors go with 200: that era's clients
/// take a 4xx for a transport failure, and a 404 for a session that ended.
/// An unknown resource is that era's -32002, not 2026-07-28's -32602.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_session_gets_its_json_rpc_errors_with_200() {
    let addr = start(HttpConfig::default()).await;
    let id = open_session(addr).await;
    let sid = ("mcp-session-id", id.as_str());
    let headers = [JSON, ACCEPT, sid, ("mcp-protocol-version", "2025-11-25")];
    for (n, method, params, code) in [
        (2, "no/such_method", json!({}), -32601),
        (
            3,
            "tools/call",
            json!({"name": "no_such_tool", "arguments": {}}),
            -32602,
        ),
        // 2025-11-25's own code for an unknown resource, with its `data.uri`.
        (4, "resources/read", json!({"uri": "nowhere://x"}), -32002),
        (6, "resources/subscribe", json!({"uri": "nowhere://y"}), -32002),
        // A template's value that names no resource (not a number).
        (7, "resources/read", json!({"uri": "days://tuesday"}), -32002),
    ] {
        let r = http(addr, "POST", &headers, &legacy(n, method, params)).await;
        assert_eq!(r.status, 200, "{method}: {:?}", r.messages());
        let message = &r.messages()[0];
        validate_legacy(message, Some(method));
        assert_eq!(message["error"]["code"], code, "{method}: {message}");
        if code == -32002 {
            assert!(
                message["error"]["data"]["uri"]
                    .as_str()
                    .is_some_and(|u| u.contains("://")),
                "{message}"
            );
        }
    }
    // The session still serves.
    let ping = http(addr, "POST", &headers, &legacy(5, "ping", json!({}))).await;
    assert_eq!(ping.status, 200);
}

/// A session's messages speak its revision: an `MCP-Protocol-Version` that
/// is not one of the legacy revisions is 400 (2025-11-25: "invalid or
/// unsupported"), on POST and GET; one of them, or none, is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_message_with_an_unsupported_version_header_is_400() {
    let addr = start(HttpConfig::default()).await;
    let id = open_session(addr).await;
    let sid = ("mcp-session-id", id.as_str());
    for version in ["1999-01-01", "2026-07-28", "garbage"] {
        let headers = [JSON, ACCEPT, sid, ("mcp-protocol-version", version)];
        let r = http(addr, "POST", &headers, &legacy(2, "tools/list", json!({}))).await;
        assert_eq!(r.status, 400, "{version}: {:?}", r.messages());
        let message = &r.messages()[0];
        validate_legacy(message, None);
        assert!(
            message["error"]["message"].as_str().unwrap().contains(version),
            "{message}"
        );
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(http(addr, "POST", &headers, note).await.status, 400, "{version}");
        let get = http(addr, "GET", &[ACCEPT, sid, ("mcp-protocol-version", version)], "").await;
        assert_eq!(get.status, 400, "{version}");
    }
    for headers in [
        vec![JSON, ACCEPT, sid, ("mcp-protocol-version", "2025-11-25")],
        vec![JSON, ACCEPT, sid, ("mcp-protocol-version", "2025-06-18")],
        vec![JSON, ACCEPT, sid],
    ] {
        let r = http(addr, "POST", &headers, &legacy(3, "tools/list", json!({}))).await;
        assert_eq!(r.status, 200, "{headers:?}");
        assert!(r.messages()[0]["result"]["tools"].is_array());
    }
}

/// A session's client cancels a request with `notifications/cancelled`
/// (2025-11-25 says disconnecting is not cancelling): the handler stops, and
/// the request gets no answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_cancelled_notification_stops_its_request() {
    use std::sync::atomic::Ordering;
    let addr = start(HttpConfig::default()).await;
    let id = open_session(addr).await;
    let headers = [
        JSON,
        ACCEPT,
        ("mcp-session-id", id.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let call = spawn_post(
        addr,
        &headers,
        legacy(7, "tools/call", json!({"name": "held", "arguments": {}})),
    );
    support::eventually("the call runs", || HELD_STARTED.load(Ordering::SeqCst)).await;
    let cancel =
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"no longer needed"}}"#;
    assert_eq!(http(addr, "POST", &headers, cancel).await.status, 202);
    support::eventually("the handler stops", || HELD_STOPPED.load(Ordering::SeqCst)).await;
    let answer = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("the call's POST ends")
        .unwrap();
    assert!(
        answer.messages().is_empty(),
        "no answer to a cancelled request: {:?}",
        answer.messages()
    );
}

static WAITING_STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static WAITING_STOPPED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Runs for a minute, unless stopped (the session-end test's own).
#[tool]
async fn waiting() -> &'static str {
    struct Stopped;
    impl Drop for Stopped {
        fn drop(&mut self) {
            WAITING_STOPPED.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let _stopped = Stopped;
    WAITING_STARTED.store(true, std::sync::atomic::Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(60)).await;
    "a minute"
}

/// Opens the session's GET stream: the connection, past the headers of a 200.
async fn get_stream(addr: std::net::SocketAddr, session: &str) -> tokio::net::TcpStream {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!(
        "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nmcp-session-id: {session}\r\n\
         mcp-protocol-version: 2025-11-25\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        assert_eq!(s.read(&mut byte).await.unwrap(), 1, "the stream's head");
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    s
}

/// What a GET stream brings within `wait`: its messages, and whether it ended.
async fn read_stream(s: &mut tokio::net::TcpStream, wait: Duration) -> (Vec<Value>, bool) {
    let mut raw = Vec::new();
    let ended = loop {
        let mut chunk = [0u8; 4096];
        match tokio::time::timeout(wait, s.read(&mut chunk)).await {
            Err(_) => break false,
            Ok(Ok(0)) | Ok(Err(_)) => break true,
            Ok(Ok(n)) => raw.extend_from_slice(&chunk[..n]),
        }
    };
    let text = String::from_utf8_lossy(&raw);
    let messages = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .inspect(|m| validate_legacy(m, None))
        .collect();
    (messages, ended)
}

/// A session's end reaches all of it. A second GET stream takes the first
/// one's place (a message is never sent on two streams); an open stream
/// keeps a session that only listens from being reaped as idle; DELETE ends
/// the stream and stops the session's running requests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_end_reaches_its_stream_and_its_requests() {
    use std::sync::atomic::Ordering;
    let server = Server::builder().build().expect("the server builds");
    let config = HttpConfig {
        session_idle: Duration::from_secs(1),
        ..HttpConfig::default()
    };
    let http_server = HttpServer::bind(server.clone(), "127.0.0.1:0", config).await.unwrap();
    let addr = http_server.local_addr().unwrap();
    tokio::spawn(http_server.serve_until(std::future::pending()));
    let id = open_session(addr).await;

    let mut first = get_stream(addr, &id).await;
    let mut second = get_stream(addr, &id).await;
    let (_, ended) = read_stream(&mut first, Duration::from_secs(2)).await;
    assert!(ended, "the first stream ends when the second opens");
    server.announce(mcp_runtime::ServerEvent::ToolsListChanged);
    let (heard, ended) = read_stream(&mut second, Duration::from_millis(300)).await;
    assert!(!ended);
    assert_eq!(heard.len(), 1, "{heard:?}");
    assert_eq!(heard[0]["method"], "notifications/tools/list_changed");

    // Twice the idle time, listening only: the session lives.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let headers = [
        JSON,
        ACCEPT,
        ("mcp-session-id", id.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let ping = http(addr, "POST", &headers, &legacy(2, "ping", json!({}))).await;
    assert_eq!(
        ping.status, 200,
        "a session with an open stream is not idle: {}",
        ping.body
    );

    let call = spawn_post(
        addr,
        &headers,
        legacy(3, "tools/call", json!({"name": "waiting", "arguments": {}})),
    );
    support::eventually("the call runs", || WAITING_STARTED.load(Ordering::SeqCst)).await;
    assert_eq!(http(addr, "DELETE", &headers[2..3], "").await.status, 200);
    support::eventually("the handler stops", || WAITING_STOPPED.load(Ordering::SeqCst)).await;
    let (_, ended) = read_stream(&mut second, Duration::from_secs(2)).await;
    assert!(ended, "DELETE ends the session's stream");
    tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("the call's POST ends")
        .unwrap();
}

/// A host that quits (closes stdin) while the server waits for its answer
/// to an ask does not keep the server alive: the ask fails at once, the
/// request ends, and serving ends.
#[tokio::test]
async fn closing_stdin_during_an_ask_ends_serving_at_once() {
    let (mut to_server, server_r) = tokio::io::duplex(1 << 16);
    let (server_w, from_server) = tokio::io::duplex(1 << 16);
    let serving = tokio::spawn(mcp_runtime::transport::stdio::serve_io(
        Server::builder().build().expect("the server builds"),
        server_r,
        server_w,
    ));
    let mut lines = BufReader::new(from_server).lines();
    let caps = json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "host", "version": "1.0.0"}});
    for line in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": caps}).to_string(),
        legacy(2, "tools/call", json!({"name": "greet_me", "arguments": {}})),
    ] {
        to_server.write_all(format!("{line}\n").as_bytes()).await.unwrap();
    }
    let mut asked = false;
    while let Ok(Ok(Some(line))) = tokio::time::timeout(Duration::from_secs(5), lines.next_line()).await {
        if line.contains("elicitation/create") {
            asked = true;
            break;
        }
    }
    assert!(asked, "the server asks");
    drop(to_server);
    tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .expect("serving ends within 5 s, not after the ask's two minutes")
        .unwrap()
        .unwrap();
}
