use mcp_runtime::resource;

/// The project's readme.
#[resource("memo://readme", annotations(audience = ["user", "admin"]))]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
