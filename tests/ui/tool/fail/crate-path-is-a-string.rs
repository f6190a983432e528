use mcp_runtime::tool;

/// Says hello.
#[tool(crate = "mcp_runtime")]
fn hello() -> String {
    "hello".to_owned()
}

fn main() {}
