use mcp_runtime::prelude::*;

/// Only `model` and `app`, each once, and at least one.
#[tool(ui = "ui://views/main", visibility(model, user, model))]
fn shown() -> String {
    String::new()
}

/// An empty list says nothing.
#[tool(visibility())]
fn nobody() -> String {
    String::new()
}

/// A view is a `ui://` resource.
#[tool(ui = "https://example.com/view")]
fn web() -> String {
    String::new()
}

fn main() {}
