use mcp_runtime::resource;

/// A user's note.
#[resource("memo://{user}/notes/{id}")]
fn note(id: u64) -> String {
    id.to_string()
}

fn main() {}
