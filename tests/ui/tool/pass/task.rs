use mcp_runtime::{Input, Progress, tool};

/// A task for clients with the extension, synchronous for the others.
#[tool(task)]
async fn build(target: String, #[ctx] progress: Progress) -> String {
    progress.report_message(1.0, Some(1.0), "done");
    format!("built {target}")
}

/// Only as a task, with every option.
#[tool(task(required, answer_within_ms = 250, ttl_ms = 3_600_000, poll_interval_ms = 2_000))]
async fn export(#[ctx] input: Input) -> String {
    let _ = input.can_elicit();
    "exported".into()
}

/// `required = false` is the default, written out.
#[tool(task(required = false), annotations(read_only))]
fn status() -> &'static str {
    "ok"
}

fn main() {}
