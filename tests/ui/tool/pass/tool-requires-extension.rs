//! `requires_extension = "..."`: once, and repeated for a tool that needs
//! two extensions, next to other options.

use mcp_runtime::tool;

/// Pings through an extension.
#[tool(requires_extension = "com.example/ping")]
fn ping() -> String {
    "pong".to_owned()
}

/// Needs two extensions, one of them an official one.
#[tool(
    name = "render",
    requires_extension = "com.example/my-extension",
    annotations(read_only),
    requires_extension = "io.modelcontextprotocol/ui"
)]
fn render(view: String) -> String {
    view
}

fn main() {}
