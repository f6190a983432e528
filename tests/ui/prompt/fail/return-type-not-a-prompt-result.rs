use mcp_runtime::prompt;

/// Counts words.
#[prompt]
fn count(text: String) -> usize {
    text.split_whitespace().count()
}

fn main() {}
