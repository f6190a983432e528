//! Task quotas are per client: one unauthenticated address that fills its
//! quota of running tasks (1,000 by default) is refused more with `429`
//! `-31000`, and a client from another address creates a task at once.
//! Before the quota was per address, every anonymous HTTP caller shared
//! one owner, and the second client got the first one's `429`.

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::{Http, Log, parse, post};
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpSocket;

const ATTACKER: [u8; 4] = [127, 0, 0, 2];
const NEIGHBOUR: [u8; 4] = [127, 0, 0, 1];
/// The default quota of running tasks per owner.
const QUOTA: usize = 1_000;

/// A `tools/call` of `linger` from a client that negotiated Tasks.
fn linger(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"linger","arguments":{{"ms":120000}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{"extensions":{{"io.modelcontextprotocol/tasks":{{}}}}}}}}}}}}"#
    )
}

/// Creates a task from `source`: the status and the JSON body.
async fn create(source: [u8; 4], address: SocketAddr, id: usize) -> (u16, Value) {
    let socket = TcpSocket::new_v4().expect("a socket");
    socket.bind(SocketAddr::from((source, 0))).expect("binds");
    let mut stream = socket.connect(address).await.expect("connects");
    let head = format!("POST /mcp HTTP/1.1\r\nHost: {address}");
    let request = post(&head, "tools/call", Some("linger"), &linger(id));
    stream.write_all(&request).await.expect("writes");
    let mut answer = Vec::new();
    let read = stream.read_to_end(&mut answer);
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("answered within 10 s")
        .expect("reads");
    let response = parse(&answer);
    let body = serde_json::from_str(&response.body).unwrap_or(Value::Null);
    (response.status, body)
}

#[test]
fn one_address_filling_its_task_quota_leaves_another_address_alone() {
    // Without the rate limit (50 calls a second by default), which would
    // only slow the flood down: the quota is what is tested.
    let server = Http::start(&["--rate-limit", "0"], Log::Counted);
    let address = server.address;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        // 1,000 tasks from one address, 20 at a time.
        for batch in 0..QUOTA / 20 {
            let mut calls = tokio::task::JoinSet::new();
            for n in 0..20 {
                calls.spawn(create(ATTACKER, address, batch * 20 + n));
            }
            for (status, body) in calls.join_all().await {
                assert_eq!(status, 200, "{body}");
                assert_eq!(body["result"]["resultType"], "task", "{body}");
            }
        }
        let (status, refused) = create(ATTACKER, address, QUOTA).await;
        assert_eq!(status, 429, "{refused}");
        assert_eq!(refused["error"]["code"], -31000);
        let message = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("this caller has 1000 running tasks"),
            "{message}"
        );

        let started = Instant::now();
        let (status, created) = create(NEIGHBOUR, address, QUOTA + 1).await;
        assert_eq!(status, 200, "{created}");
        assert_eq!(created["result"]["resultType"], "task", "{created}");
        assert_eq!(created["result"]["status"], "working");
        assert!(started.elapsed() < Duration::from_secs(2), "at once");
    });
}
