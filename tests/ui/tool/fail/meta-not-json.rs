use mcp_runtime::tool;

/// Says hello.
#[tool(meta = "{not json}")]
fn hello() -> String {
    "hello".to_owned()
}

fn main() {}
