use mcp_runtime::resource;

/// The readme.
#[resource("memo://readme")]
fn readme() -> &'static str {
    "# Readme"
}

/// The readme, again.
#[resource("memo://readme")]
fn readme_again() -> &'static str {
    "# Readme"
}

fn main() {}
