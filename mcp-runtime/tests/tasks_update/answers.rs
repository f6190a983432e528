//! The handlers and helpers of the `tasks/update` tests, shared with
//! `mcp-runtime-redis`'s, which run the same through Redis.

use std::time::Duration;

use mcp_runtime::{ElicitForm, Elicitation, Input, Server, ServerBuilder, tool};
use mcp_test_support::{assert_valid_error, assert_valid_task, meta_with, parse};
use serde_json::{Map, Value, json};

// ---------------------------------------------------------------------------
// Handlers

/// A yes or no.
#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
pub(crate) struct Confirm {
    confirm: bool,
}

/// A name.
#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
pub(crate) struct Name {
    name: String,
}

/// Asks for approval in the middle of its work.
#[tool(task)]
pub(crate) async fn approve(what: String, #[ctx] input: Input) -> String {
    match input.elicit::<Confirm>(format!("Approve {what}?")).await {
        Elicitation::Accepted(Confirm { confirm: true }) => format!("approved {what}"),
        _ => format!("not approved {what}"),
    }
}

/// Asks two questions at once.
#[tool(task, annotations(read_only))]
pub(crate) async fn two_names(#[ctx] input: Input) -> String {
    let (a, b) = tokio::join!(
        input.elicit::<Name>("First name?"),
        input.elicit::<Name>("Second name?")
    );
    let name = |answer: Elicitation<Name>| answer.accepted().map_or("-".into(), |n| n.name);
    format!("{} and {}", name(a), name(b))
}

// ---------------------------------------------------------------------------
// Helpers

pub(crate) const TASKS: &str = "io.modelcontextprotocol/tasks";

pub(crate) fn server() -> Server {
    ServerBuilder::new("tasks-update-test", "1.0.0")
        .build()
        .unwrap()
}

/// Capabilities with the extension (and form elicitation).
pub(crate) fn with_tasks() -> Value {
    json!({"elicitation": {"form": {}}, "extensions": {TASKS: {}}})
}

pub(crate) async fn send(server: &Server, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta_with(with_tasks());
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let exchange = server.exchange(message.to_string()).await;
    parse(&exchange.response.expect("a response"))
}

/// Creates a task; its id.
pub(crate) async fn create(server: &Server, name: &str, arguments: Value) -> String {
    let params = json!({"name": name, "arguments": arguments});
    let response = send(server, "tools/call", params).await;
    assert_eq!(response["result"]["resultType"], "task", "{response}");
    assert_valid_task("CreateTaskResult", &response["result"]);
    response["result"]["taskId"].as_str().unwrap().to_owned()
}

pub(crate) async fn get(server: &Server, id: &str) -> Value {
    let response = send(server, "tasks/get", json!({"taskId": id})).await;
    assert!(response.get("error").is_none(), "{response}");
    assert_valid_task("GetTaskResult", &response["result"]);
    response["result"].clone()
}

/// Polls until the task reaches `status` or ends.
pub(crate) async fn until(server: &Server, id: &str, status: &str) -> Value {
    for _ in 0..500 {
        let task = get(server, id).await;
        let now = task["status"].as_str().unwrap_or_default();
        if now == status || ["completed", "failed", "cancelled"].contains(&now) {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("task {id} never reached {status}");
}

/// Polls until the task waits for `count` asks; its `inputRequests`.
pub(crate) async fn asks(server: &Server, id: &str, count: usize) -> Map<String, Value> {
    for _ in 0..500 {
        let task = until(server, id, "input_required").await;
        assert_eq!(task["status"], "input_required", "{task}");
        let requests = task["inputRequests"].as_object().unwrap();
        if requests.len() == count {
            return requests.clone();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("task {id} never asked {count} questions");
}

/// An `approve` task waiting for its one ask: the task's id and the ask's
/// key.
pub(crate) async fn waiting_approval(server: &Server) -> (String, String, Map<String, Value>) {
    let id = create(server, "approve", json!({"what": "release"})).await;
    let requests = asks(server, &id, 1).await;
    let key = requests.keys().next().unwrap().clone();
    assert_eq!(requests[&key]["method"], "elicitation/create");
    assert_eq!(
        requests[&key]["params"]["requestedSchema"]["required"],
        json!(["confirm"])
    );
    (id, key, requests)
}

pub(crate) async fn update(server: &Server, id: &str, responses: Value) -> Value {
    let params = json!({"taskId": id, "inputResponses": responses});
    send(server, "tasks/update", params).await
}

/// Asserts that `tasks/update` with `responses` is refused with `-32602`
/// and `message`, and that the task still waits for the same asks.
pub(crate) async fn assert_refused(
    server: &Server,
    id: &str,
    responses: Value,
    message: &str,
    asked: &Map<String, Value>,
) {
    let response = update(server, id, responses).await;
    assert_eq!(response["error"]["code"], -32602, "{response}");
    assert_eq!(response["error"]["message"], message, "{response}");
    assert_valid_error(&response);
    // Still waiting, for the very same asks, a while later too (the
    // worker would have failed the task by now had the answer reached it).
    tokio::time::sleep(Duration::from_millis(50)).await;
    let task = get(server, id).await;
    assert_eq!(task["status"], "input_required", "{task}");
    assert_eq!(
        task["inputRequests"],
        Value::Object(asked.clone()),
        "{task}"
    );
}

/// Asserts that `tasks/update` with `responses` is acknowledged.
pub(crate) async fn assert_acknowledged(server: &Server, id: &str, responses: Value) {
    // A well-formed request (the refused ones need not be: an unknown
    // action does not fit the schema's `ElicitResult` either).
    let params = json!({"taskId": id, "inputResponses": responses});
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/update", "params": params});
    assert_valid_task("UpdateTaskRequest", &request);
    let ack = update(server, id, responses).await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert_valid_task("UpdateTaskResult", &ack["result"]);
    assert_eq!(
        ack["result"],
        json!({"resultType": "complete", "_meta": ack["result"]["_meta"]})
    );
}

/// Answers the approval correctly: the task completes, approved.
pub(crate) async fn assert_approval_completes(server: &Server, id: &str, key: &str) {
    let answer = json!({key: {"action": "accept", "content": {"confirm": true}}});
    assert_acknowledged(server, id, answer).await;
    let done = until(server, id, "completed").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "approved release");
}

pub(crate) fn refusal(key: &str, problem: &str) -> String {
    format!("Invalid input response: inputResponses.{key}: {problem}")
}

// ---------------------------------------------------------------------------
// Tests
