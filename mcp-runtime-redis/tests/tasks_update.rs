//! `tasks/update` through Redis: a task created on one instance and
//! answered (badly, then well) on another sharing the store. The handlers
//! and helpers are the core's `tasks_update` tests'.

#[path = "../../mcp-runtime/tests/tasks_update/answers.rs"]
#[allow(
    dead_code,
    reason = "the core's tests use all of it; these only the approval's part"
)]
mod answers;

use answers::*;
use mcp_runtime::{Server, ServerBuilder};
use mcp_runtime_redis::RedisConfig;
use mcp_test_support::redis::{unique_prefix, url};
use serde_json::json;

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
