use mcp_runtime::prelude::*;

/// Takes a Task but is not a task tool.
#[tool]
async fn export(month: String, task: Task) -> String {
    task.status("exporting");
    month
}

/// Unknown task keys and a zero time to live.
#[tool(task(forever, ttl_ms = 0))]
async fn archive() -> String {
    String::new()
}

/// A task mode that does not exist.
#[tool(task = sometimes)]
async fn purge() -> String {
    String::new()
}

fn main() {}
