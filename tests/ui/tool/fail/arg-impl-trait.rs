use mcp_runtime::tool;

/// Says hello.
#[tool]
fn hello(name: impl ToString) -> String {
    format!("hello {}", name.to_string())
}

fn main() {}
