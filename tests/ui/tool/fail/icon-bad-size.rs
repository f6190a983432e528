use mcp_runtime::tool;

/// Says hello.
#[tool(icon(src = "https://example.com/icon.png", sizes = ["48"]))]
fn hello() -> String {
    "hello".to_owned()
}

fn main() {}
