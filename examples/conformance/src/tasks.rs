//! The Tasks extension's fixtures (the suite's `tasks-*` scenarios): a
//! synchronous tool, long-running task tools that report progress, ask the
//! client, fail as tools or with protocol errors, and one that asks in
//! rounds before it becomes a task.

use std::time::Duration;

use mcp_runtime::{ElicitForm, Elicitation, Input, Progress, tool};

/// A confirmation.
#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Confirm {
    /// Go ahead?
    confirm: bool,
}

/// One entry of a parallel ask.
#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Entry {
    /// A name for it.
    name: String,
    /// Keep it?
    confirm: bool,
}

/// Someone's name.
#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Name {
    /// Your name.
    name: String,
}

/// Greets by name, synchronously (never a task).
#[tool(annotations(read_only))]
fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

/// Computes for `seconds` seconds, reporting progress every second, then
/// answers; as a task for clients with the Tasks extension (answered
/// directly when done within 250 ms). Cancelling it stops the work.
#[tool(task(answer_within_ms = 250), annotations(read_only))]
async fn slow_compute(
    /// How long to compute.
    seconds: u32,
    /// A label echoed in the result.
    label: String,
    #[ctx] progress: Progress,
) -> String {
    for second in 0..seconds {
        progress.report_message(
            f64::from(second),
            Some(f64::from(seconds)),
            &format!("computing {label}: {second} of {seconds} s"),
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    format!("computed {label} in {seconds} s")
}

/// Runs a job that fails after about a second: a tool error, so its task
/// completes with `isError`. Only as a task.
#[tool(task(required), annotations(read_only))]
async fn failing_job() -> Result<String, String> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err("the job failed: the build broke".into())
}

/// Runs a job that hits an internal error: its task fails with a JSON-RPC
/// error.
#[tool(task, annotations(read_only))]
async fn protocol_error_job() -> String {
    tokio::time::sleep(Duration::from_millis(200)).await;
    panic!("the job's worker crashed")
}

/// Deletes a file once the user confirms, asking in the middle of the task.
#[tool(task, annotations(destructive))]
async fn confirm_delete(
    /// The file to delete.
    filename: String,
    #[ctx] input: Input,
) -> String {
    let answer = input.elicit::<Confirm>(format!("Delete {filename}?")).await;
    match answer {
        Elicitation::Accepted(Confirm { confirm: true }) => format!("Deleted {filename}"),
        _ => format!("Kept {filename}"),
    }
}

/// Asks two questions at once in the middle of the task.
#[tool(task, annotations(read_only))]
async fn multi_input(#[ctx] input: Input) -> String {
    let (first, second) = tokio::join!(
        input.elicit::<Entry>("First entry?"),
        input.elicit::<Entry>("Second entry?"),
    );
    let name = |answer: Elicitation<Entry>| match answer.accepted() {
        Some(Entry {
            name,
            confirm: true,
        }) => name,
        Some(Entry { name, .. }) => format!("{name} (dropped)"),
        None => "(none)".into(),
    };
    format!("entries: {}, {}", name(first), name(second))
}

/// Asks for a name in rounds, then greets as a task. Only as a task.
#[tool(task(required), annotations(read_only))]
async fn test_tool_with_task(
    #[elicit("What is your name?")] user_name: Elicitation<Name>,
) -> String {
    tokio::time::sleep(Duration::from_millis(100)).await;
    match user_name {
        Elicitation::Accepted(Name { name }) => format!("Hello, {name}, from a task!"),
        _ => "Hello, stranger, from a task!".into(),
    }
}
