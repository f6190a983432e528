use mcp_runtime::prompt;

fn topics(prefix: &str) -> Vec<String> {
    vec![format!("{prefix}naming")]
}

/// Reviews code.
#[prompt(complete(topic = topics))]
fn review(topic: String) -> String {
    format!("Review the {topic}")
}

fn main() {}
