use mcp_runtime::prelude::*;
use mcp_runtime::testing::TestClient;

/**
 * Adds two numbers.
 *
 * Both may be negative.
 */
#[tool]
fn add(
    /**
     * The first number.
     */
    a: i64,
    /** The second number. */
    b: i64,
    /// # Offset
    /// Added last.
    c: Option<i64>,
) -> String {
    format!("{}", a + b + c.unwrap_or(0))
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let server = Server::builder().empty().tool::<add>().build().expect("builds");
    let client = TestClient::new(&server);
    let tools = client.list_tools().await.expect("served");
    let tool = serde_json::to_value(&tools[0]).expect("json");
    assert_eq!(tool["description"], "Adds two numbers.\n\nBoth may be negative.", "{tool}");
    let properties = &tool["inputSchema"]["properties"];
    assert_eq!(properties["a"]["description"], "The first number.", "{tool}");
    assert_eq!(properties["b"]["description"], "The second number.", "{tool}");
    // A heading first gives the property its title (schemars' rule).
    assert_eq!(properties["c"]["title"], "Offset", "{tool}");
    assert_eq!(properties["c"]["description"], "Added last.", "{tool}");
}
