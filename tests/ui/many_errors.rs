use mcp_runtime::prelude::*;

/// Every problem of this item is reported in one compile.
#[tool(name = "has space", frobnicate, read_only = "yes")]
fn many<T>(&self, (a, b): (i32, i32), text: &str, #[bogus] extra: String) -> impl std::fmt::Display {
    "x"
}

fn main() {}
