use mcp_runtime::tool;

/// Says hello.
#[tool(name = hello)]
fn hello() -> String {
    "hello".to_owned()
}

fn main() {}
