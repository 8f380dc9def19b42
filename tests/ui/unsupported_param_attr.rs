use mcp_runtime::tool;

#[tool]
fn tagged(#[allow(unused)] value: String) -> String {
    value
}

fn main() {}
