use mcp_runtime::resource;

/// The project's readme.
#[resource(name = "readme", "memo://readme")]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
