use mcp_runtime::tool;

#[tool]
async fn count() -> i32 {
    1
}

fn main() {}
