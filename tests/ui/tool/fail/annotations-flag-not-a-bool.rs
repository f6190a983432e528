use mcp_runtime::tool;

/// Says hello.
#[tool(annotations(destructive = "no"))]
fn hello() -> String {
    "hello".to_owned()
}

fn main() {}
