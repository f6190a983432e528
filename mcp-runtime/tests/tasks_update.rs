//! `tasks/update` with answers that do not fit their asks: the update is
//! refused with `-32602` naming the key and the field at fault, and the
//! task keeps waiting in `input_required` with the same ask, so that a
//! correct answer still completes it. Answers for keys that are not
//! outstanding are ignored, as the spec asks. The same through Redis.

use std::time::Duration;

use mcp_runtime::{ElicitForm, Elicitation, Input, Server, ServerBuilder, tool};
use mcp_test_support::{assert_valid_error, assert_valid_task, meta_with, parse};
use serde_json::{Map, Value, json};

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

// ---------------------------------------------------------------------------
// Helpers

const TASKS: &str = "io.modelcontextprotocol/tasks";

fn server() -> Server {
    ServerBuilder::new("tasks-update-test", "1.0.0")
        .build()
        .unwrap()
}

/// Capabilities with the extension (and form elicitation).
fn with_tasks() -> Value {
    json!({"elicitation": {"form": {}}, "extensions": {TASKS: {}}})
}

async fn send(server: &Server, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta_with(with_tasks());
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let exchange = server.exchange(message.to_string()).await;
    parse(&exchange.response.expect("a response"))
}

/// Creates a task; its id.
async fn create(server: &Server, name: &str, arguments: Value) -> String {
    let params = json!({"name": name, "arguments": arguments});
    let response = send(server, "tools/call", params).await;
    assert_eq!(response["result"]["resultType"], "task", "{response}");
    assert_valid_task("CreateTaskResult", &response["result"]);
    response["result"]["taskId"].as_str().unwrap().to_owned()
}

async fn get(server: &Server, id: &str) -> Value {
    let response = send(server, "tasks/get", json!({"taskId": id})).await;
    assert!(response.get("error").is_none(), "{response}");
    assert_valid_task("GetTaskResult", &response["result"]);
    response["result"].clone()
}

/// Polls until the task reaches `status` or ends.
async fn until(server: &Server, id: &str, status: &str) -> Value {
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
async fn asks(server: &Server, id: &str, count: usize) -> Map<String, Value> {
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
async fn waiting_approval(server: &Server) -> (String, String, Map<String, Value>) {
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

async fn update(server: &Server, id: &str, responses: Value) -> Value {
    let params = json!({"taskId": id, "inputResponses": responses});
    send(server, "tasks/update", params).await
}

/// Asserts that `tasks/update` with `responses` is refused with `-32602`
/// and `message`, and that the task still waits for the same asks.
async fn assert_refused(
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
async fn assert_acknowledged(server: &Server, id: &str, responses: Value) {
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
async fn assert_approval_completes(server: &Server, id: &str, key: &str) {
    let answer = json!({key: {"action": "accept", "content": {"confirm": true}}});
    assert_acknowledged(server, id, answer).await;
    let done = until(server, id, "completed").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "approved release");
}

fn refusal(key: &str, problem: &str) -> String {
    format!("Invalid input response: inputResponses.{key}: {problem}")
}

// ---------------------------------------------------------------------------
// Tests

#[tokio::test]
async fn content_of_the_wrong_type_is_refused_and_the_task_keeps_waiting() {
    let server = server();
    let (id, key, asked) = waiting_approval(&server).await;
    let bad = json!({&key: {"action": "accept", "content": {"confirm": "yes"}}});
    let message = refusal(
        &key,
        "the submitted form does not fit: `confirm`: invalid type: string \"yes\", expected a boolean",
    );
    assert_refused(&server, &id, bad, &message, &asked).await;
    assert_approval_completes(&server, &id, &key).await;
}

#[tokio::test]
async fn content_missing_a_required_field_is_refused_and_the_task_keeps_waiting() {
    let server = server();
    let (id, key, asked) = waiting_approval(&server).await;
    let bad = json!({&key: {"action": "accept", "content": {}}});
    let message = refusal(
        &key,
        "the submitted form does not fit: missing field `confirm`",
    );
    assert_refused(&server, &id, bad, &message, &asked).await;
    assert_approval_completes(&server, &id, &key).await;
}

#[tokio::test]
async fn an_unknown_action_is_refused_and_the_task_keeps_waiting() {
    let server = server();
    let (id, key, asked) = waiting_approval(&server).await;
    let bad = json!({&key: {"action": "maybe"}});
    let message = refusal(
        &key,
        "not an elicitation result: unknown variant `maybe`, expected one of `accept`, `decline`, `cancel`",
    );
    assert_refused(&server, &id, bad, &message, &asked).await;
    assert_approval_completes(&server, &id, &key).await;
}

#[tokio::test]
async fn other_malformed_elicitation_results_are_refused() {
    let server = server();
    let (id, key, asked) = waiting_approval(&server).await;
    let cases = [
        (
            json!("yes"),
            "not an elicitation result: expected an object",
        ),
        (json!({"action": "accept"}), "accepted without `content`"),
        (
            json!({"action": "accept", "content": ["yes"]}),
            "the submitted form does not fit: expected an object",
        ),
        (
            json!({"action": "accept", "content": {"confirm": null}}),
            "the submitted form does not fit: `confirm`: invalid type: null, expected a boolean",
        ),
    ];
    for (answer, problem) in cases {
        let message = refusal(&key, problem);
        assert_refused(&server, &id, json!({&key: answer}), &message, &asked).await;
    }
    assert_approval_completes(&server, &id, &key).await;
}

/// The spec: "A server SHOULD ignore any `inputResponses` responses mapped
/// to a key that is not currently outstanding for the task".
#[tokio::test]
async fn an_answer_for_a_key_that_is_not_pending_is_ignored() {
    let server = server();
    let (id, key, asked) = waiting_approval(&server).await;
    let stray = json!({"not-asked": {"action": "accept", "content": {"confirm": "yes"}}});
    assert_acknowledged(&server, &id, stray).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    let task = get(&server, &id).await;
    assert_eq!(task["status"], "input_required", "{task}");
    assert_eq!(
        task["inputRequests"],
        Value::Object(asked.clone()),
        "{task}"
    );
    // Alongside a bad answer to a pending key, the bad answer is refused.
    let mixed = json!({
        "not-asked": {"action": "accept", "content": {"confirm": true}},
        &key: {"action": "accept", "content": {"confirm": 1}},
    });
    let message = refusal(
        &key,
        "the submitted form does not fit: `confirm`: invalid type: integer `1`, expected a boolean",
    );
    assert_refused(&server, &id, mixed, &message, &asked).await;
    assert_approval_completes(&server, &id, &key).await;
    // Once answered, the key is no longer pending: a late answer is ignored.
    let late = json!({&key: {"action": "accept", "content": {"confirm": "yes"}}});
    assert_acknowledged(&server, &id, late).await;
    assert_eq!(get(&server, &id).await["status"], "completed");
}

#[tokio::test]
async fn one_bad_answer_refuses_the_whole_update() {
    let server = server();
    let id = create(&server, "two_names", json!({})).await;
    let asked = asks(&server, &id, 2).await;
    let keys: Vec<String> = asked.keys().cloned().collect();
    let bad = json!({
        &keys[0]: {"action": "accept", "content": {"name": "Ada"}},
        &keys[1]: {"action": "accept", "content": {"name": 7}},
    });
    let message = refusal(
        &keys[1],
        "the submitted form does not fit: `name`: invalid type: integer `7`, expected a string",
    );
    assert_refused(&server, &id, bad, &message, &asked).await;
    let good = json!({
        &keys[0]: {"action": "accept", "content": {"name": "Ada"}},
        &keys[1]: {"action": "decline"},
    });
    assert_acknowledged(&server, &id, good).await;
    let done = until(&server, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Ada and -");
}

#[cfg(feature = "redis")]
mod redis {
    use super::*;
    use mcp_runtime::redis::RedisConfig;
    use mcp_test_support::redis::{unique_prefix, url};

    fn instance(prefix: &str) -> Server {
        ServerBuilder::new("tasks-update-redis", "1.0.0")
            .with(RedisConfig::new(url()).key_prefix(prefix))
            .build()
            .expect("builds")
    }

    /// Created on one instance, answered badly (then well) on another.
    #[tokio::test]
    async fn a_bad_answer_through_redis_is_refused_and_the_task_keeps_waiting() {
        let prefix = unique_prefix("tasks-update");
        let (a, b) = (instance(&prefix), instance(&prefix));
        let id = create(&a, "approve", json!({"what": "release"})).await;
        let asked = asks(&b, &id, 1).await;
        let key = asked.keys().next().unwrap().clone();
        let bad = json!({&key: {"action": "accept", "content": {"confirm": "yes"}}});
        let message = refusal(
            &key,
            "the submitted form does not fit: `confirm`: invalid type: string \"yes\", expected a boolean",
        );
        assert_refused(&b, &id, bad, &message, &asked).await;
        let stray = json!({"not-asked": {"action": "decline"}});
        assert_acknowledged(&b, &id, stray).await;
        assert_approval_completes(&b, &id, &key).await;
    }
}
