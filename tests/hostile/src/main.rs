//! The server the hostile tests attack: the quickstart's tools, resources
//! and prompts, plus tools that misbehave on purpose.

// The quickstart's handlers are in its library; naming it links them in.
use quickstart as _;

use mcp_runtime::tool;

/// Logs `lines` warnings of about a kilobyte each, then answers: a handler
/// that talks more than anyone reads.
#[tool(annotations(read_only, open_world = false))]
fn chatty(lines: u32) -> String {
    let filler = "x".repeat(1_000);
    for line in 0..lines {
        tracing::warn!(line, filler, "a chatty handler");
    }
    format!("logged {lines} lines")
}

fn main() -> std::process::ExitCode {
    mcp_runtime::server!()
        .instructions(quickstart::INSTRUCTIONS)
        .run()
}
