use mcp_runtime::tool;

/// Builds.
#[tool(task(ttl_ms = 0, poll_interval_ms = 0))]
fn build() -> &'static str {
    "built"
}

/// Exports.
#[tool(task(ttl_ms = -5))]
fn export() -> &'static str {
    "exported"
}

fn main() {}
