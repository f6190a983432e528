use mcp_runtime::{Elicitation, ElicitForm, tool};

#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Confirm {
    ok: bool,
}

/// Deletes a path.
#[tool]
fn delete(
    path: String,
    #[elicit("Delete {name}?")] confirm: Elicitation<Confirm>,
    #[elicit("Really delete {}?")] again: Elicitation<Confirm>,
) -> String {
    let _ = again;
    let _ = confirm;
    path
}

fn main() {}
