use mcp_runtime::tool;

const WRITE: &str = "notes:write";

/// Scopes are string literals (they are published in metadata at build
/// time), not constants or a single string.
#[tool(scopes = [WRITE, 7])]
fn write() -> String {
    "x".to_owned()
}

/// Not an array.
#[tool(scopes = "notes:write")]
fn write2() -> String {
    "x".to_owned()
}

fn main() {}
