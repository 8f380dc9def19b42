#[mcp_runtime::schema(rename_all = "camelCase")]
struct Options {
    dry_run: bool,
}

fn main() {}
