//! A failing task store is the operator's business (issue 26, defect 8):
//! what it says (a Redis address with its password, a record's text) goes
//! to the log, and the client gets a generic -32603.

mod support;

use mcp_runtime::prelude::*;
use mcp_runtime::{MemoryTaskStore, StoreError, StoreFuture, TaskChange, TaskConfig, TaskRecord, TaskStore};
use serde_json::{json, Value};
use std::time::Duration;
use support::{meta_with, StdioClient};

const EXT: &str = "io.modelcontextprotocol/tasks";
const SECRET: &str = "hunter2";

/// Works a while, as a task.
#[tool(task)]
async fn slow(task: Task) -> Result<String, String> {
    task.status("working");
    tokio::time::sleep(Duration::from_millis(50)).await;
    Ok("done".into())
}

/// A store whose every operation fails, saying where it could not connect.
struct Down;

fn down() -> StoreError {
    StoreError::Unavailable(format!("redis://:{SECRET}@10.0.0.5:6379: connection refused"))
}

impl TaskStore for Down {
    fn create(&self, _record: TaskRecord) -> StoreFuture<'_, ()> {
        Box::pin(async { Err(down()) })
    }
    fn get<'a>(&'a self, _id: &'a str) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(async { Err(down()) })
    }
    fn update<'a>(&'a self, _id: &'a str, _change: TaskChange<'a>) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(async { Err(down()) })
    }
    fn changed<'a>(&'a self, _id: &'a str, _seen: u64) -> StoreFuture<'a, ()> {
        Box::pin(async { Err(down()) })
    }
}

fn tasks_meta() -> Value {
    meta_with(json!({"extensions": {EXT: {}}}))
}

fn assert_generic(v: &Value) {
    assert_eq!(v["error"]["code"], -32603, "{v}");
    let text = v.to_string();
    assert!(
        !text.contains(SECRET) && !text.contains("10.0.0.5"),
        "the store's own words reach the client: {text}"
    );
}

#[tokio::test]
async fn store_errors_reach_the_log_not_the_client() {
    let server = Server::builder()
        .empty()
        .tool::<slow>()
        .task_store(std::sync::Arc::new(Down))
        .build()
        .expect("the server builds");
    let mut c = StdioClient::start(server);
    let created = c
        .call(
            1,
            "tools/call",
            json!({"_meta": tasks_meta(), "name": "slow", "arguments": {}}),
        )
        .await;
    assert_generic(&created);
    for (id, method, params) in [
        (2, "tasks/get", json!({"taskId": "0123"})),
        (3, "tasks/cancel", json!({"taskId": "0123"})),
        (4, "tasks/update", json!({"taskId": "0123", "inputResponses": {}})),
    ] {
        let mut params = params;
        params["_meta"] = tasks_meta();
        let v = c.call(id, method, params).await;
        assert_generic(&v);
    }
    c.close().await.unwrap();
}

/// Done at once, as a task; each run counted.
#[tool(task)]
fn instant() -> String {
    RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    "done at once".into()
}

static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A 2025-11-25 call asking for a task, whose tool finished before the
/// task could be stored: its result is answered as a plain call's, not
/// lost behind a store error (the tool ran once, and its effects with it).
#[tokio::test]
async fn a_finished_call_keeps_its_result_when_its_task_cannot_be_stored() {
    let server = Server::builder()
        .empty()
        .tool::<instant>()
        .task_store(std::sync::Arc::new(Down))
        .build()
        .expect("the server builds");
    let mut c = StdioClient::start(server);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tasks": {"requests": {"tools": {"call": {}}}}},
        "clientInfo": {"name": "t", "version": "1"},
    }});
    c.send_raw(&init.to_string()).await;
    let answer = c.recv_legacy().await;
    assert!(answer["result"]["capabilities"]["tasks"].is_object(), "{answer}");
    c.send_raw(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "instant", "arguments": {}, "task": {"ttl": 60000}}});
    c.send_raw(&call.to_string()).await;
    let result = c.recv_legacy().await;
    assert_eq!(result["result"]["content"][0]["text"], "done at once", "{result}");
    assert_eq!(RUNS.load(std::sync::atomic::Ordering::SeqCst), 1);
    c.close().await.unwrap();
}

/// Works a moment, as a task.
#[tool(task)]
async fn quick() -> String {
    tokio::time::sleep(Duration::from_millis(10)).await;
    "done".into()
}

/// A store that never records how a task ended (its updates to a final
/// status fail), and keeps everything else.
struct EndsUnrecorded(MemoryTaskStore);

impl TaskStore for EndsUnrecorded {
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, ()> {
        self.0.create(record)
    }
    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRecord>> {
        self.0.get(id)
    }
    fn update<'a>(&'a self, id: &'a str, change: TaskChange<'a>) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(async move {
            let Some(mut record) = self.0.get(id).await? else {
                return Ok(None);
            };
            if change(&mut record) && record.status.is_terminal() {
                return Err(down());
            }
            self.0.update(id, change).await
        })
    }
    fn changed<'a>(&'a self, id: &'a str, seen: u64) -> StoreFuture<'a, ()> {
        self.0.changed(id, seen)
    }
}

/// A task whose end the store could not record counts towards its
/// caller's kept records until its record expires, not for ever: past its
/// time to live, the caller may start another. (The runner tries to record
/// the end 8 times over 14 s first.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_end_was_not_recorded_is_counted_until_its_record_expires() {
    let server = Server::builder()
        .empty()
        .tool::<quick>()
        .task_store(std::sync::Arc::new(EndsUnrecorded(MemoryTaskStore::new())))
        .tasks(TaskConfig {
            ttl_ms: 16_000,
            max_kept_per_principal: 1,
            ..TaskConfig::default()
        })
        .build()
        .expect("the server builds");
    let mut c = StdioClient::start(server);
    let call = json!({"_meta": tasks_meta(), "name": "quick", "arguments": {}});
    let first = c.call(1, "tools/call", call.clone()).await;
    assert_eq!(first["result"]["resultType"], "task", "{first}");
    let created = std::time::Instant::now();
    let second = c.call(2, "tools/call", call.clone()).await;
    assert!(
        second.to_string().contains("Too many tasks"),
        "one kept record per caller: {second}"
    );
    // The runner gives up recording the end after about 14 s; the record
    // expires 16 s after it was created.
    tokio::time::sleep(Duration::from_millis(16_500).saturating_sub(created.elapsed())).await;
    let third = c.call(3, "tools/call", call).await;
    assert_eq!(
        third["result"]["resultType"], "task",
        "the expired record no longer counts: {third}"
    );
    c.close().await.unwrap();
}
