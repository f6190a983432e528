//! The server the hostile tests attack: the quickstart's tools, resources
//! and prompts, plus tools that misbehave on purpose.

// The quickstart's handlers are in its library; naming it links them in.
use quickstart as _;

use std::task::Poll;

use mcp_runtime::tool;

/// Logs `lines` warnings of about a kilobyte each, then answers: a handler
/// that talks more than anyone reads.
#[tool(annotations(read_only, open_world = false))]
fn chatty(lines: u32) -> String {
    let filler = "x".repeat(1_000);
    for line in 0..lines {
        tracing::warn!(line, filler, "a chatty handler");
    }
    format!("logged {lines} lines")
}

/// Panics with `message` as soon as it is called: a handler bug, which
/// must cost its own request and nothing else.
#[tool(annotations(read_only, open_world = false))]
fn explode(message: String) -> String {
    panic!("{message}");
}

/// Panics with `message` after its first await, once it runs as a task of
/// its own (the other path a handler's panic takes).
#[tool(annotations(read_only, open_world = false))]
async fn explode_later(message: String) -> String {
    yield_once().await;
    panic!("{message}");
}

/// Waits `ms` milliseconds, as a task for a client that negotiated Tasks:
/// long-running work that holds a slot of its caller's task quota.
#[tool(task, annotations(read_only, open_world = false))]
async fn linger(ms: u64) -> String {
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    format!("lingered {ms} ms")
}

/// Pending once (waking itself at once), then ready.
async fn yield_once() {
    let mut yielded = false;
    std::future::poll_fn(|context| {
        if yielded {
            return Poll::Ready(());
        }
        yielded = true;
        context.waker().wake_by_ref();
        Poll::Pending
    })
    .await;
}

fn main() -> std::process::ExitCode {
    mcp_runtime::server!()
        .instructions(quickstart::INSTRUCTIONS)
        .run()
}
