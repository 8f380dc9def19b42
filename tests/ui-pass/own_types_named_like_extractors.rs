use mcp_runtime::prelude::*;

/// The caller's context, as the tool's own argument type.
#[mcp_runtime::schema]
struct Context {
    locale: String,
}

/// A state machine's state, also the tool's own type.
#[mcp_runtime::schema]
struct State {
    name: String,
}

/// `#[arg]` makes a parameter an argument whatever its type is named; a
/// `State` without generic arguments is not the `State<T>` extractor.
#[tool]
fn advance(#[arg] context: Context, state: State, ctx: mcp_runtime::Context) -> String {
    let _ = ctx;
    format!("{} in {}", state.name, context.locale)
}

fn main() {
    let server = Server::builder().empty().tool::<advance>().build().expect("builds");
    assert_eq!(server.tool_names(), ["advance"]);
}
