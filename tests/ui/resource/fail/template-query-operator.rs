use mcp_runtime::resource;

/// Search results.
#[resource("memo://search{?q}")]
fn search(q: String) -> String {
    q
}

fn main() {}
