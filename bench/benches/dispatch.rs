//! The dispatch path, bytes in → bytes out, through the public API only:
//! the framing's `parse` of the request bytes, then the dispatcher's
//! `handle_request(&server, &request, Scope::default())`, whose `Reply.body`
//! is the encoded response. No transport.
//!
//! - `dispatch/tools_call_echo`: one `tools/call` of `echo`;
//! - `dispatch/tools_list_100`: `tools/list` of a server holding 100 tools
//!   added with `ToolEntry::dynamic` through the builder (one page);
//! - `mrtr/first_call_seal`, `mrtr/retry_unseal`, `mrtr/round`: a `#[tool]`
//!   that elicits through `Input`; the first call seals a `requestState`, the
//!   retry with `inputResponses` and that state unseals it and completes;
//!   `round` is both, extracting the state from the first answer;
//! - `tasks/create_get_complete`: a `#[tool(task)]` call from a client with
//!   the tasks extension (the handler yields once, so the call becomes a
//!   task in the in-memory store), then `tasks/get` until it is `completed`;
//! - `startup/build`: `Server::builder().build().expect("the server builds")`, which derives the schemas of
//!   the `#[tool]`s registered in this binary (the five below).
//!
//! `cargo bench -p mcp-bench --bench dispatch`.

use criterion::{criterion_group, criterion_main, Criterion};
use mcp_runtime::__private::engine::{self, handle_request, Message, Scope};
use mcp_runtime::prelude::*;
use mcp_runtime::protocol::Tool;
use mcp_runtime::ToolEntry;
use serde_json::{json, Value};
use std::hint::black_box;

/// Echoes its text back.
#[tool(read_only, idempotent)]
fn echo(
    /// The text to echo.
    text: String,
) -> String {
    text
}

/// A confirmation form.
#[mcp_runtime::form]
struct Confirmation {
    /// Go ahead?
    ok: bool,
    /// A note for the record.
    note: Option<String>,
}

/// Deletes an item after asking the user to confirm.
#[tool(requires(elicitation))]
fn delete_item(
    /// The item to delete.
    item: String,
    input: Input,
) -> Flow<String> {
    match input.elicit::<Confirmation>("confirm", "Really delete it?")? {
        Elicited::Accepted(c) if c.ok => Ok(format!("deleted {item}")),
        _ => Ok(format!("kept {item}")),
    }
}

/// A line of an order.
#[mcp_runtime::schema]
struct Line {
    /// What.
    sku: String,
    /// How many.
    quantity: u32,
}

/// A delivery speed.
#[mcp_runtime::schema]
#[serde(rename_all = "lowercase")]
enum Speed {
    /// Days.
    Standard,
    /// Tomorrow.
    Express,
}

/// Prices an order.
#[tool(read_only)]
fn price_order(
    /// The lines.
    lines: Vec<Line>,
    /// The delivery speed.
    speed: Speed,
    /// A coupon code.
    coupon: Option<String>,
) -> String {
    format!(
        "{} lines, {}, coupon {}",
        lines.len(),
        matches!(speed, Speed::Express),
        coupon.is_some()
    )
}

/// Statistics of a text.
#[mcp_runtime::schema]
struct Stats {
    /// Words.
    words: usize,
    /// Characters.
    characters: usize,
}

/// Counts the words and characters of a text.
#[tool(read_only, idempotent)]
fn text_stats(text: String) -> Json<Stats> {
    Json(Stats {
        words: text.split_whitespace().count(),
        characters: text.chars().count(),
    })
}

/// Yields once, then answers: the smallest task.
#[tool(task)]
async fn quick_job(n: u32) -> String {
    tokio::task::yield_now().await;
    format!("job {n} done")
}

fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps
    })
}

fn request_bytes(method: &str, params: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
        .to_string()
        .into_bytes()
}

async fn dispatch(server: &Server, bytes: &[u8]) -> Vec<u8> {
    match engine::parse(bytes) {
        Ok(Message::Request(request)) => handle_request(server, &request, Scope::default()).await.body,
        _ => panic!("not a request"),
    }
}

fn result(body: &[u8]) -> Value {
    let v: Value = serde_json::from_slice(body).expect("JSON");
    assert!(v.get("error").is_none(), "an error: {v}");
    v["result"].clone()
}

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    // tools/call
    let server = Server::builder()
        .request_state_keys(vec![[7; 32]])
        .build()
        .expect("the server builds");
    let call = request_bytes(
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hello"}, "_meta": meta(json!({}))}),
    );
    let out = rt.block_on(dispatch(&server, &call));
    assert_eq!(result(&out)["content"][0]["text"], "hello");
    let mut group = c.benchmark_group("dispatch");
    group.bench_function("tools_call_echo", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(dispatch(&server, black_box(&call)).await) })
    });

    // tools/list with 100 tools
    let mut builder = Server::builder().empty();
    for i in 0..100 {
        let tool = Tool {
            name: format!("tool_{i:03}"),
            description: Some(format!("Tool number {i}: echoes its text.")),
            input_schema: json!({
                "type": "object",
                "properties": {"text": {"type": "string", "description": "The text."}},
                "required": ["text"],
                "additionalProperties": false
            }),
            ..Default::default()
        };
        builder = builder.tool_entry(ToolEntry::dynamic(tool, |args, _ctx| async move {
            args["text"].as_str().unwrap_or_default().to_owned()
        }));
    }
    let listing = builder
        .request_state_keys(vec![[7; 32]])
        .build()
        .expect("the server builds");
    let list = request_bytes("tools/list", json!({"_meta": meta(json!({}))}));
    let out = rt.block_on(dispatch(&listing, &list));
    assert_eq!(result(&out)["tools"].as_array().map(Vec::len), Some(100));
    group.bench_function("tools_list_100", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(dispatch(&listing, black_box(&list)).await) })
    });
    group.finish();

    // MRTR: seal, then unseal
    let caps = json!({"elicitation": {}});
    let first = request_bytes(
        "tools/call",
        json!({"name": "delete_item", "arguments": {"item": "x"}, "_meta": meta(caps.clone())}),
    );
    let out = rt.block_on(dispatch(&server, &first));
    let r1 = result(&out);
    assert_eq!(r1["resultType"], "input_required");
    let state = r1["requestState"].as_str().expect("a requestState").to_owned();
    let retry_for = |state: &str| {
        request_bytes(
            "tools/call",
            json!({
                "name": "delete_item",
                "arguments": {"item": "x"},
                "_meta": meta(caps.clone()),
                "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}},
                "requestState": state
            }),
        )
    };
    let retry = retry_for(&state);
    let out = rt.block_on(dispatch(&server, &retry));
    let r2 = result(&out);
    assert_eq!(r2["resultType"], "complete");
    assert_eq!(r2["content"][0]["text"], "deleted x");

    let mut group = c.benchmark_group("mrtr");
    group.bench_function("first_call_seal", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(dispatch(&server, black_box(&first)).await) })
    });
    group.bench_function("retry_unseal", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(dispatch(&server, black_box(&retry)).await) })
    });
    group.bench_function("round", |b| {
        b.to_async(&rt).iter(|| async {
            let out = dispatch(&server, &first).await;
            let r1: Value = serde_json::from_slice(&out).unwrap();
            let retry = retry_for(r1["result"]["requestState"].as_str().unwrap());
            black_box(dispatch(&server, &retry).await)
        })
    });
    group.finish();

    // tasks: create, poll, complete
    let ext = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let create = request_bytes(
        "tools/call",
        json!({"name": "quick_job", "arguments": {"n": 1}, "_meta": meta(ext.clone())}),
    );
    let get_for = |id: &str| request_bytes("tasks/get", json!({"taskId": id, "_meta": meta(ext.clone())}));
    let lifecycle = || async {
        let created = result(&dispatch(&server, &create).await);
        assert_eq!(created["resultType"], "task", "{created}");
        let get = get_for(created["taskId"].as_str().unwrap_or_default());
        loop {
            let task = result(&dispatch(&server, &get).await);
            if task["status"] == "completed" {
                return task;
            }
            tokio::task::yield_now().await;
        }
    };
    let done = rt.block_on(lifecycle());
    assert_eq!(done["result"]["content"][0]["text"], "job 1 done");
    let mut group = c.benchmark_group("tasks");
    group.bench_function("create_get_complete", |b| {
        b.to_async(&rt).iter(|| async { black_box(lifecycle().await) })
    });
    group.finish();

    // start-up: schema generation of the registered tools
    let mut group = c.benchmark_group("startup");
    group.bench_function("build", |b| {
        b.iter(|| black_box(Server::builder().build().expect("the server builds")))
    });
    group.finish();
}

criterion_group!(dispatch_benches, benches);
criterion_main!(dispatch_benches);
