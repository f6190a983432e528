use mcp_runtime::{CompletionRequest, prompt};

fn topics(_request: &CompletionRequest) -> Vec<String> {
    vec!["naming".to_owned()]
}

fn more_topics(_request: &CompletionRequest) -> Vec<String> {
    vec!["errors".to_owned()]
}

/// Reviews code.
#[prompt(complete(topic = topics, topic = more_topics))]
fn review(topic: String) -> String {
    format!("Review the {topic}")
}

fn main() {}
