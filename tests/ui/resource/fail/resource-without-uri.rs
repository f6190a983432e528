use mcp_runtime::resource;

/// The project's readme.
#[resource(name = "readme", mime_type = "text/plain")]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
