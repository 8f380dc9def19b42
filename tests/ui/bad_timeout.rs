use mcp_runtime::prelude::*;

/// No unit.
#[tool(timeout = "30")]
async fn a() -> String {
    String::new()
}

/// Zero.
#[tool(timeout = "0s")]
async fn b() -> String {
    String::new()
}

fn main() {}
