use mcp_runtime::tool;

/// The same extension required twice is a typo; the error is at the
/// second one.
#[tool(
    requires_extension = "com.example/ping",
    requires_extension = "com.example/other",
    requires_extension = "com.example/ping"
)]
fn ping() -> String {
    "pong".to_owned()
}

fn main() {}
