use mcp_runtime::tool;

struct Report {
    lines: usize,
}

#[tool]
fn report() -> Report {
    Report { lines: 0 }
}

fn main() {}
