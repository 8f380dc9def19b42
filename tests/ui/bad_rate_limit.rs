use mcp_runtime::prelude::*;

/// No period.
#[tool(rate_limit = "10")]
fn a() -> String {
    String::new()
}

/// Zero calls.
#[tool(rate_limit = "0/s")]
fn b() -> String {
    String::new()
}

/// A burst of nothing.
#[tool(rate_limit = "10/s burst 0")]
fn c() -> String {
    String::new()
}

fn main() {}
