use mcp_runtime::tool;

#[tool]
fn echo(text: &str) -> String {
    text.to_owned()
}

fn main() {}
