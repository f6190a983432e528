use mcp_runtime::{CompletionRequest, resource};

async fn note_ids(request: &CompletionRequest) -> Vec<String> {
    vec![format!("{}1", request.value())]
}

/// One note.
#[resource("memo://notes/{id}", complete(id = note_ids))]
fn note(id: u64) -> String {
    id.to_string()
}

fn main() {}
