use mcp_runtime::tool;

/// An empty list reads as "no scope needed": leave `scopes` out instead.
#[tool(scopes = [])]
fn write() -> String {
    "x".to_owned()
}

fn main() {}
