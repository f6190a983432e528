use mcp_runtime::resource;

/// A section of a page.
#[resource("memo://pages/{page}{#section}")]
fn section(page: String, section: String) -> String {
    format!("{page}#{section}")
}

fn main() {}
