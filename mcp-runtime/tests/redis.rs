#![cfg(all(feature = "redis", feature = "client"))]
//! Shared state in a real Redis: several servers of one process stand in
//! for instances behind a load balancer (each has its own connections,
//! pub/sub and task workers; they share only the key prefix and the state
//! keys). `tests/cluster/run.sh` runs real processes behind nginx.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mcp_runtime::mrtr::{Elicitation, Input, ReplayGuard, StateUse};
use mcp_runtime::redis::{
    Redis, RedisBus, RedisConfig, RedisRateLimiter, RedisReplayGuard, RedisTaskStore,
};
use mcp_runtime::security::{KeyRing, RateLimiter};
use mcp_runtime::tasks::{Lease, TaskStatus, TaskStore};
use mcp_runtime::testing::TestClient;
use mcp_runtime::{Change, ChangeBus, ElicitForm, Server, ServerBuilder, tool};
use mcp_test_support::redis::{dead_address, unique_prefix, url};
use serde_json::{Value, json};

const KEY: [u8; 32] = [7; 32];

#[derive(Debug, serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Confirm {
    ok: bool,
}

/// Deletes a file once the user confirms: its states are single use.
#[tool(annotations(destructive))]
fn delete_file(path: String, #[elicit("Delete {path}?")] sure: Elicitation<Confirm>) -> String {
    match sure {
        Elicitation::Accepted(Confirm { ok: true }) => format!("deleted {path}"),
        _ => format!("kept {path}"),
    }
}

/// Echoes the text.
#[tool(annotations(read_only))]
fn echo(text: String) -> String {
    text
}

/// Asks for approval midway, as a task.
#[tool(task)]
async fn approve(item: String, #[ctx] input: Input) -> String {
    match input.elicit::<Confirm>(format!("Approve {item}?")).await {
        Elicitation::Accepted(Confirm { ok: true }) => format!("approved {item}"),
        _ => format!("rejected {item}"),
    }
}

/// Runs until cancelled.
#[tool(task)]
async fn forever() -> String {
    tokio::time::sleep(Duration::from_secs(3600)).await;
    "never".into()
}

fn instance(config: RedisConfig) -> Server {
    ServerBuilder::new("redis-test", "1.0.0")
        .without_server_info_in_results()
        .state_keys(KeyRing::new(KEY))
        .redis(config)
        .build()
        .expect("builds")
}

fn config(prefix: &str) -> RedisConfig {
    RedisConfig::new(url()).key_prefix(prefix)
}

fn message(id: i64, method: &str, params: Value) -> String {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

async fn answer(server: &Server, message: String) -> Value {
    let response = server.exchange(message).await.response.expect("a response");
    serde_json::from_str(&response).expect("JSON")
}

fn delete(path: &str, retry: Value) -> String {
    let mut params = json!({"name": "delete_file", "arguments": {"path": path}});
    if let Value::Object(retry) = retry {
        params.as_object_mut().unwrap().extend(retry);
    }
    message(1, "tools/call", params)
}

fn yes(state: &Value) -> Value {
    json!({
        "inputResponses": {"sure": {"action": "accept", "content": {"ok": true}}},
        "requestState": state
    })
}

#[tokio::test]
async fn a_single_use_state_opens_once_across_instances() {
    let prefix = unique_prefix("replay");
    let (a, b) = (instance(config(&prefix)), instance(config(&prefix)));
    let first = answer(&a, delete("/tmp/x", json!({}))).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let state = &first["result"]["requestState"];
    // Answered on another instance: it runs there.
    let done = answer(&b, delete("/tmp/x", yes(state))).await;
    assert_eq!(done["result"]["content"][0]["text"], "deleted /tmp/x");
    // Replayed on the first: refused, as a replay on one instance is.
    let replay = a
        .exchange(delete("/tmp/x", yes(state)))
        .await
        .response
        .unwrap();
    assert_eq!(
        replay,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid requestState: it is malformed, expired, or does not belong to this request; retry without it"}}"#
    );
    // Another prefix is another deployment: its guard has not seen it.
    let other = instance(config(&unique_prefix("replay-other")));
    let done = answer(&other, delete("/tmp/x", yes(state))).await;
    assert_eq!(done["result"]["content"][0]["text"], "deleted /tmp/x");
}

#[tokio::test]
async fn without_redis_single_use_states_are_refused_and_the_rest_is_served() {
    let server = instance(RedisConfig::new(dead_address()).key_prefix("unused:"));
    let echoed = answer(
        &server,
        message(
            1,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        ),
    )
    .await;
    assert_eq!(echoed["result"]["content"][0]["text"], "hi");
    let listed = answer(&server, message(2, "tools/list", json!({}))).await;
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    let discovered = answer(&server, message(3, "server/discover", json!({}))).await;
    assert!(
        discovered["result"]["capabilities"].is_object(),
        "{discovered}"
    );
    // The first round needs no Redis; the answer does, and fails fast.
    let first = answer(&server, delete("/tmp/y", json!({}))).await;
    let started = Instant::now();
    let refused = server
        .exchange(delete("/tmp/y", yes(&first["result"]["requestState"])))
        .await
        .response
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        refused,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-31001,"message":"requestState is single use, and whether it was used cannot be checked now; retry shortly"}}"#
    );
}

#[tokio::test]
async fn the_replay_guard_never_accepts_what_it_cannot_check() {
    let redis = Redis::connect(&RedisConfig::new(dead_address())).unwrap();
    let guard = RedisReplayGuard::new(&redis);
    let now = SystemTime::now();
    let state = StateUse::new("nonce", now, now + Duration::from_secs(60));
    let verdict = ReplayGuard::first_use(&guard, state, now).await;
    assert!(verdict.is_err(), "{verdict:?}");
}

/// Waits until `bus` hears the other instances.
async fn connected(bus: &RedisBus) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !bus.connected() {
        assert!(Instant::now() < deadline, "the bus did not connect");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn changes_reach_subscribers_on_every_instance_once() {
    let prefix = unique_prefix("bus");
    let a = RedisBus::new(&Redis::connect(&config(&prefix)).unwrap());
    let b = RedisBus::new(&Redis::connect(&config(&prefix)).unwrap());
    connected(&a).await;
    connected(&b).await;
    let (mut on_a, mut on_b) = (a.subscribe(), b.subscribe());
    a.publish(Change::ResourceUpdated("file:///x".into()));
    let heard = tokio::time::timeout(Duration::from_secs(5), on_b.recv()).await;
    assert_eq!(
        heard.unwrap().unwrap(),
        Change::ResourceUpdated("file:///x".into())
    );
    // The publisher's own subscribers hear it once, not again from Redis.
    assert_eq!(
        on_a.recv().await.unwrap(),
        Change::ResourceUpdated("file:///x".into())
    );
    b.publish(Change::ToolsListChanged);
    let next = tokio::time::timeout(Duration::from_secs(5), on_a.recv()).await;
    assert_eq!(next.unwrap().unwrap(), Change::ToolsListChanged);
    assert!(on_a.try_recv().is_err(), "a change was delivered twice");
    // A bus on another prefix hears none of it.
    let other = RedisBus::new(&Redis::connect(&config(&unique_prefix("bus-other"))).unwrap());
    connected(&other).await;
    let mut on_other = other.subscribe();
    a.publish(Change::PromptsListChanged);
    let heard = tokio::time::timeout(Duration::from_millis(500), on_other.recv()).await;
    assert!(heard.is_err(), "{heard:?}");
}

#[tokio::test]
async fn the_rate_limit_is_one_budget_for_every_instance() {
    let prefix = unique_prefix("rate");
    let a = RedisRateLimiter::new(&Redis::connect(&config(&prefix)).unwrap(), 1.0, 4);
    let b = RedisRateLimiter::new(&Redis::connect(&config(&prefix)).unwrap(), 1.0, 4);
    let mut verdicts = Vec::new();
    for limiter in [&a, &b, &a, &b, &a] {
        verdicts.push(limiter.check("203.0.113.9").verdict().await);
    }
    assert!(verdicts[..4].iter().all(Result::is_ok), "{verdicts:?}");
    let wait = verdicts[4].expect_err("the fifth call is over the shared budget");
    assert!(
        wait > Duration::from_millis(500) && wait <= Duration::from_secs(1),
        "{wait:?}"
    );
    // Another client has a budget of its own.
    assert!(b.check("203.0.113.10").verdict().await.is_ok());
}

#[tokio::test]
async fn without_redis_the_rate_limit_falls_back_to_each_instance() {
    let redis = Redis::connect(&RedisConfig::new(dead_address())).unwrap();
    let limiter = RedisRateLimiter::new(&redis, 1.0, 2);
    assert!(limiter.check("k").verdict().await.is_ok());
    assert!(limiter.check("k").verdict().await.is_ok());
    assert!(limiter.check("k").verdict().await.is_err());
}

/// A new task of `owner`, kept `ttl_ms`.
fn record(id: &str, owner: &str, now_ms: u64, ttl_ms: u64) -> mcp_runtime::tasks::TaskRecord {
    mcp_runtime::tasks::TaskRecord::new(id.into(), owner.into(), now_ms, ttl_ms, 1_000)
}

fn now_ms() -> u64 {
    u64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

#[tokio::test]
async fn a_task_asks_and_is_answered_through_another_instance() {
    let prefix = unique_prefix("tasks");
    let (a, b) = (instance(config(&prefix)), instance(config(&prefix)));
    let mut on_a = TestClient::with_server(a).elicitation().tasks();
    let mut on_b = TestClient::with_server(b).elicitation().tasks();
    let task = on_a
        .call_tool("approve", json!({"item": "v1"}))
        .await
        .task();
    // Polled on the other instance, it waits for its question there too.
    let waiting = on_b.wait_for_task(&task.id).await;
    assert_eq!(waiting.status, TaskStatus::InputRequired);
    let (key, _) = &waiting.input_requests[0];
    let answers = mcp_runtime::client::Answers::new().accept(key, json!({"ok": true}));
    // The answer lands on b; the handler running on a's worker resumes.
    on_b.answer_task(&task.id, answers).await;
    let done = on_b.wait_for_task(&task.id).await;
    assert_eq!(done.status, TaskStatus::Completed, "{done:?}");
    assert_eq!(done.result.unwrap()["content"][0]["text"], "approved v1");
}

#[tokio::test]
async fn a_task_is_cancelled_through_another_instance() {
    let prefix = unique_prefix("cancel");
    let (a, b) = (instance(config(&prefix)), instance(config(&prefix)));
    let mut on_a = TestClient::with_server(a).tasks();
    let mut on_b = TestClient::with_server(b).tasks();
    let task = on_a.call_tool("forever", json!({})).await.task();
    assert_eq!(on_b.get_task(&task.id).await.status, TaskStatus::Working);
    let started = Instant::now();
    on_b.cancel_task(&task.id).await;
    let ended = on_a.wait_for_task(&task.id).await;
    assert_eq!(ended.status, TaskStatus::Cancelled, "{ended:?}");
    // Woken over pub/sub, not by its worker's periodic look (5 s).
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_task_whose_instance_died_fails_within_its_lease() {
    let redis = Redis::connect(&config(&unique_prefix("orphan"))).unwrap();
    let store = RedisTaskStore::new(&redis);
    let now = now_ms();
    let mut record = record("t1", "owner", now, 60_000);
    record.lease = Some(Lease {
        worker: "a-dead-instance".into(),
        expires_at_ms: now + 200,
    });
    store.create(record).await.unwrap();
    let task = store.get("t1", "owner", now).await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::Working);
    // Another owner sees nothing, as for an unknown id.
    assert_eq!(store.get("t1", "someone else", now).await.unwrap(), None);
    let later = now + 300;
    let task = store.get("t1", "owner", later).await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::Failed);
    assert_eq!(
        task.status_message.as_deref(),
        Some("the server instance running this task stopped before the task ended")
    );
    // The worker, should it come back, finds it is no longer its task.
    let lost = store
        .update("t1", "a-dead-instance", Default::default(), later)
        .await;
    assert_eq!(lost.unwrap_err(), mcp_runtime::tasks::StoreError::LeaseLost);
}

#[tokio::test]
async fn the_store_keeps_each_owner_to_its_quota() {
    let redis = Redis::connect(&config(&unique_prefix("quota"))).unwrap();
    let store = Arc::new(RedisTaskStore::new(&redis).max_per_owner(2));
    let now = now_ms();
    for id in ["q1", "q2"] {
        let record = record(id, "greedy", now, 60_000);
        store.create(record).await.unwrap();
    }
    let third = record("q3", "greedy", now, 60_000);
    assert!(matches!(
        store.create(third).await,
        Err(mcp_runtime::tasks::StoreError::Quota(_))
    ));
    let other = record("q4", "modest", now, 60_000);
    store.create(other).await.unwrap();
    // An id is never reused.
    let again = record("q4", "modest", now, 60_000);
    assert!(store.create(again).await.is_err());
}
