use mcp_runtime::tool;

/// Says hello.
#[tool(name = "has space")]
fn hello() -> String {
    "hello".to_owned()
}

fn main() {}
