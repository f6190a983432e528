use mcp_runtime::prompt;

/// Reviews code.
#[prompt(name = "code review")]
fn review(topic: String) -> String {
    format!("Review the {topic}")
}

fn main() {}
