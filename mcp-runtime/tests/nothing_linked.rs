//! A server with nothing to serve says so at startup, with the fix. (Its
//! own test binary: `tracing` caches per call site whether anyone listens,
//! and a test building a server on another thread without a subscriber
//! could settle that first.)

use mcp_runtime::ServerBuilder;
use mcp_test_support::LogCapture;

#[test]
fn a_server_with_nothing_linked_says_so_and_how_to_fix_it() {
    let (capture, guard) = LogCapture::start();
    ServerBuilder::new("empty", "0.1.0").build().unwrap();
    drop(guard);
    let log = capture.text();
    assert!(log.contains("WARN"), "{log}");
    assert!(
        log.contains(
            "this server has no tools, resources or prompts: no #[tool], #[resource] or #[prompt] is linked into this binary. \
             `server!()` links its own package's library; handlers in another crate are linked when the binary names it: `use that_crate as _;`"
        ),
        "{log}"
    );
}
