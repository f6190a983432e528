//! Misuses that only a build without an optional feature of mcp-runtime
//! can show.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
}
