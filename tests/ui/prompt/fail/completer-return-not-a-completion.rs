use mcp_runtime::{CompletionRequest, prompt};

fn topics(_request: &CompletionRequest) -> Option<String> {
    Some("naming".to_owned())
}

/// Reviews code.
#[prompt(complete(topic = topics))]
fn review(topic: String) -> String {
    format!("Review the {topic}")
}

fn main() {}
