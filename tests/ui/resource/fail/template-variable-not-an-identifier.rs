use mcp_runtime::resource;

/// One note.
#[resource("memo://notes/{note-id}")]
fn note(note_id: u64) -> String {
    note_id.to_string()
}

fn main() {}
