use mcp_runtime::resource;

/// Search results: `q` may be left out of the URI, so it must be an `Option`.
#[resource("memo://search{?q}")]
fn search(q: String) -> String {
    q
}

fn main() {}
