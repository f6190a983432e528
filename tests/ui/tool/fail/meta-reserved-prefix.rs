use mcp_runtime::tool;

/// Says hello.
#[tool(meta = r#"{"io.modelcontextprotocol/x": 1}"#)]
fn hello() -> String {
    "hello".to_owned()
}

fn main() {}
