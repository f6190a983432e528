use mcp_runtime::tool;

/// Says hello.
#[tool]
fn hello() -> impl ToString {
    "hello"
}

fn main() {}
