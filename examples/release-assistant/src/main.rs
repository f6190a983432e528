//! Serves the release assistant: `cargo run -p release-assistant` (stdio)
//! or `cargo run -p release-assistant -- --http 127.0.0.1:8080`.
//!
//! Set `MCP_STATE_KEY` (32 bytes, base64) on every instance when several
//! run behind a load balancer, so any of them can continue a round.

// The handlers and the skills are in this package's library.

fn main() -> std::process::ExitCode {
    release_assistant::builder().run()
}
