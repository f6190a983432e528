//! Cross-crate tests for mcp-runtime live in `tests/`; this library only
//! links the crates under test.
