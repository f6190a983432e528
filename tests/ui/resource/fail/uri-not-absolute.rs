use mcp_runtime::resource;

/// The project's readme.
#[resource("readme.txt")]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
