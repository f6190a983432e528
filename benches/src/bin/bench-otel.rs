//! The server of the OpenTelemetry cost workloads: the quickstart's `echo`
//! with `mcp-runtime-otel`, which starts export as the `OTEL_*` variables
//! say, so one binary measures the feature compiled in
//! and unused (no variable), sampled at 0 (`OTEL_TRACES_SAMPLER=always_off`)
//! and everything sampled and exported (`always_on`, to a local receiver).

use mcp_runtime::{ServerBuilder, tool};

/// Echoes the text back.
#[tool]
fn echo(
    /// The text to echo.
    text: String,
) -> String {
    text
}

fn main() -> std::process::ExitCode {
    ServerBuilder::new("bench-otel", "0.1.0")
        .with(mcp_runtime_otel::Otel::from_env())
        .run()
}
