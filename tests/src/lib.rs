//! Cross-crate tests for mcp-runtime live in `tests/`; this library only
//! links the crates under test, and compiles the repository README's example
//! as a doctest so it cannot go stale.
#![doc = include_str!("../../README.md")]

/// A tool of this package's library: `server!()` in this package's tests
/// serves it without the tests naming the library (`tests/server_macro.rs`).
#[mcp_runtime::tool(name = "package.linked", annotations(read_only))]
pub fn package_linked() -> &'static str {
    "linked by server!()"
}
