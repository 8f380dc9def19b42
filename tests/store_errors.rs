//! A failing task store is the operator's business (issue 26, defect 8):
//! what it says (a Redis address with its password, a record's text) goes
//! to the log, and the client gets a generic -32603.

mod support;

use mcp_runtime::prelude::*;
use mcp_runtime::{StoreError, StoreFuture, TaskChange, TaskRecord, TaskStore};
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
