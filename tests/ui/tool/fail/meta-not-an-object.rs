use mcp_runtime::tool;

/// Says hello.
#[tool(meta = "[1, 2]")]
fn hello() -> String {
    "hello".to_owned()
}

fn main() {}
