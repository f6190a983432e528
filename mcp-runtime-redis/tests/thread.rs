//! The Redis I/O thread (`mcp-redis`) is the server's: one per server
//! built, stopped when the server is dropped, never a process global.

use std::time::Duration;

use mcp_runtime::{ServerBuilder, tool};
use mcp_runtime_redis::RedisConfig;
use mcp_test_support::call_tool;
use mcp_test_support::redis::{unique_prefix, url};
use serde_json::json;

/// Echoes.
#[tool]
fn echo(text: String) -> String {
    text
}

/// The threads of this process named `name` (Linux: `/proc/self/task`).
fn threads_named(name: &str) -> usize {
    let tasks = std::fs::read_dir("/proc/self/task").unwrap();
    let comm = |task: std::fs::DirEntry| std::fs::read_to_string(task.path().join("comm"));
    tasks
        .filter_map(|task| comm(task.ok()?).ok())
        .filter(|comm| comm.trim() == name)
        .count()
}

#[tokio::test]
async fn a_server_sharing_state_in_redis_stops_its_redis_thread_when_dropped() {
    let before = threads_named("mcp-redis");
    let server = ServerBuilder::new("shared", "1.0.0")
        .with(RedisConfig::new(url()).key_prefix(unique_prefix("thread")))
        .build()
        .unwrap();
    let answered = server
        .exchange(call_tool(1, "echo", json!({"text": "hi"})))
        .await;
    assert!(answered.response.unwrap().contains(r#""text":"hi""#));
    assert_eq!(threads_named("mcp-redis"), before + 1);
    server.stop().await;
    drop(server);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while threads_named("mcp-redis") != before {
        assert!(
            std::time::Instant::now() < deadline,
            "the Redis thread outlives its server"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
