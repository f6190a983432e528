use mcp_runtime::tool;

/// Says hello.
#[tool(timeout_ms = 1000, name = "hello", timeout_ms = 2000)]
fn hello() -> String {
    "hello".to_owned()
}

fn main() {}
