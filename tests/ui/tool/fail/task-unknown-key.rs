use mcp_runtime::tool;

/// Builds.
#[tool(task(requried, ttl = 5))]
fn build() -> &'static str {
    "built"
}

fn main() {}
