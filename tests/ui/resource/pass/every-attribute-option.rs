use mcp_runtime::{CompletionRequest, resource};

fn note_ids(_request: &CompletionRequest) -> Vec<String> {
    vec!["1".to_owned(), "2".to_owned()]
}

/// Overridden by `description`.
#[resource(
    "memo://notes/{id}",
    name = "note",
    title = "A note",
    description = "One note, by number.",
    mime_type = "text/markdown",
    size = 12,
    annotations(
        audience = ["user", "assistant"],
        priority = 0.5,
        last_modified = "2025-01-12T15:00:58Z"
    ),
    icon(
        src = "https://example.com/note.png",
        mime_type = "image/png",
        sizes = ["48x48", "96x96"],
        theme = "light"
    ),
    icon(src = "data:image/svg+xml;base64,PHN2Zy8+", sizes = ["any"], theme = "dark"),
    meta = r#"{"com.example/owner": "ops", "plain": [1, 2]}"#,
    ttl_ms = 60000,
    cache = public,
    complete(id = note_ids),
    crate = ::mcp_runtime
)]
fn note(id: u64) -> String {
    format!("# Note {id}")
}

/// `cache` alone keeps the default time to live.
#[resource("memo://private", cache = private)]
fn private_note() -> &'static str {
    "secret"
}

/// `ttl_ms` alone keeps the default (private) scope; integer priorities and
/// date-only times are accepted.
#[resource(
    "memo://cached",
    ttl_ms = 0,
    size = 0,
    annotations(priority = 1, last_modified = "2025-01-12")
)]
fn cached() -> &'static str {
    ""
}

/// MIME types with parameters, an empty audience, and a name with spaces.
#[resource(
    "memo://styled",
    name = "Styled note",
    mime_type = "text/plain; charset=utf-8",
    annotations(audience = [])
)]
fn styled() -> &'static str {
    ""
}

fn main() {}
