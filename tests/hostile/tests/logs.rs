//! Logging a client can provoke cannot flood or freeze the server: refused
//! headers are cut and throttled, and a stderr nobody reads costs dropped
//! lines, never a stalled worker.

mod common;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::{DISCOVER, Http, Log, call, discover, post, raw};

#[test]
fn a_flood_of_refused_hosts_logs_a_few_short_lines() {
    let server = Http::start(&[], Log::Counted);
    let address = server.address;
    let huge = "h".repeat(60_000);
    // A web page can send the second one: the browser adds its Origin.
    let bad_host = format!("POST /mcp HTTP/1.1\r\nHost: {huge}.example");
    let bad_origin = format!("POST /mcp HTTP/1.1\r\nHost: {address}\r\nOrigin: http://{huge}");
    let started = Instant::now();
    for head in [bad_host, bad_origin] {
        let request = post(&head, "server/discover", None, DISCOVER);
        for _ in 0..100 {
            // The statuses themselves are `framing.rs`'s business.
            let status = raw(address, &request).status;
            assert!(matches!(status, 400 | 403), "{status}");
        }
    }
    let elapsed = started.elapsed().as_secs() as usize + 1;
    // Let the last lines reach the counter.
    std::thread::sleep(Duration::from_millis(300));
    let logged = server.logged.load(Ordering::Relaxed);
    // One line a second, of a few hundred bytes: 12 MB before the fix.
    assert!(
        logged <= 1_000 * (elapsed + 1),
        "{logged} bytes of log for 200 refusals in {elapsed} s"
    );
    assert!(logged > 0, "the refusals were not logged at all");
}

#[test]
fn a_chatty_handler_with_nobody_reading_stderr_does_not_freeze_http() {
    let server = Http::start(&[], Log::Unread);
    let address = server.address;
    let head = format!("POST /mcp HTTP/1.1\r\nHost: {address}");
    // About 2 MB of log into a pipe that holds 64 KB.
    for id in 0..4 {
        let body = call(id, "chatty", r#"{"lines":500}"#);
        let response = raw(address, &post(&head, "tools/call", Some("chatty"), &body));
        assert_eq!(response.status, 200, "{response:?}");
        assert!(response.body.contains("logged 500 lines"), "{response:?}");
    }
    assert_eq!(discover(address).status, 200);
}
