//! The trybuild UI suite: what users see when they misuse the macros, and
//! proof that every documented option compiles.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/tool/fail/*.rs");
    t.pass("ui/tool/pass/*.rs");
}
