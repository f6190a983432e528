use mcp_runtime::tool;

/// Adds two numbers.
#[tool]
fn add(a: i32, b: i32) -> Result<i32, String> {
    Ok(a + b)
}

fn main() {}
