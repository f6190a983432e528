use mcp_runtime::tool;

/// Says hello.
#[tool]
fn hello(name: &str) -> String {
    format!("hello {name}")
}

fn main() {}
