use mcp_runtime::resource;

/// The project's readme.
#[resource("memo://readme", annotations(priority = 2.5))]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
