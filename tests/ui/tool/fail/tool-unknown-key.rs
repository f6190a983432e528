use mcp_runtime::tool;

/// Says hello.
#[tool(nme = "x")]
fn hello() -> String {
    "hello".to_owned()
}

fn main() {}
