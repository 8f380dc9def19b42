use mcp_runtime::tool;

#[tool]
fn add((a, b): (i32, i32)) -> String {
    (a + b).to_string()
}

fn main() {}
