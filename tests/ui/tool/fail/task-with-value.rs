use mcp_runtime::tool;

/// Builds.
#[tool(task = true)]
fn build() -> &'static str {
    "built"
}

fn main() {}
