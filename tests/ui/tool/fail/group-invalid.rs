use mcp_runtime::tool;

/// A group is what a builder selects items by: lowercase, no spaces.
#[tool(group = "Admin Tools")]
fn purge() -> String {
    "x".to_owned()
}

/// Given twice.
#[tool(group = "admin", group = "ops")]
fn restart() -> String {
    "x".to_owned()
}

/// Not a string.
#[tool(group = admin)]
fn stop() -> String {
    "x".to_owned()
}

fn main() {}
