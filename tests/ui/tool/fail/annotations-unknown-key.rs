use mcp_runtime::tool;

/// Says hello.
#[tool(annotations(read_only, readonly))]
fn hello() -> String {
    "hello".to_owned()
}

fn main() {}
