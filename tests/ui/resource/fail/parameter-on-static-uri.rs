use mcp_runtime::resource;

/// The project's readme.
#[resource("memo://readme")]
fn readme(lang: String) -> String {
    format!("# Readme ({lang})")
}

fn main() {}
