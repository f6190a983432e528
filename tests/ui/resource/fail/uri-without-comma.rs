use mcp_runtime::resource;

/// The project's readme.
#[resource("memo://readme" mime_type = "text/plain")]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
