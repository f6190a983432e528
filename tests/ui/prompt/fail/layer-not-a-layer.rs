use mcp_runtime::middleware::{self, Invocation};
use mcp_runtime::prompt;

/// Not a middleware function: it does not take `next` nor return a future.
fn audit(call: Invocation) -> Invocation {
    call
}

/// Reviews code.
#[prompt(layer = middleware::from_fn(audit))]
fn review(topic: String) -> String {
    format!("Review the {topic}")
}

/// Nor is a string naming one.
#[prompt(layer = "audit")]
fn summary(topic: String) -> String {
    format!("Summarize the {topic}")
}

fn main() {}
