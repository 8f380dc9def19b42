use mcp_runtime::tool;

#[derive(mcp_runtime::serde::Deserialize)]
#[serde(crate = "mcp_runtime::serde")]
struct OnlyDeserialize {
    value: i32,
}

#[tool]
fn takes_it(arg: OnlyDeserialize) -> String {
    arg.value.to_string()
}

fn main() {}
