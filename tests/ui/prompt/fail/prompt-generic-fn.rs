use mcp_runtime::prompt;

/// Reviews anything.
#[prompt]
fn review<T: std::fmt::Display>(topic: T) -> String {
    format!("Review the {topic}")
}

fn main() {}
