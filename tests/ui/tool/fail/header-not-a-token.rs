use mcp_runtime::tool;

/// Runs in a region.
#[tool]
fn run(#[arg(header = "Cloud Region")] region: String) -> String {
    region
}

fn main() {}
