// Only tools/call, resources/read and prompts/get can ask the client for
// input; completion (like every list method) has no way to.
use mcp_runtime::{Input, prompt};

fn topics(input: Input) -> Vec<String> {
    let _ = input;
    Vec::new()
}

/// Reviews a topic.
#[prompt(complete(topic = topics))]
fn review(topic: String) -> String {
    topic
}

fn main() {}
