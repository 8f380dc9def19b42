use mcp_runtime::tool;

#[tool]
struct NotAFunction;

fn main() {}
