use mcp_runtime::resource;

/// The project's readme.
#[resource("memo://readme", ttl_ms = "60s")]
fn readme() -> &'static str {
    "# Readme"
}

fn main() {}
