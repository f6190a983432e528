use mcp_runtime::tool;

/// Does nothing.
#[tool]
fn nothing() {}

fn main() {}
