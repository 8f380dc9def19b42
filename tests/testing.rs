//! The in-process test client (`mcp_runtime::testing::TestClient`): typed
//! calls, an MRTR flow answered by closures (rounds counted), a task
//! followed to its end, captured notifications, paginated lists, prompts,
//! and resources; and the same over a 2025-11-25 session.

use mcp_runtime::prelude::*;
use mcp_runtime::testing::TestClient;
use mcp_runtime::Calls;
use mcp_runtime::ToolEntry;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A name.
#[mcp_runtime::form]
struct Who {
    /// Your name.
    name: String,
}

/// Asks for a name, then for the client's roots; greets.
#[tool]
fn introduce(input: Input) -> Flow<String> {
    let who = input.elicit::<Who>("who", "Who are you?")?.accepted().map(|w| w.name);
    let roots = input.roots("roots")?;
    Ok(format!("{} with {} root(s)", who.unwrap_or_default(), roots.len()))
}

/// Counts to three with progress.
#[tool]
async fn count(ctx: Context) -> String {
    for i in 1..=3 {
        ctx.progress(f64::from(i), Some(3.0), None);
    }
    ctx.log(LoggingLevel::Info, None, &"counted");
    "3".into()
}

/// Asks inside a task.
#[tool(task)]
async fn confirm_in_task(task: Task) -> Result<String, String> {
    tokio::task::yield_now().await;
    let ok = task
        .elicit::<Who>("who", "Who confirms?")
        .await?
        .accepted()
        .map(|w| w.name);
    Ok(format!("confirmed by {}", ok.unwrap_or_default()))
}

/// A greeting prompt.
#[prompt]
fn salute(name: String) -> String {
    format!("Salute {name}.")
}

/// A static note.
#[resource(uri = "notes://today", mime_type = "text/plain")]
fn today() -> &'static str {
    "nothing planned"
}

/// The methods of the notifications a client captured, in order.
fn methods(client: &TestClient) -> Vec<String> {
    client
        .notifications()
        .iter()
        .map(|n| n["method"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn an_mrtr_flow_answered_by_closures_counts_its_rounds() {
    let server = Server::builder().build().unwrap();
    let asked = Arc::new(AtomicUsize::new(0));
    let seen = asked.clone();
    let client = TestClient::new(&server)
        .on_elicit(move |params| {
            seen.fetch_add(1, Ordering::SeqCst);
            assert_eq!(params["message"], "Who are you?");
            json!({"action": "accept", "content": {"name": "Ada"}})
        })
        .on_roots(|_| json!({"roots": [{"uri": "file:///work", "name": "work"}]}));
    let result = client.call_tool("introduce", json!({})).await.unwrap();
    assert_eq!(result.text(), "Ada with 1 root(s)");
    assert_eq!(client.rounds(), 2, "one round per ask, asked in turn");
    assert_eq!(asked.load(Ordering::SeqCst), 1);

    // Without an answer for an ask the client cannot make, the server says which capability is missing.
    let bare = TestClient::new(&server);
    let e = bare.call_tool("introduce", json!({})).await.unwrap_err();
    assert_eq!(e.code().0, -32021);
}

#[tokio::test]
async fn notifications_are_captured_and_tasks_followed() {
    let server = Server::builder().build().unwrap();
    let client = TestClient::new(&server)
        .with_progress()
        .with_log_level(LoggingLevel::Debug);
    assert_eq!(client.call_tool("count", json!({})).await.unwrap().text(), "3");
    let methods = methods(&client);
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/progress",
            "notifications/progress",
            "notifications/message"
        ]
    );

    let tasks = TestClient::new(&server)
        .with_tasks()
        .on_elicit(|_| json!({"action": "accept", "content": {"name": "Lin"}}));
    let result = tasks.call_tool("confirm_in_task", json!({})).await.unwrap();
    assert_eq!(result.text(), "confirmed by Lin");
    assert_eq!(tasks.rounds(), 1);
}

#[tokio::test]
async fn lists_prompts_and_resources() {
    let mut builder = Server::builder().page_size(2);
    for i in 0..5 {
        let tool = mcp_runtime::protocol::Tool {
            name: format!("extra_{i}"),
            input_schema: json!({"type": "object"}),
            ..Default::default()
        };
        builder = builder.tool_entry(mcp_runtime::ToolEntry::dynamic(tool, |_, _| async { "ok" }));
    }
    let server = builder.build().unwrap();
    let client = TestClient::new(&server);
    let tools = client.list_tools().await.unwrap();
    assert!(tools.len() > 5, "every page: {}", tools.len());
    assert!(tools.iter().any(|t| t.name == "extra_4"));
    assert!(client.list_prompts().await.unwrap().iter().any(|p| p.name == "salute"));
    assert!(client
        .list_resources()
        .await
        .unwrap()
        .iter()
        .any(|r| r.uri == "notes://today"));
    let prompt = client.get_prompt("salute", json!({"name": "Kim"})).await.unwrap();
    assert_eq!(prompt.messages.len(), 1);
    let read = client.read_resource("notes://today").await.unwrap();
    assert_eq!(read.contents.len(), 1);
    let e = client.call_tool("no_such_tool", json!({})).await.unwrap_err();
    assert_eq!(e.code().0, -32602);
}

#[tokio::test]
async fn the_same_client_speaks_2025_11_25() {
    let server = Server::builder().build().unwrap();
    let client = TestClient::new(&server)
        .legacy()
        .with_progress()
        .with_log_level(LoggingLevel::Debug)
        .on_elicit(|_| json!({"action": "accept", "content": {"name": "Lin"}}))
        .on_roots(|_| json!({"roots": []}));
    // The asks arrive as server-to-client requests, answered by the closures.
    assert_eq!(
        client.call_tool("introduce", json!({})).await.unwrap().text(),
        "Lin with 0 root(s)"
    );
    assert_eq!(client.rounds(), 2);
    assert_eq!(client.call_tool("count", json!({})).await.unwrap().text(), "3");
    let methods = methods(&client);
    assert!(
        methods.iter().filter(|m| *m == "notifications/progress").count() == 3,
        "{methods:?}"
    );
    assert!(methods.contains(&"notifications/message".to_owned()), "{methods:?}");
    // A task tool runs synchronously for a 2025-11-25 session.
    let confirmed = client.call_tool("confirm_in_task", json!({})).await.unwrap();
    assert_eq!(confirmed.text(), "confirmed by Lin");
    assert!(client.list_tools().await.unwrap().iter().any(|t| t.name == "introduce"));
}

/// Adds a tool at run time, removes a prompt and says a resource changed:
/// the changes a listening client hears of.
fn change_everything(server: &Server) {
    let tool: mcp_runtime::protocol::Tool = serde_json::from_value(json!({
        "name": "added_later", "inputSchema": {"type": "object"}
    }))
    .unwrap();
    server
        .add_tool(ToolEntry::dynamic(tool, |_args, _ctx| async { "added" }))
        .unwrap();
    assert!(server.remove_prompt("salute").unwrap());
    server.notify_resource_updated("notes://today");
}

#[tokio::test]
async fn list_changes_and_resource_updates_are_captured_after_listen() {
    for legacy in [false, true] {
        let server = Server::builder().build().unwrap();
        let client = TestClient::new(&server);
        let client = if legacy { client.legacy() } else { client };
        client.listen(&["notes://today"]).await.unwrap();
        change_everything(&server);
        for method in [
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
            "notifications/resources/updated",
        ] {
            let heard = client.wait_for_notifications(method, 1).await;
            assert!(heard.is_ok(), "legacy {legacy}: {heard:?}; got {:?}", methods(&client));
        }
        let updated = client
            .wait_for_notifications("notifications/resources/updated", 1)
            .await
            .unwrap();
        assert_eq!(updated[0]["params"]["uri"], "notes://today");
        assert!(client
            .list_tools()
            .await
            .unwrap()
            .iter()
            .any(|t| t.name == "added_later"));
    }
}

/// Works 600 ms as a task whose record asks to be polled every 200 ms.
#[tool(task(poll_interval_ms = 200))]
async fn steady_job() -> String {
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    "steady".into()
}

/// A connection that counts the polls of the calls made through it.
struct Counting<'a> {
    client: &'a TestClient,
    polls: AtomicUsize,
}

impl Calls for Counting<'_> {
    async fn send(&self, method: &str, params: serde_json::Value) -> Result<serde_json::Value, McpError> {
        if method == "tasks/get" {
            self.polls.fetch_add(1, Ordering::SeqCst);
        }
        self.client.send(method, params).await
    }

    async fn answer(&self, asks: &serde_json::Value) -> Result<serde_json::Map<String, serde_json::Value>, McpError> {
        self.client.answer(asks).await
    }
}

/// Following a task polls it as often as its `pollIntervalMs` says, not
/// faster: a 600 ms task polled every 200 ms takes about four polls (from
/// 5 ms, doubling to 250 ms, it took nine).
#[tokio::test]
async fn a_task_is_polled_as_often_as_it_asks() {
    let server = Server::builder().build().unwrap();
    let client = TestClient::new(&server).with_tasks();
    let counting = Counting {
        client: &client,
        polls: AtomicUsize::new(0),
    };
    let result = counting.call_tool("steady_job", json!({})).await.unwrap();
    assert_eq!(result.text(), "steady");
    let polls = counting.polls.load(Ordering::SeqCst);
    assert!(
        (2..=6).contains(&polls),
        "{polls} polls of a 600 ms task asking for 200 ms"
    );
}
