//! `tasks/update` with answers that do not fit their asks: the update is
//! refused with `-32602` naming the key and the field at fault, and the
//! task keeps waiting in `input_required` with the same ask, so that a
//! correct answer still completes it. Answers for keys that are not
//! outstanding are ignored, as the spec asks. (`mcp-runtime-redis` runs
//! the same through Redis.)

#[path = "tasks_update/answers.rs"]
mod answers;

use answers::*;
use serde_json::{Value, json};
use std::time::Duration;

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
