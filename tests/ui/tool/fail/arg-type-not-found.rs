use mcp_runtime::tool;

/// Says hello.
#[tool]
fn hello(name: Strin) -> String {
    format!("hello {name}")
}

fn main() {}
