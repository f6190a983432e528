use mcp_runtime::resource;

const README_URI: &str = "memo://readme";

/// The project's readme.
#[resource(README_URI, mime_type = "text/plain")]
fn readme() -> &'static str {
    let _ = README_URI;
    "# Readme"
}

fn main() {}
