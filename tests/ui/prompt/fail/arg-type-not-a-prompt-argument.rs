use mcp_runtime::prompt;

/// Reviews several files.
#[prompt]
fn review(files: Vec<String>) -> String {
    format!("Review {}", files.join(", "))
}

fn main() {}
