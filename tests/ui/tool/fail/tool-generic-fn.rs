use mcp_runtime::tool;

/// Echoes its input.
#[tool]
fn echo<T: ToString>(value: T) -> String {
    value.to_string()
}

fn main() {}
