//! The Tasks engine as the innermost item layer of a task tool: the
//! user's layers around it see the task it made (`Output::Task`), a
//! client without the extension gets the ordinary result through the same
//! stack, and the tool's `timeout_ms` bounds the task's work, which then
//! fails with `-31002` and is dropped. A layer that panics after the
//! engine made the task answers `-32603`, and the task, whose id its client
//! never learned, is cancelled and gives its place in the quota back.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_runtime::middleware::{self, BoxError, Invocation, Next, Output};
use mcp_runtime::tasks::{InMemoryTaskStore, TaskOptions};
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

/// The id of the task `panic_after_task` made, before it panicked.
static ORPHAN: Mutex<Option<String>> = Mutex::new(None);

async fn panic_after_task(call: Invocation, next: Next<Invocation>) -> Result<Output, BoxError> {
    let output = next.run(call).await?;
    if let Output::Task(handle) = &output {
        *ORPHAN.lock().unwrap() = Some(handle.id().to_owned());
        panic!("a layer bug after the task was made");
    }
    Ok(output)
}

/// Runs until cancelled, under a layer that panics once it has the task.
#[tool(task, layer = middleware::from_fn(panic_after_task))]
async fn orphaned() -> String {
    std::future::pending::<()>().await;
    unreachable!()
}

/// Runs until cancelled.
#[tool(task)]
async fn endless() -> String {
    std::future::pending::<()>().await;
    unreachable!()
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

#[tokio::test]
async fn a_layer_panicking_after_the_task_was_made_cancels_it_and_frees_its_slot() {
    // One running task per caller: the orphan would shut out the next.
    let server = ServerBuilder::new("tasks-orphans", "1.0.0")
        .with(TaskOptions::new().store(InMemoryTaskStore::new().max_per_owner(1)))
        .build()
        .unwrap();
    let with_tasks = json!({"extensions": {TASKS: {}}});

    assert_orphan_cancelled(&server, "orphaned", &ORPHAN).await;

    // Its place in the caller's quota is free: the next task is made.
    let params = json!({"name": "endless", "arguments": {}});
    let created = send(&server, "tools/call", params, with_tasks.clone()).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap();
    let ack = send(&server, "tasks/cancel", json!({"taskId": id}), with_tasks).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
}

/// The task id a request layer saw in the answer before it panicked.
static REQUEST_ORPHAN: Mutex<Option<String>> = Mutex::new(None);

/// A request layer with a bug: it panics once the call is answered with a
/// task (after the item layers, the engine among them, are done).
async fn panics_on_tasks(
    request: middleware::Request,
    next: Next<middleware::Request>,
) -> Result<middleware::Response, BoxError> {
    let call = request.method() == "tools/call";
    let response = next.run(request).await?;
    let json: Value = serde_json::from_str(response.json()).unwrap_or_default();
    if let Some(id) = json["taskId"].as_str().filter(|_| call) {
        *REQUEST_ORPHAN.lock().unwrap() = Some(id.to_owned());
        panic!("a request layer's bug, after the task was made");
    }
    Ok(response)
}

#[tokio::test]
async fn a_request_layer_panicking_after_the_task_was_made_cancels_it_too() {
    let server = ServerBuilder::new("tasks-orphans", "1.0.0")
        .with(TaskOptions::new().store(InMemoryTaskStore::new().max_per_owner(1)))
        .request_layer(middleware::from_fn(panics_on_tasks))
        .build()
        .unwrap();
    assert_orphan_cancelled(&server, "endless", &REQUEST_ORPHAN).await;
}

/// Calls `tool` as a task, which a layer's panic answers with `-32603`;
/// the task the client never heard of (its id in `seen`, where the layer
/// put it) ends cancelled, saying why.
async fn assert_orphan_cancelled(server: &Server, tool: &str, seen: &Mutex<Option<String>>) {
    let with_tasks = json!({"extensions": {TASKS: {}}});
    let params = json!({"name": tool, "arguments": {}});
    let answer = send(server, "tools/call", params, with_tasks).await;
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "Internal error"}})
    );
    let id = seen
        .lock()
        .unwrap()
        .clone()
        .expect("the layer saw the task");
    let ended = ended(server, &id).await;
    assert_eq!(ended["status"], "cancelled");
    assert_eq!(
        ended["statusMessage"],
        "Cancelled: the request that created the task failed before the client learned its id"
    );
}
