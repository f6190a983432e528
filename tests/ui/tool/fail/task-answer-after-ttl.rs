use mcp_runtime::tool;

/// Builds.
#[tool(task(answer_within_ms = 60_000, ttl_ms = 30_000))]
fn build() -> &'static str {
    "built"
}

fn main() {}
