use mcp_runtime::prompt;

/// Reviews a topic.
#[prompt]
fn review(#[arg(header = "Topic")] topic: String) -> String {
    topic
}

fn main() {}
