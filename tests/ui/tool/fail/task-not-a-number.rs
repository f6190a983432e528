use mcp_runtime::tool;

/// Builds.
#[tool(task(answer_within_ms = "250"))]
fn build() -> &'static str {
    "built"
}

fn main() {}
