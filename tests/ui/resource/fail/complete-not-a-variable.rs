use mcp_runtime::{CompletionRequest, resource};

fn note_ids(_request: &CompletionRequest) -> Vec<String> {
    vec!["1".to_owned(), "2".to_owned()]
}

/// One note.
#[resource("memo://notes/{id}", complete(note = note_ids))]
fn note(id: u64) -> String {
    id.to_string()
}

fn main() {}
