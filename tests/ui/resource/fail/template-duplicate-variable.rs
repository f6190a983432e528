use mcp_runtime::resource;

/// A note, with its id repeated.
#[resource("memo://notes/{id}/{id}")]
fn note(id: u64) -> String {
    id.to_string()
}

fn main() {}
