use mcp_runtime::{Elicitation, tool};

#[derive(serde::Deserialize)]
struct Confirm {
    ok: bool,
}

/// Deletes after confirmation.
#[tool]
fn delete(#[elicit("Sure?")] confirm: Elicitation<Confirm>) -> String {
    let _ = confirm;
    String::new()
}

fn main() {}
