use mcp_runtime::resource;

/// The project's readme.
#[resource("memo://readme", size = -8)]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
