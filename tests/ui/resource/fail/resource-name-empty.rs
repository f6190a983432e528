use mcp_runtime::resource;

/// The project's readme.
#[resource("memo://readme", name = " ")]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
