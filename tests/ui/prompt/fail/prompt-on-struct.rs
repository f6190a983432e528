use mcp_runtime::prompt;

/// Reviews code.
#[prompt]
struct Review;

fn main() {}
