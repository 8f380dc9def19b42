use mcp_runtime::tool;

#[tool(read_only, nmae = "typo")]
fn typo() -> String {
    String::new()
}

fn main() {}
