use mcp_runtime::prelude::*;

/// Scopes must be scope-tokens, each once.
#[tool(scopes("tickets read", "tickets:write", "tickets:write", ""))]
fn open_ticket() -> String {
    String::new()
}

/// On prompts too.
#[prompt(scopes("a\"b"))]
fn draft() -> String {
    String::new()
}

fn main() {}
