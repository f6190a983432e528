use mcp_runtime::resource;

/// The project's readme.
#[resource("memo://readme", mime_type = "markdown")]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
