//! A loopback resource URI that is not the address the HTTP server bound
//! is said at startup, with both addresses and the fix. (Its own test
//! binary: `tracing` caches per call site whether anyone listens, and a
//! test serving on another thread without a subscriber could settle that
//! first.)
#![cfg(feature = "http")]

use std::time::Duration;

use mcp_runtime::auth::{Authorization, TokenVerifier, VerifyError, VerifyFuture};
use mcp_runtime::{HttpOptions, ServerBuilder};
use mcp_test_support::LogCapture;

/// Accepts no token (no request is made: only startup is looked at).
struct Nobody;

impl TokenVerifier for Nobody {
    fn verify<'a>(&'a self, _token: &'a str) -> VerifyFuture<'a> {
        Box::pin(async { Err(VerifyError::Signature) })
    }
}

/// What serving on a free loopback port (port 0, as tests and `--http
/// 127.0.0.1:0` bind) with `resource` logs, and the port it got.
fn logged_serving(resource: impl FnOnce(u16) -> String) -> (String, u16) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (capture, guard) = LogCapture::start();
    let port = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let authorization = Authorization::new(resource(port))
            .authorization_server("https://auth.example.com")
            .verifier(Nobody);
        let options = HttpOptions::new().authorization(authorization);
        let server = ServerBuilder::new("protected", "1.0.0").build().unwrap();
        let serving = server.serve_http(listener, options, std::future::pending());
        // Serves until the timeout: the warning comes before the first accept.
        let _ = tokio::time::timeout(Duration::from_millis(100), serving).await;
        port
    });
    drop(guard);
    (capture.text(), port)
}

#[test]
fn a_loopback_resource_on_another_port_is_warned_about() {
    let (log, port) = logged_serving(|_| "http://127.0.0.1:1/mcp".to_owned());
    let warnings: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("WARN") && line.contains("resource URI"))
        .collect();
    let expected = format!(
        "the authorization's resource URI http://127.0.0.1:1/mcp names 127.0.0.1:1, but the HTTP server is bound to \
         127.0.0.1:{port}: its challenges and metadata send clients to 127.0.0.1:1; give `Authorization::new` the \
         address served (http://127.0.0.1:{port}/mcp), or bind to 127.0.0.1:1"
    );
    assert_eq!(warnings.len(), 1, "{log}");
    assert!(warnings[0].ends_with(&expected), "{log}");
}

#[test]
fn a_resource_on_the_bound_port_is_not_warned_about() {
    let (log, _) = logged_serving(|port| format!("http://localhost:{port}/mcp"));
    assert!(!log.contains("resource URI"), "{log}");
}
