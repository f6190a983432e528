use mcp_runtime::tool;

/// Orders a coffee.
#[tool]
fn café() -> String {
    "coffee".to_owned()
}

fn main() {}
