use mcp_runtime::tool;

/// Builds.
#[tool(task, task(required))]
fn build() -> &'static str {
    "built"
}

/// Exports.
#[tool(task(required, required = false, ttl_ms = 1_000, ttl_ms = 2_000))]
fn export() -> &'static str {
    "exported"
}

fn main() {}
