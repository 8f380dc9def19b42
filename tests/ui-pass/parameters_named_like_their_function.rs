use mcp_runtime::prelude::*;
use mcp_runtime::testing::TestClient;
use serde_json::json;

/// Searches for `query`: the argument is named like the function.
#[tool]
fn query(query: String) -> String {
    format!("results for {query}")
}

/// The same, as an async tool.
#[tool]
async fn lookup(lookup: u32) -> String {
    format!("entry {lookup}")
}

/// A ticket, by its number: the template's variable is named like it.
#[resource(uri_template = "tickets://{ticket}")]
fn ticket(ticket: u64) -> String {
    format!("ticket {ticket}")
}

/// A prompt about a topic, named like it.
#[prompt]
fn topic(topic: String) -> String {
    format!("Tell me about {topic}.")
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let server = Server::builder()
        .empty()
        .tool::<query>()
        .tool::<lookup>()
        .resource::<ticket>()
        .prompt::<topic>()
        .build()
        .expect("builds");
    let client = TestClient::new(&server);
    let found = client.call_tool("query", json!({"query": "rust"})).await.expect("served");
    assert_eq!(found.text(), "results for rust");
    let entry = client.call_tool("lookup", json!({"lookup": 7})).await.expect("served");
    assert_eq!(entry.text(), "entry 7");
    let read = client.read_resource("tickets://42").await.expect("served");
    assert_eq!(serde_json::to_value(&read).expect("json")["contents"][0]["text"], "ticket 42");
    let prompt = client.get_prompt("topic", json!({"topic": "tides"})).await.expect("served");
    let text = serde_json::to_value(&prompt).expect("json")["messages"][0]["content"]["text"].clone();
    assert_eq!(text, "Tell me about tides.");
}
