use mcp_runtime::resource;

/// One note.
#[resource("memo://notes/{id")]
fn note(id: u64) -> String {
    id.to_string()
}

fn main() {}
