use mcp_runtime::resource;

/// One note.
#[resource("memo://notes/{id}")]
fn note(id: u64, format: String) -> String {
    format!("{id} as {format}")
}

fn main() {}
