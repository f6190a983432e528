use mcp_runtime::{ElicitForm, Elicitation, tool};

#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Confirm {
    /// Purge it?
    confirm: bool,
}

/// Purges a cache once the user confirms; a client may retry with the
/// same `requestState`.
#[tool(annotations(destructive, idempotent), replayable_state)]
fn purge_cache(name: String, #[elicit("Purge {name}?")] answer: Elicitation<Confirm>) -> String {
    match answer {
        Elicitation::Accepted(Confirm { confirm: true }) => format!("purged {name}"),
        _ => format!("kept {name}"),
    }
}

/// Without annotations (the spec's defaults: destructive, not idempotent).
#[tool(replayable_state)]
fn reset() -> &'static str {
    "reset"
}

/// `= false` is the default, written out.
#[tool(annotations(read_only), replayable_state = false)]
fn status() -> &'static str {
    "ok"
}

/// `= true` means the same as the flag alone.
#[tool(annotations(destructive = false), replayable_state = true)]
fn append() -> &'static str {
    "appended"
}

fn main() {}
