use mcp_runtime::tool;

/// Says hello.
#[tool(icon(src = "http://example.com/icon.png"))]
fn hello() -> String {
    "hello".to_owned()
}

fn main() {}
