use mcp_runtime::resource;

/// A duration string is not a number of milliseconds.
#[resource("memo://readme", timeout_ms = "5s")]
fn readme() -> &'static str {
    "# Readme"
}

/// Nor is a literal with a unit suffix.
#[resource("memo://changelog", timeout_ms = 5s)]
fn changelog() -> &'static str {
    "# Changelog"
}

fn main() {}
