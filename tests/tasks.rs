//! The Tasks extension end to end: the whole lifecycle over HTTP and stdio
//! (create, working, input_required with partial answers, completed,
//! failed, cancelled while running and after finishing), every error code,
//! expiry, principal binding, limits, and `notifications/tasks` on
//! `subscriptions/listen`. Every message the server emits is validated
//! against the 2026-07-28 schema and the extension's own schema
//! (`tests/spec/ext-tasks`).

mod support;

use mcp_runtime::prelude::*;
use mcp_runtime::transport::http::{HttpConfig, HttpServer};
use mcp_runtime::{TaskConfig, TaskError};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use support::http::{self, standard_headers, with_header};
use support::{meta_with, StdioClient};

const EXT: &str = "io.modelcontextprotocol/tasks";

// ------------------------------------------------------------------ tools

/// An answer.
#[mcp_runtime::form]
struct Answer {
    /// Some text.
    text: String,
}

/// Works `ms` milliseconds, reporting status; answers with the label.
#[tool(task)]
async fn work(ms: u64, label: String, task: Task) -> Result<String, String> {
    task.status(format!("working on {label}"));
    tokio::time::sleep(Duration::from_millis(ms)).await;
    Ok(format!("{label} done"))
}

static CLEANED_UP: AtomicUsize = AtomicUsize::new(0);

/// Works until cancelled, then cleans up.
#[tool(task)]
async fn endless(task: Task, cancel: Cancellation) -> Result<String, String> {
    task.status("running until cancelled");
    cancel.cancelled().await;
    CLEANED_UP.fetch_add(1, Ordering::SeqCst);
    Err("stopped".into())
}

/// Asks two questions at once, then a third.
#[tool(task)]
async fn interview(task: Task) -> Result<String, String> {
    let (a, b) = tokio::join!(
        task.elicit::<Answer>("a", "First?"),
        task.elicit::<Answer>("b", "Second?")
    );
    let (a, b) = (a?.accepted().map(|x| x.text), b?.accepted().map(|x| x.text));
    // The same key again is a new request under a new key.
    let c = task.elicit::<Answer>("a", "Third?").await?.accepted().map(|x| x.text);
    Ok(format!("{a:?} {b:?} {c:?}"))
}

/// Fails with a protocol error after a wait.
#[tool(task)]
async fn broken() -> Flow<String> {
    tokio::time::sleep(Duration::from_millis(20)).await;
    Err(Halt::protocol(McpError::invalid_params("the backend refused the job")))
}

/// Panics after a wait.
#[tool(task)]
async fn panicky() -> String {
    tokio::time::sleep(Duration::from_millis(20)).await;
    let empty: Vec<String> = Vec::new();
    empty.first().cloned().expect("a value that is not there")
}

/// Reports a tool error after a wait.
#[tool(task)]
async fn sad() -> Result<String, String> {
    tokio::time::sleep(Duration::from_millis(20)).await;
    Err("nothing to export".into())
}

/// Only runs as a task.
#[tool(task = required)]
async fn only_task() -> String {
    tokio::time::sleep(Duration::from_millis(20)).await;
    "done".into()
}

/// Kept 300 ms.
#[tool(task(ttl_ms = 300, poll_interval_ms = 50))]
async fn short_lived(task: Task) -> String {
    task.status("waiting forever");
    std::future::pending::<()>().await;
    String::new()
}

/// Answers a large result.
#[tool(task)]
async fn big(bytes: usize) -> String {
    tokio::time::sleep(Duration::from_millis(10)).await;
    "x".repeat(bytes)
}

/// Asks many times.
#[tool(task)]
async fn greedy(asks: u32, task: Task) -> Result<String, String> {
    tokio::time::sleep(Duration::from_millis(10)).await;
    for i in 0..asks {
        match task.elicit::<Answer>("q", &format!("question {i}")).await {
            Ok(_) => {}
            Err(e @ TaskError::TooManyInputs(_)) => return Err(e.to_string()),
            Err(e) => return Err(format!("unexpected: {e}")),
        }
    }
    Ok("all answered".into())
}

/// Gives up on its question after a while.
#[tool(task)]
async fn impatient(wait_ms: u64, task: Task) -> String {
    let ask = task.elicit::<Answer>("quick", "Answer fast?");
    match tokio::time::timeout(Duration::from_millis(wait_ms), ask).await {
        Ok(answer) => format!("answered: {:?}", answer.map(|a| a.accepted().map(|a| a.text))),
        Err(_) => {
            task.status("gave up waiting");
            tokio::time::sleep(Duration::from_millis(1500)).await;
            "no answer".into()
        }
    }
}

/// Asks from a task it spawned, waiting on its join handle.
#[tool(task)]
async fn delegating(task: Task) -> Result<String, String> {
    let worker = task.clone();
    let joined = tokio::spawn(async move {
        worker.status("the worker asks");
        worker.elicit::<Answer>("w", "From the worker?").await
    })
    .await
    .map_err(|e| e.to_string())?;
    Ok(format!("worker got {:?}", joined?.accepted().map(|a| a.text)))
}

/// Answers at once: no task is created.
#[tool(task)]
fn instant(task: Task) -> String {
    format!("instant, task: {}", task.is_task())
}

// ---------------------------------------------------------------- helpers

fn caps() -> Value {
    json!({"elicitation": {}, "extensions": {EXT: {}}})
}

fn with_ext(mut params: Value) -> Value {
    params["_meta"] = meta_with(caps());
    params
}

async fn serve(server: Server) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let http = HttpServer::bind(server, "127.0.0.1:0", HttpConfig::default())
        .await
        .expect("bind an ephemeral loopback port");
    let addr = http.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(http.serve_until(async {
        let _ = stopped.await;
    }));
    (addr, stop)
}

/// A request with the standard headers (`Mcp-Name` from the task id or tool name).
async fn rpc(addr: SocketAddr, id: i64, method: &str, params: Value) -> Value {
    let name = params
        .get("taskId")
        .or_else(|| params.get("name"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    http::call(addr, id, method, name.as_deref(), params).await.1
}

async fn create(addr: SocketAddr, tool: &str, arguments: Value) -> String {
    let v = rpc(
        addr,
        1,
        "tools/call",
        with_ext(json!({"name": tool, "arguments": arguments})),
    )
    .await;
    assert_eq!(v["result"]["resultType"], "task", "{v}");
    for key in [
        "result",
        "error",
        "inputRequests",
        "requestState",
        "task",
        "ttl",
        "pollInterval",
    ] {
        assert!(v["result"].get(key).is_none(), "no {key} on CreateTaskResult: {v}");
    }
    v["result"]["taskId"].as_str().unwrap().to_owned()
}

async fn get(addr: SocketAddr, id: &str) -> Value {
    let v = rpc(addr, 2, "tasks/get", with_ext(json!({"taskId": id}))).await;
    assert_eq!(v["result"]["resultType"], "complete", "{v}");
    v["result"].clone()
}

/// Polls until the status is `status` (or terminal), at most 5 s.
async fn until(addr: SocketAddr, id: &str, status: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let task = get(addr, id).await;
        let s = task["status"].as_str().unwrap().to_owned();
        if s == status || ["completed", "failed", "cancelled"].contains(&s.as_str()) {
            return task;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "still {s}, waiting for {status}: {task}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Polls until the task asks `key` (the runner flushes an ask a moment
/// after the handler makes it), at most 5 s.
async fn until_asked(addr: SocketAddr, id: &str, key: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let task = get(addr, id).await;
        if task["status"] == "input_required" && task["inputRequests"].get(key).is_some() {
            return task;
        }
        assert!(tokio::time::Instant::now() < deadline, "never asked {key}: {task}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn answer(text: &str) -> Value {
    json!({"action": "accept", "content": {"text": text}})
}

// ------------------------------------------------------------------ tests

#[tokio::test]
async fn the_whole_lifecycle_over_http() {
    let (addr, _stop) = serve(Server::builder().build().unwrap()).await;

    let discover = rpc(addr, 1, "server/discover", json!({})).await;
    assert_eq!(discover["result"]["capabilities"]["extensions"][EXT], json!({}));

    // Created and visible at once (durable create), working, then completed.
    let id = create(addr, "work", json!({"ms": 300, "label": "export"})).await;
    assert_eq!(id.len(), 32, "128 random bits in hex: {id}");
    let working = get(addr, &id).await;
    assert_eq!(working["status"], "working");
    assert_eq!(working["statusMessage"], "working on export");
    assert_eq!(working["ttlMs"], 3_600_000);
    assert_eq!(working["pollIntervalMs"], 500);
    let done = until(addr, &id, "completed").await;
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["content"][0]["text"], "export done");
    assert!(done["result"]["_meta"]
        .get("io.modelcontextprotocol/related-task")
        .is_none());
    assert!(done["createdAt"].as_str().unwrap().ends_with('Z'));

    // Cancelled after finishing: the same ack, the status stays.
    let ack = rpc(addr, 3, "tasks/cancel", with_ext(json!({"taskId": id}))).await;
    assert_eq!(ack["result"]["resultType"], "complete");
    assert!(ack["result"].get("status").is_none());
    assert_eq!(get(addr, &id).await["status"], "completed");

    // A tool error completes with isError; a protocol error fails with the error.
    let sad = create(addr, "sad", json!({})).await;
    let sad = until(addr, &sad, "completed").await;
    assert_eq!(
        (sad["status"].as_str(), sad["result"]["isError"].as_bool()),
        (Some("completed"), Some(true))
    );
    let broken = create(addr, "broken", json!({})).await;
    let broken = until(addr, &broken, "failed").await;
    assert_eq!(broken["status"], "failed");
    assert_eq!(broken["error"]["code"], -32602);
    assert_eq!(broken["error"]["message"], "the backend refused the job");
    assert!(broken.get("result").is_none());
    let panicky = create(addr, "panicky", json!({})).await;
    let panicky = until(addr, &panicky, "failed").await;
    assert_eq!(panicky["error"]["code"], -32603, "{panicky}");

    // A fast handler answers directly, even for a client with the extension.
    let v = rpc(
        addr,
        4,
        "tools/call",
        with_ext(json!({"name": "instant", "arguments": {}})),
    )
    .await;
    assert_eq!(v["result"]["resultType"], "complete");
    assert_eq!(v["result"]["content"][0]["text"], "instant, task: true");
}

#[tokio::test]
async fn input_required_with_partial_answers_and_keys_never_reused() {
    let (addr, _stop) = serve(Server::builder().build().unwrap()).await;
    let id = create(addr, "interview", json!({})).await;
    let asked = until(addr, &id, "input_required").await;
    let keys: Vec<&String> = asked["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["a", "b"], "{asked}");
    assert_eq!(asked["inputRequests"]["a"]["method"], "elicitation/create");

    // A partial answer (plus an unknown key, ignored): still waiting for the rest.
    let ack = rpc(
        addr,
        5,
        "tasks/update",
        with_ext(json!({"taskId": id, "inputResponses": {"a": answer("one"), "zzz": {"ignored": true}}})),
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete");
    let partial = get(addr, &id).await;
    assert_eq!(partial["status"], "input_required");
    let keys: Vec<&String> = partial["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["b"]);

    // The rest; then the third ask reuses the name `a` under a fresh key.
    rpc(
        addr,
        6,
        "tasks/update",
        with_ext(json!({"taskId": id, "inputResponses": {"b": answer("two")}})),
    )
    .await;
    let third = until_asked(addr, &id, "a-2").await;
    let keys: Vec<&String> = third["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["a-2"], "{third}");
    // An answer to an already answered key is ignored.
    rpc(
        addr,
        7,
        "tasks/update",
        with_ext(json!({"taskId": id, "inputResponses": {"a": answer("again")}})),
    )
    .await;
    assert_eq!(get(addr, &id).await["status"], "input_required");
    rpc(
        addr,
        8,
        "tasks/update",
        with_ext(json!({"taskId": id, "inputResponses": {"a-2": answer("three")}})),
    )
    .await;
    let done = until(addr, &id, "completed").await;
    assert_eq!(
        done["result"]["content"][0]["text"],
        r#"Some("one") Some("two") Some("three")"#
    );
}

#[tokio::test]
async fn a_dropped_ask_is_withdrawn_and_an_ask_from_a_spawned_task_is_seen() {
    let (addr, _stop) = serve(Server::builder().build().unwrap()).await;

    // The ask times out unanswered: it is withdrawn and the task works on.
    let id = create(addr, "impatient", json!({"wait_ms": 300})).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let task = get(addr, &id).await;
        if task["statusMessage"] == "gave up waiting" {
            assert_eq!(task["status"], "working", "{task}");
            assert!(task.get("inputRequests").is_none(), "{task}");
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "still asking: {task}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A late answer to the withdrawn key is ignored.
    rpc(
        addr,
        2,
        "tasks/update",
        with_ext(json!({"taskId": id, "inputResponses": {"quick": answer("late")}})),
    )
    .await;
    let done = until(addr, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "no answer");

    let id = create(addr, "delegating", json!({})).await;
    let asked = until(addr, &id, "input_required").await;
    assert_eq!(asked["statusMessage"], "the worker asks");
    rpc(
        addr,
        3,
        "tasks/update",
        with_ext(json!({"taskId": id, "inputResponses": {"w": answer("hi")}})),
    )
    .await;
    let done = until(addr, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], r#"worker got Some("hi")"#);
}

#[tokio::test]
async fn cancelling_a_running_task_stops_it_and_it_stays_cancelled() {
    let server = Server::builder().build().unwrap();
    let (addr, _stop) = serve(server.clone()).await;
    let before = CLEANED_UP.load(Ordering::SeqCst);
    let id = create(addr, "endless", json!({})).await;
    assert_eq!(get(addr, &id).await["status"], "working");
    let ack = rpc(addr, 3, "tasks/cancel", with_ext(json!({"taskId": id}))).await;
    assert_eq!(
        ack["result"],
        json!({"resultType": "complete", "_meta": ack["result"]["_meta"]})
    );
    assert_eq!(get(addr, &id).await["status"], "cancelled");
    support::eventually("the handler saw the cancellation", || {
        CLEANED_UP.load(Ordering::SeqCst) > before
    })
    .await;
    support::eventually("the task no longer runs", || server.running_tasks() == 0).await;
    // Its Err("stopped") does not overwrite the cancelled status.
    assert_eq!(get(addr, &id).await["status"], "cancelled");
}

/// A task outlives its tool: with the server's last task tool removed
/// while it runs, its owner still follows it to its result.
#[tokio::test]
async fn a_task_outlives_the_last_task_tool() {
    let server = Server::builder().empty().tool::<work>().build().unwrap();
    let (addr, _stop) = serve(server.clone()).await;
    let id = create(addr, "work", json!({"ms": 100, "label": "export"})).await;
    assert!(server.remove_tool("work").expect("the catalog builds"), "removed");
    let done = until(addr, &id, "completed").await;
    assert_eq!(done["status"], "completed", "{done}");
    let discovered = rpc(addr, 3, "server/discover", json!({})).await;
    assert!(
        discovered["result"]["capabilities"]["extensions"].get(EXT).is_some(),
        "the extension is still declared: {discovered}"
    );
}

#[tokio::test]
async fn every_error_code() {
    let (addr, _stop) = serve(Server::builder().build().unwrap()).await;
    let code = |v: &Value| {
        v["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("not an error: {v}"))
    };

    // Unknown id: -32602, for get, update and cancel.
    for (m, p) in [
        ("tasks/get", json!({"taskId": "nope"})),
        ("tasks/update", json!({"taskId": "nope", "inputResponses": {}})),
        ("tasks/cancel", json!({"taskId": "nope"})),
    ] {
        assert_eq!(code(&rpc(addr, 1, m, with_ext(p)).await), -32602, "{m}");
    }
    // Without the extension: -32021 naming it, for the three methods.
    for m in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let v = rpc(addr, 2, m, json!({"taskId": "x", "inputResponses": {}})).await;
        assert_eq!(code(&v), -32021, "{m}");
        assert_eq!(v["error"]["data"]["requiredCapabilities"]["extensions"][EXT], json!({}));
    }
    // Removed methods: -32601.
    for m in ["tasks/result", "tasks/list"] {
        let a = http::post(
            addr,
            &standard_headers(m, None),
            http::rpc(3, m, with_ext(json!({"taskId": "x"}))),
        )
        .await;
        assert_eq!(code(&a.json(Some(m))), -32601, "{m}");
    }
    // Mcp-Name must equal the task id.
    let id = create(addr, "work", json!({"ms": 50, "label": "n"})).await;
    let headers = with_header(
        standard_headers("tasks/get", Some(&id)),
        "mcp-name",
        Some("another-task"),
    );
    let a = http::post(
        addr,
        &headers,
        http::rpc(4, "tasks/get", with_ext(json!({"taskId": id}))),
    )
    .await;
    http::assert_error(&a, Some("tasks/get"), hyper::StatusCode::BAD_REQUEST, -32020, Some(4));
    // A required task tool without the extension: -32021 before it runs.
    let v = rpc(addr, 5, "tools/call", json!({"name": "only_task", "arguments": {}})).await;
    assert_eq!(code(&v), -32021);
    assert_eq!(v["error"]["data"]["requiredCapabilities"]["extensions"][EXT], json!({}));
    // An optional one runs synchronously; the legacy `task` param changes nothing.
    let v = rpc(
        addr,
        6,
        "tools/call",
        json!({"name": "work", "arguments": {"ms": 1, "label": "s"}}),
    )
    .await;
    assert_eq!(v["result"]["content"][0]["text"], "s done");
    let v = rpc(
        addr,
        7,
        "tools/call",
        with_ext(json!({"name": "greet_plain", "arguments": {}, "task": {"ttl": 1000}})),
    )
    .await;
    assert_eq!(v["result"]["resultType"], "complete");
    // Malformed inputResponses: -32602.
    let v = rpc(
        addr,
        8,
        "tasks/update",
        with_ext(json!({"taskId": id, "inputResponses": [1]})),
    )
    .await;
    assert_eq!(code(&v), -32602);
    // A task ask without the extension on a synchronous run: the tool reports -32021.
    let v = rpc(addr, 9, "tools/call", json!({"name": "interview", "arguments": {}})).await;
    assert_eq!(v["result"]["isError"], true, "{v}");
    assert!(v["result"]["content"][0]["text"].as_str().unwrap().contains(EXT));
}

/// An ordinary tool.
#[tool]
fn greet_plain() -> &'static str {
    "hello"
}

#[tokio::test]
async fn expiry_drops_the_task_and_its_work() {
    let server = Server::builder().build().unwrap();
    let (addr, _stop) = serve(server.clone()).await;
    let id = create(addr, "short_lived", json!({})).await;
    let task = get(addr, &id).await;
    assert_eq!(
        (task["ttlMs"].as_u64(), task["pollIntervalMs"].as_u64()),
        (Some(300), Some(50))
    );
    tokio::time::sleep(Duration::from_millis(450)).await;
    let v = rpc(addr, 2, "tasks/get", with_ext(json!({"taskId": id}))).await;
    assert_eq!(v["error"]["code"], -32602, "{v}");
    support::eventually("the expired task no longer runs", || server.running_tasks() == 0).await;
}

#[tokio::test]
async fn limits_on_running_tasks_result_size_and_inputs() {
    let config = TaskConfig {
        max_running_per_principal: 1,
        max_result_bytes: 1000,
        max_inputs: 2,
        ..TaskConfig::default()
    };
    let server = Server::builder().tasks(config).build().unwrap();
    let (addr, _stop) = serve(server).await;

    let first = create(addr, "endless", json!({})).await;
    let v = rpc(
        addr,
        2,
        "tools/call",
        with_ext(json!({"name": "endless", "arguments": {}})),
    )
    .await;
    assert_eq!(v["error"]["code"], -32603, "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("Too many tasks"),
        "{v}"
    );
    rpc(addr, 3, "tasks/cancel", with_ext(json!({"taskId": first}))).await;
    tokio::time::sleep(Duration::from_millis(100)).await;

    let id = create(addr, "big", json!({"bytes": 5000})).await;
    let big = until(addr, &id, "failed").await;
    assert_eq!(big["status"], "failed");
    assert!(
        big["error"]["message"].as_str().unwrap().contains("1000 bytes"),
        "{big}"
    );

    let id = create(addr, "greedy", json!({"asks": 3})).await;
    for key in ["q", "q-2"] {
        let asked = until_asked(addr, &id, key).await;
        assert!(asked["inputRequests"].get(key).is_some(), "{asked}");
        let responses = json!({ key: answer("ok") });
        rpc(
            addr,
            4,
            "tasks/update",
            with_ext(json!({"taskId": id, "inputResponses": responses})),
        )
        .await;
    }
    let done = until(addr, &id, "completed").await;
    assert_eq!(done["result"]["isError"], true);
    assert_eq!(
        done["result"]["content"][0]["text"],
        "the task asked for more than 2 inputs"
    );
}

#[tokio::test]
async fn a_task_belongs_to_the_principal_that_created_it() {
    use mcp_runtime::__private::engine::{handle_request, parse, Message, Scope};
    let server = Server::builder().build().unwrap();
    let as_who = |who: &'static str, id: i64, method: &'static str, params: Value| {
        let server = server.clone();
        async move {
            let line = support::request(id, method, with_ext(params));
            let Ok(Message::Request(request)) = parse(line.as_bytes()) else {
                panic!("not a request")
            };
            let scope = Scope {
                principal: Some(who.to_owned()),
                ..Default::default()
            };
            let reply = handle_request(&server, &request, scope).await;
            let v: Value = serde_json::from_slice(&reply.body).unwrap();
            support::validate_emitted(&v, Some(method));
            v
        }
    };
    let created = as_who(
        "alice",
        1,
        "tools/call",
        json!({"name": "work", "arguments": {"ms": 200, "label": "a"}}),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let alice = as_who("alice", 2, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(alice["result"]["status"], "working");
    for method in ["tasks/get", "tasks/cancel"] {
        let bob = as_who("bob", 3, method, json!({"taskId": id})).await;
        assert_eq!(
            bob["error"]["code"], -32602,
            "another principal sees no such task: {bob}"
        );
    }
    let unknown = as_who(
        "bob",
        4,
        "tasks/get",
        json!({"taskId": "0123456789abcdef0123456789abcdef"}),
    )
    .await;
    assert_eq!(unknown["error"]["message"], bob_message(&unknown));
    assert_eq!(
        as_who("alice", 5, "tasks/get", json!({"taskId": id})).await["result"]["status"],
        "working"
    );
}

fn bob_message(v: &Value) -> String {
    // The same text shape for an unknown id as for another principal's.
    let id = "0123456789abcdef0123456789abcdef";
    assert!(v["error"]["message"].as_str().unwrap().contains(id));
    format!("Failed to retrieve task: task {id:?} not found (unknown, expired, or not yours)")
}

#[tokio::test]
async fn status_notifications_on_subscriptions_listen() {
    let (addr, _stop) = serve(Server::builder().build().unwrap()).await;
    let id = create(addr, "interview", json!({})).await;
    until(addr, &id, "input_required").await;

    // Without the extension, asking for task notifications is -32021.
    let v = rpc(
        addr,
        1,
        "subscriptions/listen",
        json!({"notifications": {"taskIds": [id]}}),
    )
    .await;
    assert_eq!(v["error"]["code"], -32021);

    let mut stream = http::open_stream(
        addr,
        9,
        "subscriptions/listen",
        None,
        with_ext(json!({"notifications": {"taskIds": [id, "not-a-task"]}})),
    )
    .await;
    let ack = stream.next().await;
    assert_eq!(
        ack["params"]["notifications"]["taskIds"],
        json!([id]),
        "only known tasks: {ack}"
    );
    // The task asked for input before the stream opened: the stream starts
    // with it as it is now (a client that relies on the stream would not
    // otherwise hear of the ask).
    let now = stream.next().await;
    assert_eq!(now["method"], "notifications/tasks", "{now}");
    assert_eq!(now["params"]["status"], "input_required", "{now}");
    assert!(now["params"]["inputRequests"]["a"].is_object(), "{now}");
    rpc(
        addr,
        2,
        "tasks/update",
        with_ext(json!({"taskId": id, "inputResponses": {"a": answer("1"), "b": answer("2")}})),
    )
    .await;
    // The stream reads the record when told of a change: `working` may be
    // seen, or already the next ask.
    let mut again = stream.next().await;
    loop {
        assert_eq!(again["method"], "notifications/tasks");
        assert_eq!(again["params"]["taskId"], id.as_str());
        assert_eq!(again["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 9);
        if again["params"]["status"] != "working" {
            break;
        }
        again = stream.next().await;
    }
    assert_eq!(again["params"]["status"], "input_required");
    assert!(again["params"]["inputRequests"]["a-2"].is_object(), "{again}");
    rpc(
        addr,
        3,
        "tasks/update",
        with_ext(json!({"taskId": id, "inputResponses": {"a-2": answer("3")}})),
    )
    .await;
    let mut last = stream.next().await;
    while last["params"]["status"] != "completed" {
        last = stream.next().await;
    }
    assert_eq!(
        last["params"]["result"]["content"][0]["text"],
        r#"Some("1") Some("2") Some("3")"#
    );
}

/// The stream starts with each task as it is now: one that ended before the
/// stream opened is sent with its result (it will not change again).
#[tokio::test]
async fn a_stream_opened_after_the_task_ended_hears_how_it_ended() {
    let (addr, _stop) = serve(Server::builder().build().unwrap()).await;
    let ended = create(addr, "work", json!({"ms": 1, "label": "early"})).await;
    until(addr, &ended, "completed").await;
    let running = create(addr, "endless", json!({})).await;
    let mut stream = http::open_stream(
        addr,
        7,
        "subscriptions/listen",
        None,
        with_ext(json!({"notifications": {"taskIds": [running, ended]}})),
    )
    .await;
    let ack = stream.next().await;
    assert_eq!(
        ack["params"]["notifications"]["taskIds"],
        json!([running, ended]),
        "{ack}"
    );
    let first = stream.next().await;
    assert_eq!(first["params"]["taskId"], running.as_str(), "{first}");
    assert_eq!(first["params"]["status"], "working", "{first}");
    let now = stream.next().await;
    assert_eq!(now["method"], "notifications/tasks", "{now}");
    assert_eq!(now["params"]["taskId"], ended.as_str(), "{now}");
    assert_eq!(now["params"]["status"], "completed", "{now}");
    assert!(now["params"]["result"]["content"][0]["text"].is_string(), "{now}");
    rpc(addr, 3, "tasks/cancel", with_ext(json!({"taskId": running}))).await;
    let next = stream.next().await;
    assert_eq!(next["params"]["taskId"], running.as_str(), "{next}");
    assert_eq!(next["params"]["status"], "cancelled", "{next}");
}

#[tokio::test]
async fn the_lifecycle_over_stdio() {
    let mut c = StdioClient::start(Server::builder().build().unwrap());
    let created = c
        .call(1, "tools/call", with_ext(json!({"name": "interview", "arguments": {}})))
        .await;
    assert_eq!(created["result"]["resultType"], "task");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    async fn poll(c: &mut StdioClient, n: &mut i64, id: &str) -> Value {
        *n += 1;
        c.call(*n, "tasks/get", with_ext(json!({"taskId": id}))).await["result"].clone()
    }
    let mut n = 10;
    let mut task = poll(&mut c, &mut n, &id).await;
    while task["status"] != "input_required" || task["inputRequests"].get("b").is_none() {
        tokio::time::sleep(Duration::from_millis(20)).await;
        task = poll(&mut c, &mut n, &id).await;
    }
    let ack = c
        .call(
            2,
            "tasks/update",
            with_ext(json!({"taskId": id, "inputResponses": {"a": answer("x"), "b": answer("y")}})),
        )
        .await;
    assert_eq!(ack["result"]["resultType"], "complete");
    while task["inputRequests"].get("a-2").is_none() {
        tokio::time::sleep(Duration::from_millis(20)).await;
        task = poll(&mut c, &mut n, &id).await;
    }
    c.call(3, "tasks/cancel", with_ext(json!({"taskId": id}))).await;
    assert_eq!(poll(&mut c, &mut n, &id).await["status"], "cancelled");
    c.close().await.unwrap();
}

#[tokio::test]
async fn ended_tasks_are_kept_less_long_and_bounded_per_caller() {
    let config = TaskConfig {
        finished_ttl_ms: 400,
        max_kept_per_principal: 2,
        ..TaskConfig::default()
    };
    let server = Server::builder().tasks(config).build().unwrap();
    let (addr, _stop) = serve(server).await;
    let started = tokio::time::Instant::now();
    let ids = [
        create(addr, "work", json!({"ms": 30, "label": "a"})).await,
        create(addr, "work", json!({"ms": 30, "label": "b"})).await,
    ];
    for id in &ids {
        let done = until(addr, id, "completed").await;
        // Kept 400 ms past its end, not the hour it was created with.
        let ttl = done["ttlMs"].as_u64().unwrap();
        let lived = u64::try_from(started.elapsed().as_millis()).unwrap();
        assert!(
            (400..=lived + 400).contains(&ttl),
            "ttlMs {ttl} after {lived} ms: {done}"
        );
    }
    // Two records kept: a third task is refused, though none runs.
    let v = rpc(
        addr,
        3,
        "tools/call",
        with_ext(json!({"name": "work", "arguments": {"ms": 1, "label": "c"}})),
    )
    .await;
    assert_eq!(v["error"]["code"], -32603, "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("the server keeps 2 of yours"), "{v}");
    // Once they expire, they are gone and the caller may start tasks again.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let v = rpc(addr, 4, "tasks/get", with_ext(json!({"taskId": ids[0]}))).await;
    assert_eq!(v["error"]["code"], -32602, "{v}");
    create(addr, "work", json!({"ms": 30, "label": "d"})).await;
}

#[tokio::test]
async fn an_ask_nobody_answers_ends_the_task_and_frees_its_place() {
    let config = TaskConfig {
        input_timeout: Duration::from_millis(300),
        max_running_per_principal: 1,
        ..TaskConfig::default()
    };
    let server = Server::builder().tasks(config).build().unwrap();
    let (addr, _stop) = serve(server.clone()).await;
    let id = create(addr, "interview", json!({})).await;
    until_asked(addr, &id, "a").await;
    let done = until(addr, &id, "completed").await;
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"],
        "nobody answered the input request within 300ms"
    );
    assert!(done.get("inputRequests").is_none(), "{done}");
    support::eventually("the task no longer runs", || server.running_tasks() == 0).await;
    create(addr, "work", json!({"ms": 10, "label": "next"})).await;
}

#[tokio::test]
async fn anonymous_callers_are_counted_by_address() {
    let config = TaskConfig {
        max_running_per_principal: 1,
        ..TaskConfig::default()
    };
    let server = Server::builder().tasks(config).build().unwrap();
    let (addr, _stop) = serve(server).await;
    let call = |from: &'static str, id: i64| async move {
        let params = with_ext(json!({"name": "endless", "arguments": {}}));
        http::call_from(from, addr, id, "tools/call", Some("endless"), params)
            .await
            .1
    };
    let first = call("127.0.0.1", 1).await;
    assert_eq!(first["result"]["resultType"], "task", "{first}");
    let again = call("127.0.0.1", 2).await;
    assert!(
        again["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("Too many tasks"),
        "{again}"
    );
    // Another anonymous caller has its own share.
    let other = call("127.0.0.2", 3).await;
    assert_eq!(other["result"]["resultType"], "task", "{other}");
    for v in [first, other] {
        let id = v["result"]["taskId"].as_str().unwrap().to_owned();
        rpc(addr, 4, "tasks/cancel", with_ext(json!({"taskId": id}))).await;
    }
}

/// Says how far it got at every poll, for ever, past its timeout.
#[tool(task, timeout = "300ms")]
async fn chatty(task: Task) -> String {
    let mut step = 0u64;
    loop {
        step = step.wrapping_add(1);
        task.status(format!("step {step}"));
        tokio::task::yield_now().await;
    }
}

// Two threads: were the runner never to yield, the test would still see it fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_says_something_at_every_poll_still_times_out() {
    let server = Server::builder().build().unwrap();
    let (addr, _stop) = serve(server.clone()).await;
    let id = create(addr, "chatty", json!({})).await;
    let ended = until(addr, &id, "failed").await;
    assert_eq!(
        ended["error"]["message"], "Tool `chatty` timed out after 300ms and was stopped",
        "{ended}"
    );
    support::eventually("the task no longer runs", || server.running_tasks() == 0).await;
}

/// Works for a minute, past its timeout.
#[tool(task, timeout = "300ms")]
async fn overdue(task: Task) -> String {
    task.status("working past the deadline");
    tokio::time::sleep(Duration::from_secs(60)).await;
    "never".into()
}

#[tokio::test]
async fn a_task_past_its_tools_timeout_fails_and_frees_its_place() {
    let server = Server::builder().build().unwrap();
    let (addr, _stop) = serve(server.clone()).await;
    let id = create(addr, "overdue", json!({})).await;
    let ended = until(addr, &id, "failed").await;
    assert_eq!(ended["status"], "failed", "{ended}");
    assert_eq!(
        ended["error"]["message"],
        "Tool `overdue` timed out after 300ms and was stopped"
    );
    support::eventually("the task no longer runs", || server.running_tasks() == 0).await;
}
