//! A server as deployed (`src/bin/deployed-server.rs`: `run()` over HTTP
//! with health probes and a Server Card), as a real process.
//!
//! - Told to stop: `SIGTERM` with requests in flight. Readiness flips to
//!   503 first while liveness stays 200, the requests in flight finish
//!   with their answers, no new connection is accepted after the drain
//!   delay, and the process exits 0.
//! - Its card, read by its own inspector (`server-card URL`), is the one
//!   the endpoint serves.
#![cfg(unix)]

use std::net::SocketAddr;
use std::process::Stdio;
use std::time::Duration;

use mcp_test_support::call_tool;
use mcp_test_support::http;
use serde_json::{Value, json};

/// A loopback address nothing listens on (free when asked).
fn free_address() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

const BIN: &str = env!("CARGO_BIN_EXE_deployed-server");

/// The server on `address`, its stdout and stdin closed.
fn start(address: SocketAddr) -> tokio::process::Child {
    tokio::process::Command::new(BIN)
        .args(["--http", &address.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

async fn status(address: SocketAddr, path: &str) -> (u16, String) {
    let reply = http::request(address, "GET", path, &[], "").await;
    (reply.status.as_u16(), reply.body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_flips_readiness_then_drains_in_flight_requests_and_exits_0() {
    let address = free_address();
    let mut child = start(address);
    http::wait_listening(address).await;
    assert_eq!(status(address, "/readyz").await, (200, "ready".to_owned()));

    let calls: Vec<_> = (1..=3)
        .map(|id| {
            let call = call_tool(id, "slow", json!({"millis": 1500}));
            tokio::spawn(async move { http::post(address, &call).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let pid = child.id().unwrap().to_string();
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(sent.success());
    tokio::time::sleep(Duration::from_millis(150)).await;

    // Not ready at once, alive and serving while load balancers notice.
    assert_eq!(
        status(address, "/readyz").await,
        (503, "not ready".to_owned())
    );
    assert_eq!(status(address, "/healthz").await, (200, "ok".to_owned()));
    for call in calls {
        let answered = call.await.unwrap();
        assert_eq!(answered.status.as_u16(), 200, "{}", answered.body);
        let body: Value = serde_json::from_str(&answered.body).unwrap();
        assert_eq!(body["result"]["content"][0]["text"], "done", "{body}");
    }
    let exited = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("the process exits within 10 s of SIGTERM")
        .unwrap();
    assert_eq!(exited.code(), Some(0), "{exited:?}");
    assert!(tokio::net::TcpStream::connect(address).await.is_err());
}

#[tokio::test]
async fn the_inspector_prints_the_card_the_endpoint_serves() {
    let address = free_address();
    let _server = start(address);
    http::wait_listening(address).await;
    let url = format!("http://{address}/mcp/server-card");
    let served = http::request(address, "GET", "/mcp/server-card", &[], "").await;
    assert_eq!(served.status.as_u16(), 200, "{}", served.body);
    let served: Value = serde_json::from_str(&served.body).unwrap();
    assert_eq!(served["name"], "com.example/deployed-server");
    let inspected = tokio::process::Command::new(BIN)
        .args(["server-card", &url])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&inspected.stderr);
    assert!(inspected.status.success(), "{stderr}");
    let printed: Value = serde_json::from_slice(&inspected.stdout).unwrap();
    assert_eq!(printed, served);
    // Not a card: said so, exit 1.
    let missing = format!("http://{address}/nothing");
    let refused = tokio::process::Command::new(BIN)
        .args(["server-card", &missing])
        .output()
        .await
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("answered HTTP 404, not a Server Card"),
        "{said}"
    );
}
