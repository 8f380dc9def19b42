use mcp_runtime::prelude::*;

/// The caller's context, as the tool's own argument type.
#[mcp_runtime::schema]
struct Context {
    locale: String,
}

/// `Context` is taken for the extractor by its name: the error says how to
/// make it an argument (`#[arg]`).
#[tool]
fn localized(context: Context) -> String {
    context.locale
}

fn main() {}
