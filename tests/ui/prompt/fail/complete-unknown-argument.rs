use mcp_runtime::{CompletionRequest, prompt};

fn topics(_request: &CompletionRequest) -> Vec<String> {
    vec!["naming".to_owned(), "errors".to_owned()]
}

/// Reviews code.
#[prompt(complete(subject = topics))]
fn review(topic: String) -> String {
    format!("Review the {topic}")
}

fn main() {}
