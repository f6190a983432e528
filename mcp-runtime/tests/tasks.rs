//! The Tasks extension through the dispatcher, in process: creation and
//! the synchronous fallback, polling to each terminal status, progress as
//! the status message, asks inside a task answered with `tasks/update`
//! (also in parts), declared asks in rounds before the task, cancellation,
//! panics, owners, and the errors of the `tasks/*` methods. Every message
//! is validated against the spec's schema and the extension's.

use std::time::Duration;

use mcp_runtime::{ElicitForm, Elicitation, Input, Progress, Server, ServerBuilder, tool};
use mcp_test_support::{assert_valid, assert_valid_error, assert_valid_task, meta_with, parse};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------
// Handlers

/// A yes or no.
#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Confirm {
    confirm: bool,
}

/// A name.
#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Name {
    name: String,
}

/// Waits `ms` milliseconds, halfway reporting progress.
#[tool(task, annotations(read_only))]
async fn wait_for(ms: u64, #[ctx] progress: Progress) -> String {
    progress.report_message(1.0, Some(2.0), "halfway");
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("waited {ms} ms")
}

/// Answers at once if it is quick.
#[tool(task(answer_within_ms = 2000), annotations(read_only))]
async fn maybe_quick(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    "done".to_owned()
}

/// Always fails, as a tool.
#[tool(task, annotations(read_only))]
fn refuse() -> Result<String, String> {
    Err("the job failed".into())
}

/// Panics.
#[tool(task, annotations(read_only))]
fn explode() -> String {
    panic!("boom")
}

/// Asks for approval in the middle of its work.
#[tool(task)]
async fn approve(what: String, #[ctx] input: Input) -> String {
    match input.elicit::<Confirm>(format!("Approve {what}?")).await {
        Elicitation::Accepted(Confirm { confirm: true }) => format!("approved {what}"),
        _ => format!("not approved {what}"),
    }
}

/// Asks two questions at once.
#[tool(task, annotations(read_only))]
async fn two_names(#[ctx] input: Input) -> String {
    let (a, b) = tokio::join!(
        input.elicit::<Name>("First name?"),
        input.elicit::<Name>("Second name?")
    );
    let name = |answer: Elicitation<Name>| answer.accepted().map_or("-".into(), |n| n.name);
    format!("{} and {}", name(a), name(b))
}

/// Only as a task.
#[tool(task(required), annotations(read_only))]
fn only_as_task() -> &'static str {
    "ran"
}

/// Greets, asking the name in rounds before the task.
#[tool(task, annotations(read_only))]
async fn greet_later(#[elicit("Your name?")] who: Elicitation<Name>) -> String {
    tokio::time::sleep(Duration::from_millis(50)).await;
    match who {
        Elicitation::Accepted(Name { name }) => format!("Hello, {name}!"),
        _ => "Hello, stranger!".into(),
    }
}

// ---------------------------------------------------------------------------
// Helpers

const TASKS: &str = "io.modelcontextprotocol/tasks";

fn server() -> Server {
    ServerBuilder::new("tasks-test", "1.0.0").build().unwrap()
}

/// Capabilities with the extension (and form elicitation).
fn with_tasks() -> Value {
    json!({"elicitation": {"form": {}}, "extensions": {TASKS: {}}})
}

async fn send(server: &Server, method: &str, mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = meta_with(capabilities);
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let exchange = server.exchange(message.to_string()).await;
    parse(&exchange.response.expect("a response"))
}

async fn call(server: &Server, name: &str, arguments: Value, capabilities: Value) -> Value {
    let params = json!({"name": name, "arguments": arguments});
    send(server, "tools/call", params, capabilities).await
}

/// Creates a task; its id.
async fn create(server: &Server, name: &str, arguments: Value) -> String {
    let response = call(server, name, arguments, with_tasks()).await;
    assert_eq!(response["result"]["resultType"], "task", "{response}");
    assert_valid_task("CreateTaskResult", &response["result"]);
    response["result"]["taskId"].as_str().unwrap().to_owned()
}

async fn get(server: &Server, id: &str) -> Value {
    let response = send(server, "tasks/get", json!({"taskId": id}), with_tasks()).await;
    if response.get("error").is_none() {
        assert_valid_task("GetTaskResult", &response["result"]);
    }
    response
}

/// Polls until the task reaches `status` or ends.
async fn until(server: &Server, id: &str, status: &str) -> Value {
    for _ in 0..500 {
        let task = get(server, id).await["result"].clone();
        let now = task["status"].as_str().unwrap_or_default();
        if now == status || ["completed", "failed", "cancelled"].contains(&now) {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("task {id} never reached {status}");
}

// ---------------------------------------------------------------------------
// Tests

#[tokio::test]
async fn a_task_is_created_polled_and_completed() {
    let server = server();
    let response = call(&server, "wait_for", json!({"ms": 200}), with_tasks()).await;
    let created = &response["result"];
    assert_valid_task("CreateTaskResult", created);
    assert_eq!(created["status"], "working");
    assert_eq!(created["ttlMs"], 3_600_000);
    assert_eq!(created["pollIntervalMs"], 1000);
    for absent in ["requestState", "result", "error", "inputRequests", "task"] {
        assert!(created.get(absent).is_none(), "{absent} in {created}");
    }
    let id = created["taskId"].as_str().unwrap();
    assert_eq!(id.len(), 24);
    // Durable at once: the first get finds it.
    let first = get(&server, id).await;
    assert_eq!(first["result"]["resultType"], "complete");
    let done = until(&server, id, "completed").await;
    assert_eq!(done["status"], "completed");
    assert_eq!(
        done["result"],
        json!({"resultType": "complete", "content": [{"type": "text", "text": "waited 200 ms"}]})
    );
    assert_eq!(done["statusMessage"], "halfway");
    assert!(done["result"].get("_meta").is_none());
}

#[tokio::test]
async fn progress_becomes_the_status_message_while_working() {
    let server = server();
    let id = create(&server, "wait_for", json!({"ms": 400})).await;
    let mut seen = None;
    for _ in 0..100 {
        let task = get(&server, &id).await["result"].clone();
        if task["statusMessage"] == "halfway" {
            seen = Some(task);
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let task = seen.expect("the progress message shows");
    assert_eq!(task["status"], "working");
    assert_eq!(
        task["_meta"]["rs.mcp-runtime/progress"],
        json!({"progress": 1.0, "total": 2.0})
    );
}

#[tokio::test]
async fn without_the_extension_the_call_is_synchronous() {
    let server = server();
    let response = call(&server, "wait_for", json!({"ms": 1}), json!({})).await;
    assert_valid("CallToolResult", &response["result"]);
    assert_eq!(response["result"]["content"][0]["text"], "waited 1 ms");
    assert!(response["result"].get("taskId").is_none());
}

#[tokio::test]
async fn a_required_task_refuses_clients_without_the_extension() {
    let server = server();
    let response = call(&server, "only_as_task", json!({}), json!({})).await;
    assert_valid_error(&response);
    assert_eq!(response["error"]["code"], -32021);
    assert_eq!(
        response["error"]["data"]["requiredCapabilities"],
        json!({"extensions": {TASKS: {}}})
    );
    let id = create(&server, "only_as_task", json!({})).await;
    assert_eq!(
        until(&server, &id, "completed").await["result"]["content"][0]["text"],
        "ran"
    );
}

#[tokio::test]
async fn a_quick_call_is_answered_directly() {
    let server = server();
    let response = call(&server, "maybe_quick", json!({"ms": 1}), with_tasks()).await;
    assert_eq!(response["result"]["resultType"], "complete", "{response}");
    assert_eq!(response["result"]["content"][0]["text"], "done");
    let response = call(&server, "maybe_quick", json!({"ms": 3000}), with_tasks()).await;
    assert_eq!(response["result"]["resultType"], "task", "{response}");
}

#[tokio::test]
async fn a_tool_error_completes_and_a_panic_fails() {
    let server = server();
    let id = create(&server, "refuse", json!({})).await;
    let task = until(&server, &id, "completed").await;
    assert_eq!(task["status"], "completed");
    assert_eq!(task["result"]["isError"], true);
    assert_eq!(task["result"]["content"][0]["text"], "the job failed");

    let id = create(&server, "explode", json!({})).await;
    let task = until(&server, &id, "failed").await;
    assert_eq!(task["status"], "failed");
    assert_eq!(task["error"]["code"], -32603);
    assert!(task.get("result").is_none());
    assert_eq!(task["statusMessage"], "Internal error");
    // The server serves on.
    let id = create(&server, "refuse", json!({})).await;
    assert_eq!(
        until(&server, &id, "completed").await["status"],
        "completed"
    );
}

#[tokio::test]
async fn an_ask_puts_the_task_in_input_required_until_answered() {
    let server = server();
    let id = create(&server, "approve", json!({"what": "release"})).await;
    let task = until(&server, &id, "input_required").await;
    assert_eq!(task["status"], "input_required");
    let requests = task["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1);
    let (key, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Approve release?");
    let answer = json!({"taskId": id, "inputResponses": {
        key: {"action": "accept", "content": {"confirm": true}},
        "not-asked": {"action": "accept"}
    }});
    let ack = send(&server, "tasks/update", answer, with_tasks()).await;
    assert_eq!(
        ack["result"],
        json!({"resultType": "complete", "_meta": ack["result"]["_meta"]})
    );
    let done = until(&server, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "approved release");
}

#[tokio::test]
async fn partial_answers_keep_the_task_waiting_for_the_rest() {
    let server = server();
    let id = create(&server, "two_names", json!({})).await;
    let mut task = until(&server, &id, "input_required").await;
    for _ in 0..100 {
        if task["inputRequests"].as_object().unwrap().len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
        task = get(&server, &id).await["result"].clone();
    }
    let keys: Vec<String> = task["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys.len(), 2, "{task}");
    let answer = |key: &str, name: &str| json!({"taskId": id, "inputResponses": {key: {"action": "accept", "content": {"name": name}}}});
    send(
        &server,
        "tasks/update",
        answer(&keys[0], "Ada"),
        with_tasks(),
    )
    .await;
    let waiting = get(&server, &id).await["result"].clone();
    assert_eq!(waiting["status"], "input_required");
    let left: Vec<&String> = waiting["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(left, [&keys[1]]);
    send(
        &server,
        "tasks/update",
        answer(&keys[1], "Grace"),
        with_tasks(),
    )
    .await;
    let done = until(&server, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Ada and Grace");
}

#[tokio::test]
async fn declared_asks_are_answered_in_rounds_before_the_task() {
    let server = server();
    let first = call(&server, "greet_later", json!({}), with_tasks()).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    assert!(first["result"].get("taskId").is_none());
    let state = first["result"]["requestState"].clone();
    let params = json!({
        "name": "greet_later",
        "arguments": {},
        "inputResponses": {"who": {"action": "accept", "content": {"name": "Alice"}}},
        "requestState": state,
    });
    let second = send(&server, "tools/call", params, with_tasks()).await;
    assert_eq!(second["result"]["resultType"], "task", "{second}");
    assert!(second["result"].get("requestState").is_none());
    let id = second["result"]["taskId"].as_str().unwrap();
    let done = until(&server, id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Alice!");
}

#[tokio::test]
async fn cancel_stops_running_and_waiting_tasks_and_is_idempotent() {
    let server = server();
    for (tool, arguments) in [
        ("wait_for", json!({"ms": 60_000})),
        ("approve", json!({"what": "x"})),
    ] {
        let id = create(&server, tool, arguments).await;
        let ack = send(&server, "tasks/cancel", json!({"taskId": id}), with_tasks()).await;
        assert_eq!(ack["result"]["resultType"], "complete");
        for absent in ["taskId", "status", "result", "error", "inputRequests"] {
            assert!(ack["result"].get(absent).is_none());
        }
        let task = until(&server, &id, "cancelled").await;
        assert_eq!(task["status"], "cancelled");
        let again = send(&server, "tasks/cancel", json!({"taskId": id}), with_tasks()).await;
        assert_eq!(again["result"]["resultType"], "complete");
        assert_eq!(get(&server, &id).await["result"]["status"], "cancelled");
    }
}

#[tokio::test]
async fn tasks_methods_need_the_extension_and_a_known_id() {
    let server = server();
    for (method, params) in [
        ("tasks/get", json!({"taskId": "x"})),
        ("tasks/update", json!({"taskId": "x", "inputResponses": {}})),
        ("tasks/cancel", json!({"taskId": "x"})),
    ] {
        let response = send(&server, method, params.clone(), json!({})).await;
        assert_valid_error(&response);
        assert_eq!(response["error"]["code"], -32021, "{method}");
        let response = send(&server, method, params, with_tasks()).await;
        assert_valid_error(&response);
        assert_eq!(response["error"]["code"], -32602, "{method}");
        assert_eq!(
            response["error"]["message"],
            "Failed to retrieve task: Task not found"
        );
    }
    for removed in ["tasks/result", "tasks/list"] {
        let response = send(&server, removed, json!({"taskId": "x"}), with_tasks()).await;
        assert_eq!(response["error"]["code"], -32601, "{removed}");
    }
    let bad = json!({"taskId": "x", "inputResponses": [1]});
    let response = send(&server, "tasks/update", bad, with_tasks()).await;
    assert_eq!(response["error"]["code"], -32602);
}

#[tokio::test]
async fn discover_advertises_the_extension() {
    let server = server();
    let response = send(&server, "server/discover", json!({}), json!({})).await;
    assert_eq!(
        response["result"]["capabilities"]["extensions"][TASKS],
        json!({})
    );
}
