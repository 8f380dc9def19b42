use mcp_runtime::tool;

struct Calculator;

impl Calculator {
    #[tool]
    fn add(&self, a: i64, b: i64) -> String {
        (a + b).to_string()
    }
}

fn main() {}
