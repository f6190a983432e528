//! stdio under a client that writes without reading: the server stops
//! reading once its output backlog is full, so memory stays bounded, and
//! it serves on once the client reads again. Also: a chatty handler with
//! nobody reading stderr does not freeze it.

mod common;

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{BINARY, call};

const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

fn stdio_server(stderr: Stdio) -> Child {
    Command::new(BINARY)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("the server starts")
}

/// The peak resident set of `child`, in KiB.
fn peak_rss_kib(child: &Child) -> u64 {
    std::fs::read_to_string(format!("/proc/{}/status", child.id()))
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[test]
fn input_waits_while_output_is_unread_and_memory_stays_bounded() {
    let mut server = stdio_server(Stdio::null());
    let mut stdin = server.stdin.take().expect("stdin");
    const LINES: usize = 200_000;
    // 36 MB of requests, written as fast as the server takes them.
    let writer = std::thread::spawn(move || {
        let line = format!("{LIST}\n");
        for _ in 0..LINES {
            if stdin.write_all(line.as_bytes()).is_err() {
                return;
            }
        }
    });
    std::thread::sleep(Duration::from_secs(3));
    let unread_peak = peak_rss_kib(&server);
    assert!(
        unread_peak < 64 * 1024,
        "peak RSS {unread_peak} KiB with stdout unread (482 MiB before the backlog limit)"
    );
    assert!(
        !writer.is_finished(),
        "the server read all input although nobody read its output"
    );
    // Reading again, the client gets every answer.
    let stdout = BufReader::new(server.stdout.take().expect("stdout"));
    let started = Instant::now();
    let mut answers = 0;
    for line in stdout.lines() {
        let line = line.expect("a line");
        assert!(line.contains(r#""tools":["#), "{line}");
        answers += 1;
        if answers == LINES {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "too slow");
    }
    writer.join().expect("the writer");
    assert_eq!(answers, LINES);
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn a_chatty_handler_with_nobody_reading_stderr_does_not_freeze_stdio() {
    // stderr is a pipe kept open and never read.
    let mut server = stdio_server(Stdio::piped());
    let mut stdin = server.stdin.take().expect("stdin");
    let stdout = server.stdout.take().expect("stdout");
    let (answers, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if answers.send(line.expect("a line")).is_err() {
                return;
            }
        }
    });
    for id in 0..4 {
        writeln!(stdin, "{}", call(id, "chatty", r#"{"lines":500}"#)).expect("writes");
        let answer = received
            .recv_timeout(Duration::from_secs(10))
            .expect("an answer while stderr is unread");
        assert!(answer.contains("logged 500 lines"), "{answer}");
    }
    let _ = server.kill();
    let _ = server.wait();
}
