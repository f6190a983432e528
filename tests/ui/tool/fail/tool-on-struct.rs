use mcp_runtime::tool;

/// Says hello.
#[tool]
struct Hello;

fn main() {}
