use mcp_runtime::tool;

/// Says hello.
#[tool(icon(mime_type = "image/png"))]
fn hello() -> String {
    "hello".to_owned()
}

fn main() {}
