use mcp_runtime::tool;

/// Adds integers.
#[tool(name = "add")]
fn add_integers(a: i64, b: i64) -> String {
    (a + b).to_string()
}

/// Adds floats.
#[tool(name = "add")]
fn add_floats(a: f64, b: f64) -> String {
    (a + b).to_string()
}

fn main() {}
