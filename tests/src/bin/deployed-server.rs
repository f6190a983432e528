//! A server as deployed, for `tests/deployed.rs`: `run()` over HTTP (the
//! address from `--http`) with health probes at `/healthz` and `/readyz`,
//! a drain delay of 800 ms and a Server Card, serving one slow tool, so
//! that a real SIGTERM can be sent to a real process and its own
//! inspector can read its card.

use std::time::Duration;

use mcp_runtime::{HttpOptions, ServerBuilder, ServerCard, tool};

/// Answers after `millis` milliseconds.
#[tool]
async fn slow(millis: u64) -> String {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    "done".to_owned()
}

fn main() -> std::process::ExitCode {
    let card = ServerCard::new("com.example").remote("https://mcp.example.com/mcp");
    let options = HttpOptions::new()
        .probes("/healthz", "/readyz")
        .drain_delay(Duration::from_millis(800))
        .server_card(card);
    ServerBuilder::new("deployed-server", "1.0.0")
        .description("A slow tool, health probes and a Server Card.")
        .http(options)
        .run()
}
