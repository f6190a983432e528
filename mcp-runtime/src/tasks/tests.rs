//! The store's rules, on the in-memory store.

use serde_json::{Map, Value, json};

use super::*;

fn record(id: &str, owner: &str, now: u64) -> TaskRecord {
    let mut record = TaskRecord::new(id.into(), owner.into(), now, 1_000, 100);
    record.lease = Some(Lease {
        worker: "w".into(),
        expires_at_ms: now + 30_000,
    });
    record
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => panic!("not an object"),
    }
}

#[test]
fn ids_are_long_random_and_plausible() {
    let a = new_id();
    let b = new_id();
    assert_eq!(a.len(), 24);
    assert_ne!(a, b);
    assert!(plausible_id(&a));
    assert!(!plausible_id(""));
    assert!(!plausible_id(&"x".repeat(129)));
    assert!(!plausible_id("a b"));
    assert!(!plausible_id("a\u{0}"));
}

#[test]
fn another_owner_sees_nothing() {
    block_on(async {
        let store = InMemoryTaskStore::new();
        store.create(record("t1", "alice", 0)).await.unwrap();
        assert!(store.get("t1", "alice", 1).await.unwrap().is_some());
        assert_eq!(store.get("t1", "bob", 1).await.unwrap(), None);
        assert_eq!(store.cancel("t1", "bob", 1).await.unwrap(), None);
        let answers = object(json!({"k": {"action": "accept"}}));
        assert_eq!(store.respond("t1", "bob", answers, 1).await.unwrap(), None);
        assert!(
            !store
                .get("t1", "alice", 1)
                .await
                .unwrap()
                .unwrap()
                .cancel_requested
        );
    });
}

#[test]
fn tasks_expire_after_their_ttl_and_not_before() {
    block_on(async {
        let store = InMemoryTaskStore::new();
        store.create(record("t1", "a", 0)).await.unwrap();
        assert!(store.get("t1", "a", 999).await.unwrap().is_some());
        assert_eq!(store.get("t1", "a", 1_000).await.unwrap(), None);
        assert!(store.is_empty(), "swept");
        let update = TaskUpdate::default();
        assert_eq!(
            store.update("t1", "w", update, 1_001).await,
            Err(StoreError::LeaseLost)
        );
    });
}

#[test]
fn limits_refuse_with_clear_errors() {
    block_on(async {
        let store = InMemoryTaskStore::new().max_tasks(2).max_per_owner(1);
        store.create(record("t1", "a", 0)).await.unwrap();
        let quota = store.create(record("t2", "a", 0)).await.unwrap_err();
        assert!(
            matches!(&quota, StoreError::Quota(why) if why.contains("1 running tasks")),
            "{quota}"
        );
        store.create(record("t3", "b", 0)).await.unwrap();
        let full = store.create(record("t4", "c", 0)).await.unwrap_err();
        assert!(
            matches!(&full, StoreError::Full(why) if why.contains("2 tasks")),
            "{full}"
        );
        // Expiry frees the room.
        store.create(record("t5", "c", 1_000)).await.unwrap();
    });
}

#[test]
fn a_result_too_large_fails_its_task() {
    block_on(async {
        let store = InMemoryTaskStore::new().max_bytes(4_096);
        store.create(record("t1", "a", 0)).await.unwrap();
        let big = serde_json::value::to_raw_value(&"x".repeat(10_000)).unwrap();
        let update = TaskUpdate {
            outcome: Some(TaskOutcome::Completed(big)),
            ..TaskUpdate::default()
        };
        let written = store.update("t1", "w", update, 5).await.unwrap();
        assert_eq!(written.status, TaskStatus::Failed);
        assert!(written.status_message.unwrap().contains("does not fit"));
    });
}

#[test]
fn answers_go_to_outstanding_requests_only() {
    block_on(async {
        let store = InMemoryTaskStore::new();
        store.create(record("t1", "a", 0)).await.unwrap();
        let update = TaskUpdate {
            new_input_requests: object(
                json!({"x": {"method": "roots/list"}, "y": {"method": "roots/list"}}),
            ),
            ..TaskUpdate::default()
        };
        let written = store.update("t1", "w", update, 1).await.unwrap();
        assert_eq!(written.status, TaskStatus::InputRequired);
        let answers = object(json!({"x": {"roots": []}, "nope": {}}));
        let after = store.respond("t1", "a", answers, 2).await.unwrap().unwrap();
        assert_eq!(after.status, TaskStatus::InputRequired);
        assert_eq!(after.input_requests.keys().collect::<Vec<_>>(), ["y"]);
        let signals = store.signals("t1", "w", Duration::ZERO).await.unwrap();
        assert_eq!(signals.responses.keys().collect::<Vec<_>>(), ["x"]);
        // An answered key never comes back, whatever the worker writes.
        let again = TaskUpdate {
            new_input_requests: object(json!({"x": {"method": "roots/list"}})),
            ..TaskUpdate::default()
        };
        let written = store.update("t1", "w", again, 3).await.unwrap();
        assert_eq!(written.input_requests.keys().collect::<Vec<_>>(), ["y"]);
        let answers = object(json!({"y": {"roots": []}}));
        let after = store.respond("t1", "a", answers, 4).await.unwrap().unwrap();
        assert_eq!(after.status, TaskStatus::Working);
    });
}

#[test]
fn a_task_whose_lease_ran_out_is_failed() {
    block_on(async {
        let store = InMemoryTaskStore::new();
        store.create(record("t1", "a", 0)).await.unwrap();
        let seen = store.get("t1", "a", 30_001).await.unwrap();
        // The TTL (1 s) passed first here; use a longer one.
        assert_eq!(seen, None);
        let mut long = record("t2", "a", 0);
        long.ttl_ms = 120_000;
        store.create(long).await.unwrap();
        let seen = store.get("t2", "a", 30_001).await.unwrap().unwrap();
        assert_eq!(seen.status, TaskStatus::Failed);
        assert!(
            seen.status_message
                .unwrap()
                .contains("stopped before the task ended")
        );
        let update = TaskUpdate::default();
        assert_eq!(
            store.update("t2", "w", update, 30_002).await,
            Err(StoreError::LeaseLost)
        );
    });
}

#[test]
fn records_round_trip_through_json() {
    let mut record = record("t1", "a", 0);
    record.outcome = Some(TaskOutcome::Completed(
        serde_json::value::to_raw_value(&json!({"content": []})).unwrap(),
    ));
    record.status = record.derive_status();
    let text = serde_json::to_string(&record).unwrap();
    let back: TaskRecord = serde_json::from_str(&text).unwrap();
    assert_eq!(back, record);
}

#[test]
fn timestamps_are_rfc_3339() {
    assert_eq!(wire::timestamp(0), "1970-01-01T00:00:00Z");
    assert_eq!(
        wire::timestamp(1_764_619_200_123),
        "2025-12-01T20:00:00.123Z"
    );
}

/// Ends task `id` (run by worker `w`): cancelled.
async fn finish(store: &InMemoryTaskStore, id: &str, now: u64) {
    let update = TaskUpdate {
        outcome: Some(TaskOutcome::Cancelled),
        ..TaskUpdate::default()
    };
    let ended = store.update(id, "w", update, now).await.unwrap();
    assert!(ended.status.is_terminal());
}

#[test]
fn finished_tasks_do_not_count_against_the_running_quota() {
    block_on(async {
        let store = InMemoryTaskStore::new().max_per_owner(2);
        store.create(record("t1", "a", 0)).await.unwrap();
        store.create(record("t2", "a", 0)).await.unwrap();
        let quota = store.create(record("t3", "a", 0)).await.unwrap_err();
        assert!(
            matches!(&quota, StoreError::Quota(why) if why.contains("2 running tasks")),
            "{quota}"
        );
        finish(&store, "t1", 1).await;
        store.create(record("t3", "a", 1)).await.unwrap();
        // The finished one is still there to read.
        assert!(store.get("t1", "a", 2).await.unwrap().is_some());
    });
}

#[test]
fn an_owners_oldest_finished_task_makes_room_past_the_bound() {
    block_on(async {
        let store = InMemoryTaskStore::new()
            .max_per_owner(1)
            .max_finished_per_owner(2);
        for (n, id) in ["t1", "t2", "t3"].into_iter().enumerate() {
            let now = n as u64;
            store.create(record(id, "a", now)).await.unwrap();
            finish(&store, id, now).await;
        }
        store.create(record("b1", "b", 3)).await.unwrap();
        finish(&store, "b1", 3).await;
        assert_eq!(store.get("t1", "a", 4).await.unwrap(), None, "dropped");
        assert!(store.get("t2", "a", 4).await.unwrap().is_some());
        assert!(store.get("t3", "a", 4).await.unwrap().is_some());
        assert!(
            store.get("b1", "b", 4).await.unwrap().is_some(),
            "another owner's stays"
        );
        assert_eq!(store.len(), 3);
        // Expiry takes the rest out of the counts.
        assert_eq!(store.get("t3", "a", 1_003).await.unwrap(), None);
        assert!(store.is_empty());
        store.create(record("t4", "a", 1_004)).await.unwrap();
    });
}

#[test]
fn a_handful_of_owners_cannot_fill_the_store_for_everyone() {
    block_on(async {
        // 80 tasks: an owner holds at most 10, and fewer once the store is
        // more than half full. Before, one owner filled it (1,000 running
        // tasks each), and ten owners filled 10,000.
        let store = InMemoryTaskStore::new().max_tasks(80);
        let mut held = Vec::new();
        for owner in 0..8 {
            let owner = format!("flood{owner}");
            let mut taken = 0;
            while store
                .create(record(&format!("{owner}-{taken}"), &owner, 0))
                .await
                .is_ok()
            {
                taken += 1;
            }
            held.push(taken);
        }
        assert_eq!(held, [10, 10, 10, 10, 5, 4, 4, 3]);
        // Refused for its share, not because the store is full.
        let refused = store.create(record("flood0-x", "flood0", 0)).await;
        assert!(
            matches!(&refused, Err(StoreError::Quota(why)) if why.contains("its share")),
            "{refused:?}"
        );
        store.create(record("victim", "victim", 0)).await.unwrap();
    });
}

#[test]
fn an_owner_at_its_share_makes_room_with_its_finished_tasks() {
    block_on(async {
        let store = InMemoryTaskStore::new().max_tasks(16);
        // Share: 2. Tasks that finish at once still count, until their
        // owner needs the room.
        for (n, id) in ["t1", "t2", "t3"].into_iter().enumerate() {
            store.create(record(id, "a", n as u64)).await.unwrap();
            finish(&store, id, n as u64).await;
        }
        assert_eq!(store.get("t1", "a", 4).await.unwrap(), None, "made room");
        assert!(store.get("t3", "a", 4).await.unwrap().is_some());
        assert_eq!(store.len(), 2);
    });
}
