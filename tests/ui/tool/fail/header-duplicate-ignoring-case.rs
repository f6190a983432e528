use mcp_runtime::tool;

/// Copies between regions.
#[tool]
fn copy(
    #[arg(header = "Region")] from: String,
    #[arg(header = "region")] to: String,
) -> String {
    format!("{from} -> {to}")
}

fn main() {}
