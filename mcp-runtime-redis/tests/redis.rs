//! Shared state in a real Redis: several servers of one process stand in
//! for instances behind a load balancer (each has its own connections,
//! pub/sub and task workers; they share only the key prefix and the state
//! keys). `tests/cluster/run.sh` runs real processes behind nginx.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mcp_runtime::mrtr::{Elicitation, FirstUse, Input, ReplayGuard, StateUse};
use mcp_runtime::security::{KeyRing, RateLimiter};
use mcp_runtime::tasks::{Lease, TaskStatus, TaskStore};
use mcp_runtime::testing::TestClient;
use mcp_runtime::{Change, ChangeBus, ElicitForm, Server, ServerBuilder, tool};
use mcp_runtime_redis::{
    Redis, RedisBus, RedisConfig, RedisRateLimiter, RedisReplayGuard, RedisTaskStore,
};
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
        .request_state(mcp_runtime::RequestStateOptions::new().keys(KeyRing::new(KEY)))
        .with(config)
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
    // A new deployment's memory of used states begins when its first
    // instance starts; what is issued within 2 s of that (3 s: a state's
    // time is kept in whole seconds) is refused.
    tokio::time::sleep(Duration::from_millis(3_100)).await;
    let first = answer(&a, delete("/tmp/x", json!({}))).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let state = &first["result"]["requestState"];
    // Answered on another instance: it runs there.
    let done = answer(&b, delete("/tmp/x", yes(state))).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "deleted /tmp/x",
        "{done}"
    );
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
    // Another prefix is another deployment, whose memory began after the
    // state was issued: it cannot know, and refuses it too.
    let other = instance(config(&unique_prefix("replay-other")));
    let refused = answer(&other, delete("/tmp/x", yes(state))).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
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

/// A task leased to worker `w`.
fn leased(id: &str, owner: &str, now_ms: u64) -> mcp_runtime::tasks::TaskRecord {
    let mut record = record(id, owner, now_ms, 60_000);
    record.lease = Some(Lease {
        worker: "w".into(),
        expires_at_ms: now_ms + 60_000,
    });
    record
}

/// Ends task `id`, run by worker `w`.
async fn finish(store: &RedisTaskStore, id: &str, now_ms: u64) {
    let mut update = mcp_runtime::tasks::TaskUpdate::default();
    update.outcome = Some(mcp_runtime::tasks::TaskOutcome::Cancelled);
    let ended = store.update(id, "w", update, now_ms).await.unwrap();
    assert_eq!(ended.status, TaskStatus::Cancelled);
}

#[tokio::test]
async fn finished_tasks_make_room_and_have_their_own_bound() {
    let redis = Redis::connect(&config(&unique_prefix("finished"))).unwrap();
    let store = RedisTaskStore::new(&redis)
        .max_per_owner(1)
        .max_finished_per_owner(2);
    let now = now_ms();
    for id in ["f1", "f2", "f3"] {
        store.create(leased(id, "busy", now)).await.unwrap();
        let refused = store.create(leased("extra", "busy", now)).await;
        assert!(
            matches!(&refused, Err(mcp_runtime::tasks::StoreError::Quota(why)) if why.contains("1 running tasks")),
            "{refused:?}"
        );
        finish(&store, id, now).await;
    }
    // The oldest finished one made room for the newest.
    assert_eq!(store.get("f1", "busy", now).await.unwrap(), None);
    for id in ["f2", "f3"] {
        let kept = store.get(id, "busy", now).await.unwrap().unwrap();
        assert_eq!(kept.status, TaskStatus::Cancelled);
    }
    store.create(leased("f4", "busy", now)).await.unwrap();
}

#[tokio::test]
async fn a_handful_of_owners_cannot_fill_the_shared_store() {
    // The defect: no global bound at all, so ten addresses with 1,000 tasks
    // each grew Redis without limit. Now the store holds `max_tasks`, and
    // an owner gets less than 1/8 of what is free once it runs short.
    let redis = Redis::connect(&config(&unique_prefix("fair"))).unwrap();
    let store = RedisTaskStore::new(&redis).max_tasks(80);
    let now = now_ms();
    let mut held = Vec::new();
    for owner in 0..8 {
        let owner = format!("flood{owner}");
        let mut taken = 0;
        while store
            .create(leased(&format!("{owner}-{taken}"), &owner, now))
            .await
            .is_ok()
        {
            taken += 1;
        }
        held.push(taken);
    }
    assert_eq!(held, [10, 10, 10, 10, 5, 4, 4, 3]);
    let refused = store.create(leased("flood0-x", "flood0", now)).await;
    assert!(
        matches!(&refused, Err(mcp_runtime::tasks::StoreError::Quota(why)) if why.contains("its share")),
        "{refused:?}"
    );
    store.create(leased("victim", "victim", now)).await.unwrap();

    // An owner at its share makes room with its finished tasks, closest
    // to expiry first, and the store's count follows.
    for n in 0..3 {
        finish(&store, &format!("flood7-{n}"), now).await;
    }
    store
        .create(leased("flood7-new", "flood7", now))
        .await
        .unwrap();
    assert_eq!(store.get("flood7-0", "flood7", now).await.unwrap(), None);
}

/// A Redis database of this test's own, so that its data can be lost
/// (`FLUSHDB`) without touching the other tests'.
const LOSSY_DB: u8 = 13;

/// Runs `args` on the test's own database, as an operator would.
async fn redis_command(args: &[&str]) {
    let url = format!("{}/{LOSSY_DB}", url().trim_end_matches('/'));
    let client = ::redis::Client::open(url).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let mut command = ::redis::cmd(args[0]);
    for arg in &args[1..] {
        command.arg(*arg);
    }
    let _: ::redis::Value = command.query_async(&mut connection).await.unwrap();
}

#[tokio::test]
async fn a_used_state_stays_used_after_redis_loses_its_data() {
    let url = format!("{}/{LOSSY_DB}", url().trim_end_matches('/'));
    let prefix = unique_prefix("lossy");
    let redis = Redis::connect(&RedisConfig::new(url).key_prefix(&prefix)).unwrap();
    let guard = RedisReplayGuard::new(&redis);
    // The guard's memory begins when it is made: a state must be issued
    // more than 2 s after that (the instances' clocks are not Redis's).
    let warm = SystemTime::now();
    let state = StateUse::new("warm-up", warm, warm + Duration::from_secs(60));
    ReplayGuard::first_use(&guard, state, warm).await.unwrap();
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    let issued = SystemTime::now();
    let state = || StateUse::new("nonce-1", issued, issued + Duration::from_secs(60));
    assert!(
        ReplayGuard::first_use(&guard, state(), issued)
            .await
            .unwrap(),
        "first use"
    );
    assert!(
        !ReplayGuard::first_use(&guard, state(), issued)
            .await
            .unwrap(),
        "replay"
    );
    // Redis loses everything, and goes on running.
    redis_command(&["FLUSHDB"]).await;
    assert!(
        !ReplayGuard::first_use(&guard, state(), SystemTime::now())
            .await
            .unwrap(),
        "a replay after the data loss is still refused"
    );
    // A failover: the marker names another Redis process.
    let marker = format!("{prefix}replay-memory");
    redis_command(&["SET", &marker, "1:another-run-id"]).await;
    let later = SystemTime::now();
    let fresh = StateUse::new("nonce-2", later, later + Duration::from_secs(60));
    assert!(
        !ReplayGuard::first_use(&guard, fresh, later).await.unwrap(),
        "a state issued before the memory began again is refused"
    );
}

/// A guard whose memory begins now cannot vouch for a state (or a DPoP
/// proof: the resource server asks the same guard) made in its first
/// seconds: it says so (`BeforeMemory`, which the DPoP check words as
/// "replay memory younger than the proof"), rather than call it a replay.
#[tokio::test]
async fn a_just_started_guard_says_its_memory_is_younger_than_a_fresh_state() {
    let config = RedisConfig::new(url()).key_prefix(unique_prefix("young-memory"));
    let guard = RedisReplayGuard::new(&Redis::connect(&config).unwrap());
    let now = SystemTime::now();
    let state = StateUse::new("fresh", now, now + Duration::from_secs(60));
    let verdict = guard.verdict(state, now).await;
    assert!(matches!(verdict, Ok(FirstUse::BeforeMemory)), "{verdict:?}");
}
