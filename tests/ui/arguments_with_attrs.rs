use mcp_runtime::prelude::*;

#[mcp_runtime::schema]
struct Query {
    text: String,
}

#[tool]
fn search(#[arguments] #[serde(default)] query: Query) -> String {
    query.text
}

#[tool]
fn lookup(#[arguments] #[arg] query: Query) -> String {
    query.text
}

fn main() {}
