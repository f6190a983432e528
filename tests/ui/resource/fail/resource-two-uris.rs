use mcp_runtime::resource;

/// The project's readme, at two addresses.
#[resource("memo://readme", "memo://README")]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
