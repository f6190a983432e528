//! Fair admission: one client address flooding the server (with bodies
//! sent a byte at a time, or with slow tool calls, each on its own
//! connection) cannot deny service to another address. The attacker is
//! 127.0.0.2, the well-behaved client 127.0.0.1; both are loopback.
//!
//! Each flood is wider than the server's in-flight cap (1,024 by default):
//! before the per-client caps, either flood left the other client nothing
//! but 503s.

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{Http, Log, call, post};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpSocket, TcpStream};

/// Connections the attacker keeps trying to hold.
const FLOOD: usize = 1_100;
const ATTACKER: [u8; 4] = [127, 0, 0, 2];

/// What the attacker's connections were answered with.
#[derive(Default)]
struct Seen {
    /// By status code (0: closed without an answer).
    statuses: std::sync::Mutex<std::collections::BTreeMap<u16, usize>>,
    connected: AtomicUsize,
}

impl Seen {
    fn record(&self, status: u16) {
        *self.statuses.lock().unwrap().entry(status).or_default() += 1;
    }

    fn count(&self, status: u16) -> usize {
        self.statuses
            .lock()
            .unwrap()
            .get(&status)
            .copied()
            .unwrap_or(0)
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

async fn connect_from(source: [u8; 4], address: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::from((source, 0)))?;
    socket.connect(address).await
}

/// The status of the answer on `stream`, or 0 when it closed without one.
async fn status_of(stream: &mut TcpStream, within: Duration) -> (u16, String) {
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(within, stream.read_to_end(&mut answer)).await;
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    (status, text)
}

/// One attacker connection after another, until `stop`: each sends
/// `opening`, then one byte of `trickle` a second (if any), and records
/// the answer.
async fn attack(
    address: SocketAddr,
    opening: Vec<u8>,
    trickle: bool,
    seen: Arc<Seen>,
    stop: Arc<AtomicBool>,
) {
    while !stop.load(Ordering::Relaxed) {
        let Ok(mut stream) = connect_from(ATTACKER, address).await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        seen.connected.fetch_add(1, Ordering::Relaxed);
        if stream.write_all(&opening).await.is_err() {
            seen.record(0);
            continue;
        }
        let status = match trickle {
            false => status_of(&mut stream, Duration::from_secs(120)).await.0,
            true => loop {
                tokio::select! {
                    (status, _) = status_of(&mut stream, Duration::from_secs(120)) => break status,
                    () = tokio::time::sleep(Duration::from_secs(1)) => {
                        let _ = stream.write_all(b" ").await;
                    }
                }
            },
        };
        seen.record(status);
        // A refused attacker retries at once; this keeps it from spinning.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The well-behaved client: `rounds` tool calls in a row, each on a fresh
/// connection from 127.0.0.1, every one of which must be answered in full.
async fn behave(address: SocketAddr, rounds: u64) {
    let head = format!("POST /mcp HTTP/1.1\r\nHost: {address}");
    for round in 0..rounds {
        let body = call(round, "add", r#"{"a":2,"b":3}"#);
        let mut stream = connect_from([127, 0, 0, 1], address)
            .await
            .expect("the client connects");
        let started = Instant::now();
        stream
            .write_all(&post(&head, "tools/call", Some("add"), &body))
            .await
            .expect("the client writes");
        let (status, text) = status_of(&mut stream, Duration::from_secs(10)).await;
        assert_eq!(status, 200, "round {round}: {text}");
        let body = text.split_once("\r\n\r\n").map_or("", |(_, body)| body);
        let answer: Value = serde_json::from_str(body).expect("a JSON answer");
        assert_eq!(
            answer,
            json!({"jsonrpc": "2.0", "id": round, "result": {
                "resultType": "complete",
                "content": [{"type": "text", "text": "5"}],
                "structuredContent": {"sum": 5},
                "_meta": {"io.modelcontextprotocol/serverInfo": {
                    "name": "mcp-hostile-tests",
                    "version": "0.1.0",
                }},
            }}),
            "round {round}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "round {round} took {:?}",
            started.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Floods `server` with `FLOOD` attackers sending `opening` while the
/// well-behaved client makes its calls; returns what the attackers saw.
fn flood(server: &Http, opening: Vec<u8>, trickle: bool) -> Arc<Seen> {
    let address = server.address;
    let seen = Arc::new(Seen::default());
    let stop = Arc::new(AtomicBool::new(false));
    runtime().block_on(async {
        let attackers: Vec<_> = (0..FLOOD)
            .map(|_| {
                tokio::spawn(attack(
                    address,
                    opening.clone(),
                    trickle,
                    seen.clone(),
                    stop.clone(),
                ))
            })
            .collect();
        // Long enough for every attacker to have tried to connect.
        tokio::time::sleep(Duration::from_secs(2)).await;
        behave(address, 20).await;
        stop.store(true, Ordering::Relaxed);
        for attacker in attackers {
            attacker.abort();
        }
    });
    seen
}

#[test]
fn bodies_sent_a_byte_at_a_time_from_one_address_leave_another_served() {
    let server = Http::start(&[], Log::Counted);
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\nContent-Length: 100000\r\n\r\n{{",
        server.address
    );
    let seen = flood(&server, head.into_bytes(), true);
    // Past the per-client caps the attacker was told to back off, and its
    // admitted bodies were cut off for coming too slowly.
    assert!(seen.count(429) > 0, "the attacker was never refused");
    assert!(seen.count(408) > 0, "no slow body was cut off");
    assert!(seen.connected.load(Ordering::Relaxed) >= FLOOD);
}

#[test]
fn slow_tool_calls_from_one_address_leave_another_served() {
    // A rate limit the flood stays within: what holds it back is the cap
    // on one client's requests in progress.
    let server = Http::start(&["--rate-limit", "1000"], Log::Counted);
    let head = format!("POST /mcp HTTP/1.1\r\nHost: {}", server.address);
    let body = call(1, "countdown", r#"{"from":100,"delay_ms":1000}"#);
    let request = post(&head, "tools/call", Some("countdown"), &body);
    let seen = flood(&server, request, false);
    assert!(seen.count(429) > 0, "the attacker was never refused");
}

#[test]
fn the_refusals_carry_retry_after() {
    let server = Http::start(&[], Log::Counted);
    let address = server.address;
    runtime().block_on(async {
        // 256 connections is the cap: the next one is refused before it
        // sends anything.
        let mut held = Vec::new();
        for _ in 0..256 {
            held.push(connect_from(ATTACKER, address).await.expect("connects"));
        }
        // Connected is not yet accepted: let the server take them all.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let mut refused = connect_from(ATTACKER, address).await.expect("connects");
        let (status, text) = status_of(&mut refused, Duration::from_secs(5)).await;
        assert_eq!(
            text,
            "HTTP/1.1 429 Too Many Requests\r\ncontent-type: text/plain; charset=utf-8\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: 45\r\n\r\ntoo many connections open from this address\r\n"
        );
        assert_eq!(status, 429);
        // 128 requests in progress is the other cap.
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: 10\r\n\r\n{{"
        );
        for stream in &mut held[..128] {
            stream.write_all(head.as_bytes()).await.expect("writes");
        }
        // Give the server time to take the 128 heads before the next one.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let stream = &mut held[128];
        stream.write_all(head.as_bytes()).await.expect("writes");
        let (status, text) = status_of(stream, Duration::from_secs(5)).await;
        assert_eq!(status, 429, "{text}");
        assert!(text.contains("\r\nretry-after: 1\r\n"), "{text}");
        let body = text.split_once("\r\n\r\n").map_or("", |(_, body)| body);
        assert_eq!(
            serde_json::from_str::<Value>(body).expect("JSON"),
            json!({"jsonrpc": "2.0", "error": {
                "code": -31000,
                "message": "Too many requests from this client in progress; retry when one has finished",
            }})
        );
    });
}
