use mcp_runtime::prompt;

/// Reviews code.
#[prompt]
fn review(topic: &str) -> String {
    format!("Review the {topic}")
}

fn main() {}
