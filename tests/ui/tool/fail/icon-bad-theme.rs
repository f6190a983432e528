use mcp_runtime::tool;

/// Says hello.
#[tool(icon(src = "https://example.com/icon.png", theme = "blue"))]
fn hello() -> String {
    "hello".to_owned()
}

fn main() {}
