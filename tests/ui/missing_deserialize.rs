use mcp_runtime::tool;

#[derive(mcp_runtime::schemars::JsonSchema)]
#[schemars(crate = "mcp_runtime::schemars")]
struct OnlyJsonSchema {
    value: i32,
}

#[tool]
fn takes_it(arg: OnlyJsonSchema) -> String {
    arg.value.to_string()
}

fn main() {}
