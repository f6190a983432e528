//! `scopes = [...]` on every kind of handler, with the principal as a
//! context parameter.

use mcp_runtime::security::Principal;
use mcp_runtime::{prompt, resource, tool};

/// Writes a note.
#[tool(scopes = ["notes:write", "https://api.example.com/notes.write"])]
fn write(body: String, #[ctx] principal: Option<&Principal>) -> String {
    format!("{body} by {:?}", principal.and_then(Principal::subject))
}

/// A secret.
#[resource("memo://secret", scopes = ["memo:read"])]
fn secret() -> String {
    "x".to_owned()
}

/// A template.
#[resource("memo://notes/{id}", scopes = ["memo:read"])]
fn note(id: String) -> String {
    id
}

/// Reviews.
#[prompt(scopes = ["review!#$%&'()*+,-./:;<=>?@[]^_`{|}~"])]
fn review() -> String {
    "x".to_owned()
}

fn main() {}
