//! Two differently configured servers in one process (issue 52, item 5):
//! each serves its own requests over HTTP on its own port, counts its own
//! refusals (nothing is shared through a process global), and both stop
//! cleanly.
#![cfg(feature = "http")]

use std::net::SocketAddr;
use std::time::Duration;

use mcp_runtime::metrics::{Refusal, Snapshot};
use mcp_runtime::{HttpOptions, Server, ServerBuilder, tool};
use mcp_test_support::call_tool;
use mcp_test_support::http::{self, post_with};
use serde_json::json;

/// Echoes.
#[tool]
fn echo(text: String) -> String {
    text
}

/// A server's refusals of `refusal`'s kind, as its metrics show them.
fn refused(snapshot: &Snapshot, refusal: Refusal) -> u64 {
    let (_, count) = snapshot
        .refusals
        .into_iter()
        .find(|(r, _)| *r == refusal)
        .unwrap();
    count
}

/// A fresh loopback port's listener, and its address.
async fn listener() -> (tokio::net::TcpListener, SocketAddr) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    (listener, address)
}

/// What the clients do while both servers run: requests and refusals at
/// each, then the first stopped while the second still serves. Returns the
/// counts each server showed.
async fn clients(
    (first, first_at): (&Server, SocketAddr),
    (second, second_at): (&Server, SocketAddr),
    stop_first: tokio::sync::oneshot::Sender<()>,
    first_stopped: tokio::sync::oneshot::Receiver<()>,
) -> (Snapshot, Snapshot) {
    let call = call_tool(1, "echo", json!({"text": "hi"}));
    let answered = http::post(first_at, &call).await;
    assert_eq!(answered.status.as_u16(), 200, "{}", answered.body);
    assert_eq!(answered.json()["result"]["content"][0]["text"], "hi");
    // A foreign origin, twice, at the first server only.
    for _ in 0..2 {
        let foreign = post_with(first_at, &call, &[("origin", Some("http://evil.example"))]).await;
        assert_eq!(foreign.status.as_u16(), 403, "{}", foreign.body);
    }
    // A body over the second server's limit (the first's is far larger).
    let big = call_tool(2, "echo", json!({"text": "x".repeat(2000)}));
    assert_eq!(http::post(second_at, &big).await.status.as_u16(), 413);
    assert_eq!(http::post(first_at, &big).await.status.as_u16(), 200);
    let counts = (first.metrics().snapshot(), second.metrics().snapshot());

    stop_first.send(()).unwrap();
    first_stopped.await.unwrap();
    // The second still serves once the first has stopped.
    let after = http::post(second_at, &call).await;
    assert_eq!(after.status.as_u16(), 200, "{}", after.body);
    counts
}

#[tokio::test]
async fn two_servers_in_one_process_count_apart_and_stop_cleanly() {
    let first = ServerBuilder::new("first", "1.0.0").build().unwrap();
    let second = ServerBuilder::new("second", "2.0.0")
        .page_size(1)
        .build()
        .unwrap();
    let ((first_listener, first_at), (second_listener, second_at)) =
        (listener().await, listener().await);
    let (stop_first, first_stop) = tokio::sync::oneshot::channel::<()>();
    let (stop_second, second_stop) = tokio::sync::oneshot::channel::<()>();
    let (first_done, first_stopped) = tokio::sync::oneshot::channel::<()>();
    let serve_first = async {
        let serving = first.serve_http(first_listener, HttpOptions::new(), async {
            let _ = first_stop.await;
        });
        let served = tokio::time::timeout(Duration::from_secs(20), serving).await;
        served
            .expect("the first server drains and stops")
            .expect("no server error");
        first_done.send(()).unwrap();
    };
    let small = HttpOptions::new().max_body_size(1024);
    let serve_second = async {
        let serving = second.serve_http(second_listener, small, async {
            let _ = second_stop.await;
        });
        let served = tokio::time::timeout(Duration::from_secs(20), serving).await;
        served
            .expect("the second server drains and stops")
            .expect("no server error");
    };
    let client = async {
        let counts = clients(
            (&first, first_at),
            (&second, second_at),
            stop_first,
            first_stopped,
        )
        .await;
        stop_second.send(()).unwrap();
        counts
    };
    let ((), (), (ones, twos)) = tokio::join!(serve_first, serve_second, client);

    assert_eq!(refused(&ones, Refusal::Origin), 2);
    assert_eq!(refused(&ones, Refusal::TooLarge), 0);
    assert_eq!(refused(&twos, Refusal::Origin), 0);
    assert_eq!(refused(&twos, Refusal::TooLarge), 1);
    for refusal in [
        Refusal::RateLimited,
        Refusal::Busy,
        Refusal::Host,
        Refusal::Timeout,
    ] {
        assert_eq!(
            (refused(&ones, refusal), refused(&twos, refusal)),
            (0, 0),
            "{refusal:?}"
        );
    }
    first.stop().await;
    second.stop().await;
    assert_eq!(second.metrics().snapshot(), twos);
}
