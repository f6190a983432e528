//! SIGTERM stops a stdio server as end of input does, with stdin still
//! open: it reads no more, lets the requests in flight finish for the
//! shutdown grace (10 s), answers those still running with `-31001`, runs
//! the shutdown hooks and exits with status 0. Without it, the MCP stdio
//! shutdown ("close stdin, wait, then SIGTERM") killed the process before
//! its hooks or a telemetry flush.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mcp_test_support::{meta, parse, request};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

#[test]
fn sigterm_drains_what_runs_answers_what_the_grace_cuts_and_exits_cleanly() {
    let mut server = Command::new(env!("CARGO_BIN_EXE_quickstart"))
        .env("RUST_LOG", "info")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let mut stdin = server.stdin.take().expect("stdin");
    // Every frame, as it arrives; the log, whole, at the end.
    let (frames, arrived) = mpsc::channel::<Value>();
    let stdout = BufReader::new(server.stdout.take().expect("stdout"));
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            let _ = frames.send(parse(&line));
        }
    });
    let stderr = server.stderr.take().expect("stderr");
    let log = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());

    // One call that ends within the grace, one that cannot (100 s).
    let short = json!({"from": 3, "delay_ms": 300});
    let long = json!({"from": 100, "delay_ms": 1000});
    for (id, token, arguments) in [(1, "short", short), (2, "long", long)] {
        let mut meta = meta();
        meta["progressToken"] = json!(token);
        let params = json!({"name": "countdown", "arguments": arguments, "_meta": meta});
        writeln!(stdin, "{}", request(id, "tools/call", params)).expect("writes the call");
    }
    // Both are running once each has reported progress.
    let mut started = std::collections::HashSet::new();
    while started.len() < 2 {
        let frame = arrived
            .recv_timeout(Duration::from_secs(10))
            .expect("progress");
        if frame["method"] == "notifications/progress" {
            started.insert(frame["params"]["progressToken"].to_string());
        }
    }

    let signalled = Instant::now();
    let pid = Pid::from_raw(i32::try_from(server.id()).expect("a pid"));
    kill(pid, Signal::SIGTERM).expect("signals the server");
    let mut answers = std::collections::BTreeMap::new();
    while answers.len() < 2 {
        let frame = arrived
            .recv_timeout(Duration::from_secs(20))
            .expect("both answered");
        if let Some(id) = frame["id"].as_i64() {
            answers.insert(id, frame);
        }
    }
    let status = server.wait().expect("waits");
    let took = signalled.elapsed();
    drop(stdin); // held open until now: the signal, not end of input, stopped it

    assert!(status.success(), "exit status after SIGTERM: {status}");
    assert_eq!(
        answers[&1]["result"]["content"][0]["text"], "liftoff",
        "{}",
        answers[&1]
    );
    assert_eq!(
        answers[&2],
        json!({"jsonrpc": "2.0", "id": 2, "error": {
            "code": -31001,
            "message": "The server shut down before the request finished; retry it",
        }})
    );
    assert!(
        took >= Duration::from_secs(9) && took < Duration::from_secs(15),
        "the grace is 10 s: exited {took:?} after SIGTERM"
    );
    let log = log.join().expect("the log");
    assert!(
        log.contains("shutting down: no more input read, draining requests in flight"),
        "{log}"
    );
}
