use mcp_runtime::tool;

/// Takes nothing.
#[tool]
fn ping() -> &'static str {
    "pong"
}

/// Takes nothing, asynchronously.
#[tool]
async fn ping_later() -> &'static str {
    "pong"
}

fn main() {}
