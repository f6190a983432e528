use mcp_runtime::prompt;

/// Reviews code.
#[prompt]
fn review(topic: String) {
    println!("Review the {topic}");
}

fn main() {}
