use mcp_runtime::tool;

struct Plain {
    value: i32,
}

#[tool]
fn takes_plain(plain: Plain) -> String {
    plain.value.to_string()
}

fn main() {}
