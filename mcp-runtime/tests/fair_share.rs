//! Fair shares of the HTTP transport's global pools, over real sockets
//! from several loopback source addresses (Linux routes all of 127/8 to
//! the loopback interface): a handful of clients holding every slot they
//! may no longer shuts a newcomer out of requests in flight or of
//! `subscriptions/listen` streams.
#![cfg(feature = "http")]

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_runtime::{HttpOptions, ServerBuilder, State, tool};
use mcp_test_support::{call_tool, http::mcp_headers, request};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// How many `hold` calls are running.
#[derive(Clone, Default)]
struct Holding(Arc<AtomicUsize>);

/// Runs until its client goes away.
#[tool]
async fn hold(#[ctx] holding: State<Holding>) -> String {
    holding.0.0.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(300)).await;
    "held".to_owned()
}

/// Answers at once.
#[tool]
fn instant() -> String {
    "now".to_owned()
}

/// Serves on a free loopback port with `options`; the address.
fn serve(options: HttpOptions, holding: Holding) -> SocketAddr {
    mcp_test_support::http::serve_in_thread(move |listener| async move {
        let server = ServerBuilder::new("fair", "1.0.0")
            .state(holding)
            .build()
            .unwrap();
        let _ = server
            .serve_http(listener, options, std::future::pending())
            .await;
    })
}

/// A connection to `server` from the loopback address `127.0.0.<host>`,
/// with `message` POSTed on it.
async fn post_from(host: u8, server: SocketAddr, message: &str) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    let source = SocketAddr::new(IpAddr::from([127, 0, 0, host]), 0);
    socket.bind(source).unwrap();
    let mut stream = socket.connect(server).await.unwrap();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {server}\r\ncontent-length: {}\r\n",
        message.len()
    );
    for (name, value) in mcp_headers(message) {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(message.as_bytes()).await.unwrap();
    stream
}

/// The status of the response on `stream`, if its head arrives within
/// `wait`.
async fn status_within(stream: &mut TcpStream, wait: Duration) -> Option<u16> {
    let mut head = [0_u8; 12];
    tokio::time::timeout(wait, stream.read_exact(&mut head))
        .await
        .ok()?
        .ok()?;
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}

/// Floods from `127.0.0.2` .. `127.0.0.<1 + addresses>`, `each` calls of
/// `hold` per address, each on its own connection and only once the last
/// one's fate is known (the rule depends on the order): the connections of
/// the calls running (kept open), and how many were refused with 503.
async fn flood(
    server: SocketAddr,
    addresses: u8,
    each: usize,
    holding: &Holding,
) -> (Vec<TcpStream>, usize) {
    let hold = call_tool(1, "hold", json!({}));
    let (mut open, mut refused) = (Vec::new(), 0);
    for host in 2..2 + addresses {
        for _ in 0..each {
            let before = holding.0.load(Ordering::SeqCst);
            let mut stream = post_from(host, server, &hold).await;
            // A refusal is answered; an admitted call starts and runs on.
            let mut fate = None;
            for _ in 0..200 {
                if let Some(status) = status_within(&mut stream, Duration::from_millis(25)).await {
                    fate = Some(Err(status));
                    break;
                }
                if holding.0.load(Ordering::SeqCst) > before {
                    fate = Some(Ok(()));
                    break;
                }
            }
            match fate {
                Some(Ok(())) => open.push(stream),
                Some(Err(503)) => refused += 1,
                other => panic!("a flood request ended {other:?}"),
            }
        }
    }
    (open, refused)
}

/// The result of a `tools/call` of `instant` from `127.0.0.<host>`.
async fn instant_from(host: u8, server: SocketAddr) -> (u16, Value) {
    let mut stream = post_from(host, server, &call_tool(1, "instant", json!({}))).await;
    let mut response = Vec::new();
    let read = stream.read_to_end(&mut response);
    let _ = tokio::time::timeout(Duration::from_secs(5), read).await;
    let response = String::from_utf8(response).unwrap();
    let status = response[9..12].parse().unwrap();
    let body = response.split("\r\n\r\n").nth(1).unwrap_or_default();
    (status, serde_json::from_str(body).unwrap_or_default())
}

#[tokio::test]
async fn eight_addresses_with_slow_calls_leave_room_for_a_ninth() {
    // The defect: 16 slots, 2 per client; 8 addresses held them all, and a
    // ninth's instant call was refused with 503.
    let options = HttpOptions::new()
        .max_in_flight(16)
        .max_requests_per_client(2);
    let holding = Holding::default();
    let server = serve(options, holding.clone());
    let (open, refused) = flood(server, 8, 2, &holding).await;
    // Past half the pool, a client gets less than 1/8 of what is free:
    // four addresses got 2 slots, four got 1, and 4 slots stay free.
    assert_eq!((open.len(), refused), (12, 4));
    for _ in 0..500 {
        if holding.0.load(Ordering::SeqCst) == 12 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(holding.0.load(Ordering::SeqCst), 12);
    let (status, answer) = instant_from(10, server).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "now");
    drop(open);
}

#[tokio::test]
async fn two_addresses_no_longer_hold_every_listen_stream() {
    // The defect: 16 streams, and a client could open as many as its
    // requests in progress (128): two addresses held them all, and nobody
    // else heard of changes.
    let options = HttpOptions::new().max_subscriptions(16);
    let server = serve(options, Holding::default());
    let listen = request(
        "listen",
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    // A stream's head (200, text/event-stream) comes at once: read it.
    let mut streams = Vec::new();
    let mut statuses = Vec::new();
    for host in [2, 3] {
        for _ in 0..8 {
            let mut stream = post_from(host, server, &listen).await;
            statuses.push(status_within(&mut stream, Duration::from_secs(5)).await);
            streams.push(stream);
        }
    }
    // The first address takes half (its own cap is 128 requests); past
    // half, the second gets one, less than 1/8 of what is free.
    let opened = statuses.iter().filter(|s| **s == Some(200)).count();
    let refused = statuses.iter().filter(|s| **s == Some(503)).count();
    assert_eq!((opened, refused), (9, 7));
    let mut victim = post_from(9, server, &listen).await;
    let status = status_within(&mut victim, Duration::from_secs(5)).await;
    assert_eq!(status, Some(200));
}

/// The status of a legacy (2025-11-25) `initialize` POSTed from
/// `127.0.0.<host>`.
#[cfg(feature = "legacy")]
async fn legacy_initialize_from(host: u8, server: SocketAddr) -> u16 {
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "flood", "version": "1"},
    }})
    .to_string();
    let socket = TcpSocket::new_v4().unwrap();
    socket
        .bind(SocketAddr::new(IpAddr::from([127, 0, 0, host]), 0))
        .unwrap();
    let mut stream = socket.connect(server).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {server}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\ncontent-length: {}\r\n\r\n",
        message.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(message.as_bytes()).await.unwrap();
    let status = status_within(&mut stream, Duration::from_secs(5)).await;
    status.expect("an initialize is answered")
}

#[cfg(feature = "legacy")]
#[tokio::test]
async fn a_handful_of_addresses_no_longer_take_every_legacy_session() {
    // The defect: sessions were unbounded, each kept a day. Bounded, a
    // few addresses could have taken the whole table: now each gets at
    // most 1/8 of it, past half less than 1/8 of what is free, and a
    // newcomer is still served.
    let options = HttpOptions::new()
        .max_legacy_sessions(64)
        .without_rate_limit();
    let server = serve(options, Holding::default());
    let mut started = Vec::new();
    for host in 2..10 {
        let mut held = 0;
        loop {
            match legacy_initialize_from(host, server).await {
                200 => held += 1,
                503 => break,
                other => panic!("initialize answered {other}"),
            }
            assert!(held <= 8, "127.0.0.{host} holds more than 1/8");
        }
        started.push(held);
    }
    // 8 each until half is taken, then less than 1/8 of what is free.
    assert_eq!(started, [8, 8, 8, 8, 4, 4, 3, 3]);
    assert_eq!(legacy_initialize_from(20, server).await, 200);
}
