use mcp_runtime::tool;

struct Database;

#[tool]
fn query(#[extract] _db: Database, sql: String) -> String {
    sql
}

fn main() {}
