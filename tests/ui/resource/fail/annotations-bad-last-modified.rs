use mcp_runtime::resource;

/// The project's readme.
#[resource("memo://readme", annotations(last_modified = "12 Jan 2025"))]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
