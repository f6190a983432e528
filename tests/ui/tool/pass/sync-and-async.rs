use mcp_runtime::tool;

/// A synchronous tool.
#[tool]
fn shout(text: String) -> String {
    text.to_uppercase()
}

/// An asynchronous tool.
#[tool]
async fn whisper(text: String) -> String {
    std::future::ready(()).await;
    text.to_lowercase()
}

fn main() {}
