//! A server for `tests/drain.rs`: `run()` over HTTP (the address from
//! `--http`) with health probes at `/healthz` and `/readyz` and a drain
//! delay of 800 ms, serving one slow tool, so that a real SIGTERM can be
//! sent to a real process.

use std::time::Duration;

use mcp_runtime::{HttpOptions, ServerBuilder, tool};

/// Answers after `millis` milliseconds.
#[tool]
async fn slow(millis: u64) -> String {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    "done".to_owned()
}

fn main() -> std::process::ExitCode {
    let options = HttpOptions::new()
        .probes("/healthz", "/readyz")
        .drain_delay(Duration::from_millis(800));
    ServerBuilder::new("probes-server", "1.0.0")
        .http(options)
        .run()
}
