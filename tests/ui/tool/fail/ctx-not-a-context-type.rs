use mcp_runtime::tool;

/// Says hello.
#[tool]
fn hello(#[ctx] name: String) -> String {
    name
}

fn main() {}
