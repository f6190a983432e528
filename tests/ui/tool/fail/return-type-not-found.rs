use mcp_runtime::tool;

/// Says hello.
#[tool]
fn hello(name: String) -> Strin {
    format!("hello {name}")
}

fn main() {}
