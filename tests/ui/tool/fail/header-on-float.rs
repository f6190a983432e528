use mcp_runtime::tool;

/// Scales a value.
#[tool]
fn scale(#[arg(header = "Factor")] factor: f64) -> String {
    factor.to_string()
}

fn main() {}
