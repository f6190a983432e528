//! The quickstart's stdin and stdout as clients really hand them over: a
//! pipe (what `tokio::process` and Python give), a socket (what libuv,
//! and so Node.js, gives), and stderr sharing them (`2>&1`, one socket for
//! all three).
//!
//! `run()` polls a pipe or a socket on its runtime's thread, which needs
//! the descriptor in non-blocking mode: a flag of the open file that every
//! process holding it sees. These tests hold a second descriptor of the
//! same open file and read its flags from `/proc/self/fdinfo`: set while
//! the server runs (the polled path is taken), cleared once it exits, and
//! never set on a stdout that stderr shares.

#![cfg(target_os = "linux")]

use std::io::{BufRead as _, BufReader, Read, Write as _};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use mcp_test_support::{assert_valid, call_tool};
use serde_json::{Value, json};

const PATIENCE: Duration = Duration::from_secs(10);
/// `O_NONBLOCK` on Linux, as `/proc/self/fdinfo` prints flags (octal).
const O_NONBLOCK: u32 = 0o4000;

fn non_blocking(fd: &impl AsRawFd) -> bool {
    let info =
        std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd())).expect("fdinfo");
    let flags = info
        .lines()
        .find_map(|line| line.strip_prefix("flags:"))
        .expect("a flags line");
    u32::from_str_radix(flags.trim(), 8).expect("octal flags") & O_NONBLOCK != 0
}

/// Lines read from `output` on a thread of their own, so that a server
/// that never answers fails the test instead of hanging it.
fn lines(output: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (sender, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(output).lines() {
            let Ok(line) = line else { return };
            if sender.send(line).is_err() {
                return;
            }
        }
    });
    lines
}

fn next(lines: &mpsc::Receiver<String>) -> Value {
    let line = lines.recv_timeout(PATIENCE).expect("an answer in time");
    serde_json::from_str(&line).expect("one JSON message per line")
}

fn echo(id: i64, text: &str) -> String {
    call_tool(id, "echo", json!({ "text": text })) + "\n"
}

fn assert_echoed(answer: &Value, id: i64, text: &str) {
    assert_valid("CallToolResultResponse", answer);
    assert_eq!(answer["id"], id);
    assert_eq!(
        answer["result"]["content"],
        json!([{ "type": "text", "text": text }])
    );
}

fn quickstart(stdin: impl Into<Stdio>, stdout: impl Into<Stdio>, stderr: Stdio) -> Child {
    Command::new(env!("CARGO_BIN_EXE_quickstart"))
        .stdin(stdin)
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .expect("the quickstart starts")
}

fn exits_cleanly(mut child: Child) {
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            assert!(status.success(), "the server exited with {status}");
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server did not exit"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn pipes_are_polled_and_set_back_to_blocking() {
    let (stdin_read, mut stdin_write) = std::io::pipe().expect("a pipe");
    let (stdout_read, stdout_write) = std::io::pipe().expect("a pipe");
    // Second descriptors of the server's ends: the same open files.
    let server_stdin = stdin_read.as_fd().try_clone_to_owned().expect("dup");
    let server_stdout = stdout_write.as_fd().try_clone_to_owned().expect("dup");
    let child = quickstart(stdin_read, stdout_write, Stdio::null());
    let answers = lines(stdout_read);

    // Many requests in one write: answered in order, none lost.
    let batch: String = (1..=200).map(|id| echo(id, &format!("m{id}"))).collect();
    stdin_write.write_all(batch.as_bytes()).expect("write");
    for id in 1..=200 {
        assert_echoed(&next(&answers), id, &format!("m{id}"));
    }
    assert!(non_blocking(&server_stdin), "stdin is polled while serving");
    assert!(
        non_blocking(&server_stdout),
        "stdout is polled while serving"
    );

    drop(stdin_write);
    exits_cleanly(child);
    assert!(!non_blocking(&server_stdin), "stdin is blocking again");
    assert!(!non_blocking(&server_stdout), "stdout is blocking again");
}

/// Serves one echo over a socket pair that is the quickstart's stdin and
/// stdout (and stderr too, if `with_stderr`), then ends its input. Returns
/// the server, a second descriptor of its end, and whether that end was in
/// non-blocking mode after the answer (while the server served).
fn echo_over_a_socket(with_stderr: bool) -> (Child, UnixStream, bool) {
    let (client, server) = UnixStream::pair().expect("a socket pair");
    let server_out = OwnedFd::from(server.try_clone().expect("dup"));
    let stderr = if with_stderr {
        Stdio::from(OwnedFd::from(server.try_clone().expect("dup")))
    } else {
        Stdio::null()
    };
    let spare = server.try_clone().expect("dup");
    let child = quickstart(OwnedFd::from(server), server_out, stderr);
    let answers = lines(client.try_clone().expect("dup"));

    let mut writer = &client;
    writer
        .write_all(echo(1, "over a socket").as_bytes())
        .expect("write");
    assert_echoed(&next(&answers), 1, "over a socket");
    let polled = non_blocking(&spare);
    client
        .shutdown(std::net::Shutdown::Write)
        .expect("end of input");
    (child, spare, polled)
}

#[test]
fn a_socket_serves_as_stdin_and_stdout() {
    let (child, spare, polled) = echo_over_a_socket(false);
    assert!(polled, "the socket is polled while serving");
    exits_cleanly(child);
    assert!(!non_blocking(&spare), "the socket is blocking again");
}

#[test]
fn stdout_shared_with_stderr_stays_blocking() {
    let (stdin_read, mut stdin_write) = std::io::pipe().expect("a pipe");
    let (output_read, output_write) = std::io::pipe().expect("a pipe");
    let stderr = output_write.try_clone().expect("dup");
    let server_stdout = output_write.as_fd().try_clone_to_owned().expect("dup");
    let child = quickstart(stdin_read, output_write, Stdio::from(stderr));
    let answers = lines(output_read);

    stdin_write
        .write_all(echo(7, "shared").as_bytes())
        .expect("write");
    // Only frames arrive here at the default log level.
    assert_echoed(&next(&answers), 7, "shared");
    assert!(
        !non_blocking(&server_stdout),
        "a stdout that stderr shares is written with blocking calls"
    );
    drop(stdin_write);
    exits_cleanly(child);
}

#[test]
fn one_socket_for_stdin_stdout_and_stderr_stays_blocking() {
    let (child, _, polled) = echo_over_a_socket(true);
    assert!(
        !polled,
        "a socket that stderr shares is read and written with blocking calls"
    );
    exits_cleanly(child);
}
