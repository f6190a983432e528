//! A handler that panics costs its own request and nothing else: 1,000
//! panicking calls, half panicking at once (`explode`) and half after an
//! await (`explode_later`), are each answered with JSON-RPC's internal
//! error, while other clients' requests, on other connections at the same
//! time, get exactly the answers a quiet server gives them; and the
//! server's memory stays flat.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use common::keep_alive::KeepAlive;
use common::stdio::StdioServer;
use common::{Http, Log, Response, call, kept_open, post, rss_kib};
use serde_json::{Value, json};

const PANICS: u64 = 1_000;
/// Panics before the first measurement: whatever the first ones allocate
/// for good (the panic hook's lazy state, the allocator's arenas and
/// caches, the log's buffers) is in the baseline.
const WARM_UP: u64 = 100;
/// How much the resident set may grow over the 1,000 panics after the warm
/// up: 10 % of it, at least 2 MiB. A flat server moves by a few hundred
/// KiB (allocator pages released or not); a panic that leaked what a
/// request holds (its ~1 KiB future, its buffers, a connection's state:
/// several KiB) would add 4 MiB and more.
fn allowed_growth_kib(warm: u64) -> u64 {
    (warm / 10).max(2 * 1024)
}

/// The answer to a panicking handler: an internal error, with the request's
/// id and nothing of the panic's message.
fn internal_error(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": "Internal error"}})
}

/// A request that must not notice the panics around it.
#[derive(Clone, Copy)]
enum Steady {
    Echo,
    Add,
    List,
}

const STEADY: [Steady; 3] = [Steady::Echo, Steady::Add, Steady::List];

impl Steady {
    fn body(self, id: u64) -> String {
        match self {
            Steady::Echo => call(id, "echo", &format!(r#"{{"text":"steady {id}"}}"#)),
            Steady::Add => call(id, "add", r#"{"a":2,"b":40}"#),
            Steady::List => format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
            ),
        }
    }

    fn request(self, head: &str, id: u64) -> Vec<u8> {
        match self {
            Steady::Echo => post(head, "tools/call", Some("echo"), &self.body(id)),
            Steady::Add => post(head, "tools/call", Some("add"), &self.body(id)),
            Steady::List => post(head, "tools/list", None, &self.body(id)),
        }
    }
}

/// The answers a quiet server gives, to check every later one against.
struct Expected(HashMap<u8, Value>);

impl Expected {
    /// From the first answers of a quiet server (id 0), checked for what
    /// they must say.
    fn new(mut first: impl FnMut(Steady) -> Value) -> Expected {
        let mut answers = HashMap::new();
        for steady in STEADY {
            let answer = first(steady);
            let result = &answer["result"];
            match steady {
                Steady::Echo => assert_eq!(
                    result["content"],
                    json!([{"type": "text", "text": "steady 0"}]),
                    "{answer}"
                ),
                Steady::Add => {
                    assert_eq!(result["structuredContent"], json!({"sum": 42}), "{answer}")
                }
                Steady::List => {
                    let names: Vec<&str> = result["tools"]
                        .as_array()
                        .expect("tools")
                        .iter()
                        .filter_map(|tool| tool["name"].as_str())
                        .collect();
                    assert!(
                        names.contains(&"explode") && names.contains(&"echo"),
                        "{answer}"
                    );
                }
            }
            answers.insert(steady as u8, answer);
        }
        Expected(answers)
    }

    /// The exact answer to `steady` with `id`.
    fn answer(&self, steady: Steady, id: u64) -> Value {
        let mut answer = self.0[&(steady as u8)].clone();
        answer["id"] = json!(id);
        if let Steady::Echo = steady {
            answer["result"]["content"][0]["text"] = json!(format!("steady {id}"));
        }
        answer
    }
}

fn explode(id: u64) -> (String, &'static str) {
    let tool = if id.is_multiple_of(2) {
        "explode"
    } else {
        "explode_later"
    };
    (
        call(id, tool, &format!(r#"{{"message":"boom {id}"}}"#)),
        tool,
    )
}

fn json_of(response: &Response) -> Value {
    serde_json::from_str(&response.body).unwrap_or_else(|e| panic!("not JSON ({e}): {response:?}"))
}

/// Sends `explode` calls with ids `ids` on one connection, checking each
/// answer.
fn panic_over_http(address: std::net::SocketAddr, ids: impl Iterator<Item = u64>) {
    let head = format!("POST /mcp HTTP/1.1\r\nHost: {address}");
    let mut connection = KeepAlive::new(address, Duration::from_secs(10));
    for id in ids {
        let (body, tool) = explode(id);
        let response = connection
            .exchange(&kept_open(post(&head, "tools/call", Some(tool), &body)))
            .expect("an answer");
        assert_eq!(response.status, 500, "{response:?}");
        assert_eq!(
            response.header("content-type"),
            Some("application/json"),
            "{response:?}"
        );
        assert_eq!(json_of(&response), internal_error(id), "{response:?}");
    }
}

#[test]
fn panicking_handlers_cost_their_own_http_request_and_nothing_else() {
    // Backtraces off: symbolizing 1,000 of them in a debug build would take
    // minutes and tell nothing.
    let server = Http::start_with_env(
        &["--rate-limit", "0"],
        &[("RUST_BACKTRACE", "0")],
        Log::Watched,
    );
    let address = server.address;
    let head = format!("POST /mcp HTTP/1.1\r\nHost: {address}");
    let mut quiet = KeepAlive::new(address, Duration::from_secs(10));
    let expected = Expected::new(|steady| {
        let response = quiet
            .exchange(&kept_open(steady.request(&head, 0)))
            .expect("an answer");
        assert_eq!(response.status, 200, "{response:?}");
        json_of(&response)
    });
    let expected = Arc::new(expected);
    panic_over_http(address, PANICS..PANICS + WARM_UP);
    let warm = rss_kib(server.child.id());

    // Two clients call the panicking tools while three others, each on a
    // connection of its own, keep calling until they are done.
    let done = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(5));
    let steady: Vec<_> = STEADY
        .into_iter()
        .enumerate()
        .map(|(client, steady)| {
            let (expected, done, start) = (expected.clone(), done.clone(), start.clone());
            let head = head.clone();
            std::thread::spawn(move || {
                let mut connection = KeepAlive::new(address, Duration::from_secs(10));
                start.wait();
                let mut sent = 0u64;
                while !done.load(Ordering::Relaxed) || sent < 100 {
                    let id = 1_000_000 * (client as u64 + 1) + sent;
                    let response = connection
                        .exchange(&kept_open(steady.request(&head, id)))
                        .expect("an answer");
                    assert_eq!(response.status, 200, "{response:?}");
                    assert_eq!(
                        json_of(&response),
                        expected.answer(steady, id),
                        "{response:?}"
                    );
                    sent += 1;
                }
                sent
            })
        })
        .collect();
    let panickers: Vec<_> = [0, PANICS / 2]
        .into_iter()
        .map(|first| {
            let start = start.clone();
            std::thread::spawn(move || {
                start.wait();
                panic_over_http(address, first..first + PANICS / 2);
            })
        })
        .collect();
    for panicker in panickers {
        panicker
            .join()
            .expect("every panicking call got its internal error");
    }
    done.store(true, Ordering::Relaxed);
    let served: u64 = steady
        .into_iter()
        .map(|client| client.join().expect("every other call got its answer"))
        .sum();

    let end = rss_kib(server.child.id());
    let logged = server.panics.count() as u64;
    assert!(
        logged >= PANICS + WARM_UP,
        "the log reports {logged} panics"
    );
    assert!(
        end <= warm + allowed_growth_kib(warm),
        "RSS grew from {warm} KiB to {end} KiB over {PANICS} panics (and {served} other calls)"
    );
    // The server still answers, a panicking call included.
    panic_over_http(address, [0].into_iter());
    let response = quiet
        .exchange(&kept_open(Steady::Add.request(&head, 7)))
        .expect("an answer");
    assert_eq!(json_of(&response), expected.answer(Steady::Add, 7));
    eprintln!(
        "http: {PANICS} panics with {served} other calls; RSS {warm} KiB after the warm-up, {end} KiB at the end"
    );
}

#[test]
fn panicking_handlers_cost_their_own_stdio_request_and_nothing_else() {
    let server = StdioServer::start(&[("RUST_BACKTRACE", "0")]);
    let answer = |timeout| -> Value {
        let line = match server.next_line(timeout) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => panic!("no answer within {timeout:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the server's output ended"),
        };
        serde_json::from_slice(&line)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&line)))
    };
    let expected = Expected::new(|steady| {
        server.send(format!("{}\n", steady.body(0)).into_bytes());
        answer(Duration::from_secs(10))
    });
    // Each round: a panicking call and a steady one, written together.
    let round = |ids: std::ops::Range<u64>| {
        let mut input = String::new();
        let mut owed = HashMap::new();
        for id in ids {
            input.push_str(&explode(id).0);
            input.push('\n');
            owed.insert(id, internal_error(id));
            let steady = STEADY[(id % 3) as usize];
            let other = 1_000_000 + id;
            input.push_str(&steady.body(other));
            input.push('\n');
            owed.insert(other, expected.answer(steady, other));
        }
        server.send(input.into_bytes());
        let deadline = Instant::now() + Duration::from_secs(60);
        while !owed.is_empty() {
            let got = answer(deadline.saturating_duration_since(Instant::now()));
            let id = got["id"].as_u64().unwrap_or_else(|| panic!("no id: {got}"));
            let owed_answer = owed
                .remove(&id)
                .unwrap_or_else(|| panic!("an unexpected answer: {got}"));
            assert_eq!(got, owed_answer);
        }
    };
    // In rounds of 100 pairs, so that as much runs at once every time.
    let rounds = |ids: std::ops::Range<u64>| {
        for first in ids.clone().step_by(100) {
            round(first..(first + 100).min(ids.end));
        }
    };
    rounds(PANICS..PANICS + WARM_UP);
    let warm = rss_kib(server.child.id());
    rounds(0..PANICS);
    let end = rss_kib(server.child.id());
    let logged = server.panics.count() as u64;
    assert!(
        logged >= PANICS + WARM_UP,
        "the log reports {logged} panics"
    );
    assert!(
        end <= warm + allowed_growth_kib(warm),
        "RSS grew from {warm} KiB to {end} KiB over {PANICS} panics"
    );
    eprintln!("stdio: {PANICS} panics; RSS {warm} KiB after the warm-up, {end} KiB at the end");
}
