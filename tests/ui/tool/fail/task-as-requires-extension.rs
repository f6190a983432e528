use mcp_runtime::tool;

/// Builds.
#[tool(requires_extension = "io.modelcontextprotocol/tasks")]
fn build() -> &'static str {
    "built"
}

fn main() {}
