use mcp_runtime::prelude::*;

/// A predicate is a function's path, not a value.
#[tool(visible_if = "staff")]
fn payroll() -> String {
    String::new()
}

/// Takes the wrong argument.
fn by_name(name: &str) -> bool {
    name == "staff"
}

/// A predicate takes the caller and says yes or no.
#[prompt(visible_if = by_name)]
fn draft() -> String {
    String::new()
}

fn main() {}
