use mcp_runtime::tool;

/// Adds a pair.
#[tool]
fn add((a, b): (i32, i32)) -> String {
    (a + b).to_string()
}

fn main() {}
