use mcp_runtime::prelude::*;

/// Hashes a file.
#[tool(blocking)]
async fn hash(path: String) -> String {
    path
}

fn main() {}
