//! A server with 50 tools plus `echo` and a task tool, `bench_job`, for the
//! Tasks workloads: `tasks/get` of a completed task against a `tools/list`
//! page of the same server, and `tools/call` creating a task. Its store is
//! sized for a benchmark's load (tasks live ten seconds).

use std::time::Duration;

use mcp_runtime::tasks::{InMemoryTaskStore, TaskOptions};

include!(concat!(env!("OUT_DIR"), "/tools50.rs"));

/// Echoes the text back.
#[mcp_runtime::tool(annotations(read_only))]
fn echo(text: String) -> String {
    text
}

/// A job that is done at once, run as a task.
#[mcp_runtime::tool(task, annotations(read_only))]
fn bench_job() -> &'static str {
    "job done"
}

fn main() -> std::process::ExitCode {
    let store = InMemoryTaskStore::new()
        .max_tasks(1_000_000)
        .max_per_owner(1_000_000)
        .max_bytes(1 << 30);
    let tasks = TaskOptions::new().store(store).ttl(Duration::from_secs(10));
    mcp_runtime::server!().with(tasks).run()
}
