use mcp_runtime::tool;

#[tool]
fn generic<T: std::fmt::Display>(value: String) -> String {
    value
}

fn main() {}
