use mcp_runtime::tool;

/// Hidden from everyone.
#[tool(visibility = [])]
fn nobody() -> String {
    "x".to_owned()
}

/// `user` is no visibility, and `app` is given twice.
#[tool(visibility = ["user", "app", "app"])]
fn unknown() -> String {
    "x".to_owned()
}

/// A list, not one string.
#[tool(visibility = "app")]
fn single() -> String {
    "x".to_owned()
}

fn main() {}
