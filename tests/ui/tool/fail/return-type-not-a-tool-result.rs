use mcp_runtime::tool;

/// Adds two numbers.
#[tool]
fn add(a: i32, b: i32) -> i32 {
    a + b
}

fn main() {}
