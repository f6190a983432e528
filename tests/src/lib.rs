//! Cross-crate tests for mcp-runtime live in `tests/`; this library only
//! links the crates under test, and compiles the repository README's example
//! as a doctest so it cannot go stale.
#![doc = include_str!("../../README.md")]
