use mcp_runtime::resource;

/// The project's readme.
#[resource("memo://readme", ttl_ms = 60000, cache = shared)]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
