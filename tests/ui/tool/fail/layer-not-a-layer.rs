use mcp_runtime::tool;

/// A number is not a layer.
#[tool(layer = 5)]
fn hello() -> String {
    "hello".to_owned()
}

fn main() {}
