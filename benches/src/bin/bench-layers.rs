//! The server of the layer-cost workloads: the quickstart's `echo`, with
//! the item layer `BENCH_LAYER` names around every invocation: `none` (the
//! control, the same binary without a layer), `noop` (a tower layer that
//! passes the call on) or `timeout` (`tower::timeout::TimeoutLayer`); or,
//! with `request-noop`, the no-op layer around every request instead (a
//! request layer: the seam OpenTelemetry's export is built on).

use std::time::Duration;

use mcp_runtime::middleware::Layer;
use mcp_runtime::{ServerBuilder, tool};

/// Echoes the text back.
#[tool]
fn echo(
    /// The text to echo.
    text: String,
) -> String {
    text
}

/// A layer that adds nothing: the cost of the stack itself.
#[derive(Clone, Copy)]
struct Noop;

impl<S> Layer<S> for Noop {
    type Service = S;

    fn layer(&self, inner: S) -> S {
        inner
    }
}

fn main() -> std::process::ExitCode {
    let builder = ServerBuilder::new("bench-layers", "0.1.0");
    let builder = match std::env::var("BENCH_LAYER").as_deref() {
        Ok("noop") => builder.layer(Noop),
        Ok("request-noop") => builder.request_layer(Noop),
        Ok("timeout") => builder.layer(tower::timeout::TimeoutLayer::new(Duration::from_secs(60))),
        Ok("none") | Err(_) => builder,
        Ok(other) => panic!("BENCH_LAYER={other}: none, noop, timeout or request-noop"),
    };
    builder.run()
}
