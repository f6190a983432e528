//! The server of the MRTR round-2 workload: the quickstart's
//! `confirm_delete`, with `replayable_state`. wrk sends one retry (one
//! answer, one sealed `requestState`) over and over; the quickstart's own
//! `confirm_delete` is destructive, so its states open once and every
//! request after the first would be a refusal.

use mcp_runtime::{ElicitForm, Elicitation, tool};

/// The confirmation form.
#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Confirm {
    /// Delete it for good?
    confirm: bool,
}

/// Deletes a file once the user confirms (a demo: nothing is touched).
#[tool(
    annotations(destructive, idempotent, open_world = false),
    replayable_state
)]
fn confirm_delete(
    /// The file to delete.
    path: String,
    #[elicit("Delete {path}?")] answer: Elicitation<Confirm>,
) -> Result<String, String> {
    match answer {
        Elicitation::Accepted(Confirm { confirm: true }) => Ok(format!("deleted {path}")),
        Elicitation::Accepted(Confirm { confirm: false }) => {
            Err(format!("kept {path}: deletion not confirmed"))
        }
        Elicitation::Declined | Elicitation::Cancelled => {
            Err(format!("kept {path}: the user declined"))
        }
    }
}

fn main() -> std::process::ExitCode {
    mcp_runtime::server!().run()
}
