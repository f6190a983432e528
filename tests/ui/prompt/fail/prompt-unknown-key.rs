use mcp_runtime::prompt;

/// Reviews code.
#[prompt(titel = "Code review")]
fn review(topic: String) -> String {
    format!("Review the {topic}")
}

fn main() {}
