use mcp_runtime::prompt;

/// Reviews code.
#[prompt(name = "review")]
fn review_code(topic: String) -> String {
    format!("Review the {topic}")
}

/// Reviews prose.
#[prompt(name = "review")]
fn review_prose(topic: String) -> String {
    format!("Proofread the {topic}")
}

fn main() {}
