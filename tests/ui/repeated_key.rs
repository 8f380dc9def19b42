use mcp_runtime::prelude::*;

/// A key given twice is an error, not a silent overwrite.
#[tool(name = "first", title = "A", name = "second", requires(sampling, sampling))]
fn repeated() -> String {
    String::new()
}

/// The same for resources and prompts.
#[resource(uri = "docs://a", uri = "docs://b")]
fn doc() -> String {
    String::new()
}

#[prompt(title = "A", title = "B")]
fn greet() -> String {
    String::new()
}

fn main() {}
