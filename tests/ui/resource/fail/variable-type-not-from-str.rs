use mcp_runtime::resource;

struct NoteId(u64);

/// One note.
#[resource("memo://notes/{id}")]
fn note(id: NoteId) -> String {
    id.0.to_string()
}

fn main() {}
