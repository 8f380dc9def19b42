use mcp_runtime::tool;

#[tool(name = "has space")]
fn spaced() -> String {
    String::new()
}

fn main() {}
