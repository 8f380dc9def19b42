use mcp_runtime::tool;

/// `rename` in #[schemars] would rename the schema's property but not the
/// field serde reads.
#[tool]
fn search(#[schemars(rename = "q")] query: String, #[schemars(range(min = 1))] limit: u32) -> String {
    format!("{query} {limit}")
}

fn main() {}
