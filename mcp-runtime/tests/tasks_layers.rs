//! The Tasks engine as the innermost item layer of a task tool: the
//! user's layers around it see the task it made (`Output::Task`), a
//! client without the extension gets the ordinary result through the same
//! stack, and the tool's `timeout_ms` bounds the task's work, which then
//! fails with `-31002` and is dropped.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_runtime::middleware::{self, BoxError, Invocation, Next, Output};
use mcp_runtime::{Server, ServerBuilder, tool};
use mcp_test_support::{assert_valid, assert_valid_task, meta_with, parse};
use serde_json::{Value, json};

/// What the layers saw: `<layer> <tool> <outcome>`.
static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

async fn watch(call: Invocation, next: Next<Invocation>) -> Result<Output, BoxError> {
    let name = call.name().to_owned();
    let answer = next.run(call).await;
    let outcome = match &answer {
        Ok(Output::Task(handle)) => format!("task {}", handle.id().len()),
        Ok(Output::Tool(result)) => format!("result {}", result.is_error),
        Ok(_) => "other".to_owned(),
        Err(error) => format!("error {error}"),
    };
    SEEN.lock().unwrap().push(format!("watch {name} {outcome}"));
    answer
}

/// Counts to `n`, slowly.
#[tool(task, annotations(read_only), layer = middleware::from_fn(watch))]
async fn count_to(n: u64) -> String {
    tokio::time::sleep(Duration::from_millis(20)).await;
    format!("counted to {n}")
}

/// Set when `stuck`'s work is dropped.
static DROPPED: AtomicBool = AtomicBool::new(false);

struct OnDrop;

impl Drop for OnDrop {
    fn drop(&mut self) {
        DROPPED.store(true, Ordering::SeqCst);
    }
}

/// Never finishes in time.
#[tool(task, annotations(read_only), timeout_ms = 100)]
async fn stuck() -> String {
    let _guard = OnDrop;
    tokio::time::sleep(Duration::from_secs(30)).await;
    "too late".to_owned()
}

const TASKS: &str = "io.modelcontextprotocol/tasks";

async fn send(server: &Server, method: &str, mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = meta_with(capabilities);
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let exchange = server.exchange(message.to_string()).await;
    parse(&exchange.response.expect("a response"))
}

/// Polls until the task has ended.
async fn ended(server: &Server, id: &str) -> Value {
    let capabilities = json!({"extensions": {TASKS: {}}});
    for _ in 0..500 {
        let response = send(
            server,
            "tasks/get",
            json!({"taskId": id}),
            capabilities.clone(),
        )
        .await;
        let task = response["result"].clone();
        assert_valid_task("GetTaskResult", &task);
        if ["completed", "failed", "cancelled"].contains(&task["status"].as_str().unwrap()) {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("task {id} never ended");
}

#[tokio::test]
async fn layers_around_the_engine_see_the_task_and_the_timeout_bounds_its_work() {
    let server = ServerBuilder::new("tasks-layers", "1.0.0")
        .layer(middleware::from_fn(watch))
        .build()
        .unwrap();
    let with_tasks = json!({"extensions": {TASKS: {}}});

    // As a task: both layers (the server's, the tool's) see the handle.
    let params = json!({"name": "count_to", "arguments": {"n": 3}});
    let created = send(&server, "tools/call", params.clone(), with_tasks.clone()).await;
    assert_valid_task("CreateTaskResult", &created["result"]);
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    assert_eq!(
        std::mem::take(&mut *SEEN.lock().unwrap()),
        ["watch count_to task 24", "watch count_to task 24"]
    );
    let done = ended(&server, &id).await;
    assert_eq!(done["result"]["content"][0]["text"], "counted to 3");
    // The task's work runs inside the engine: no layer sees it again
    // (the server-wide layer sees the polls: `tasks/get` is a method).
    let seen = std::mem::take(&mut *SEEN.lock().unwrap());
    assert!(
        seen.iter().all(|line| line == "watch tasks/get other"),
        "{seen:?}"
    );
    assert!(!seen.is_empty());

    // Without the extension: the ordinary result, through the same stack.
    let direct = send(&server, "tools/call", params, json!({})).await;
    assert_valid("CallToolResultResponse", &direct);
    assert_eq!(direct["result"]["content"][0]["text"], "counted to 3");
    assert_eq!(
        std::mem::take(&mut *SEEN.lock().unwrap()),
        ["watch count_to result false", "watch count_to result false"]
    );

    // `timeout_ms` bounds the task's work: it fails with -31002, dropped.
    let params = json!({"name": "stuck", "arguments": {}});
    let created = send(&server, "tools/call", params, with_tasks).await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let failed = ended(&server, &id).await;
    SEEN.lock().unwrap().clear();
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["error"]["code"], -31002);
    assert_eq!(
        failed["statusMessage"],
        "Request timed out: tool stuck ran longer than its limit of 100 ms"
    );
    assert!(DROPPED.load(Ordering::SeqCst), "the handler was dropped");
}
