//! The server of the scope-check workloads: `echo`, and `echo_scoped`,
//! which declares a scope and so runs under the built-in scope check (an
//! item layer). No authorization is configured: the check finds no
//! principal and passes the call on, so the workload measures what the
//! layer costs a call that it lets through.

use mcp_runtime::{ServerBuilder, tool};

/// Echoes the text back.
#[tool]
fn echo(
    /// The text to echo.
    text: String,
) -> String {
    text
}

/// Echoes the text back, for callers with `bench:read`.
#[tool(scopes = ["bench:read"])]
fn echo_scoped(
    /// The text to echo.
    text: String,
) -> String {
    text
}

fn main() -> std::process::ExitCode {
    ServerBuilder::new("bench-scoped", "0.1.0").run()
}
