//! The trybuild UI suite: what users see when they misuse the macros, and
//! proof that every documented option compiles.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/tool/fail/*.rs");
    t.pass("ui/tool/pass/*.rs");
    t.compile_fail("ui/resource/fail/*.rs");
    t.pass("ui/resource/pass/*.rs");
    t.compile_fail("ui/prompt/fail/*.rs");
    t.pass("ui/prompt/pass/*.rs");
    t.compile_fail("ui/ask/fail/*.rs");
    t.pass("ui/ask/pass/*.rs");
}
