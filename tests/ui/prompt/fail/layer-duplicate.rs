use mcp_runtime::middleware::{BoxError, Invocation, Next, Output};
use mcp_runtime::prompt;

async fn audit(call: Invocation, next: Next<Invocation>) -> Result<Output, BoxError> {
    next.run(call).await
}

async fn guard(call: Invocation, next: Next<Invocation>) -> Result<Output, BoxError> {
    next.run(call).await
}

/// Reviews code.
#[prompt(
    layer = mcp_runtime::middleware::from_fn(audit),
    layer = mcp_runtime::middleware::from_fn(guard)
)]
fn review(topic: String) -> String {
    format!("Review the {topic}")
}

fn main() {}
