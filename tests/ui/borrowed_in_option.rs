use mcp_runtime::tool;

#[tool]
fn echo(text: Option<&str>, words: Vec<std::borrow::Cow<'_, str>>) -> String {
    format!("{text:?} {words:?}")
}

fn main() {}
