use mcp_runtime::resource;

/// The project's readme.
#[resource("memo://readme", mimetype = "text/plain")]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
