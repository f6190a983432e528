//! A stdio-only server: `mcp-runtime` with `default-features = false`.
//! `run()` serves stdio; there is no `--http`, no inspector and no client in
//! the binary (`benches/RESULTS.md` has its stripped size).

use mcp_runtime::tool;

/// Adds two integers.
#[tool(annotations(read_only))]
fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

/// Reverses a text.
#[tool]
fn reverse(text: String) -> String {
    text.chars().rev().collect()
}

fn main() -> std::process::ExitCode {
    mcp_runtime::server!().run()
}
