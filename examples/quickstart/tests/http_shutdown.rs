//! SIGTERM stops the HTTP server cleanly (exit status 0, promptly), both
//! when it serves from the calling thread (one core available: pinned with
//! `taskset`) and when it runs a worker thread per core.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// Starts the server on a port of its own choosing (no race for a port
/// picked beforehand) and reads the address it logs.
fn serve(one_core: bool) -> (Child, SocketAddr) {
    let binary = env!("CARGO_BIN_EXE_quickstart");
    let mut command = if one_core {
        // `taskset` execs the server, so the child's pid is the server's.
        let mut taskset = Command::new("taskset");
        taskset.args(["-c", "0", binary]);
        taskset
    } else {
        Command::new(binary)
    };
    let mut server = command
        .args(["--http", "127.0.0.1:0"])
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let mut log = BufReader::new(server.stderr.take().expect("stderr"));
    let mut line = String::new();
    let address = loop {
        line.clear();
        assert!(
            log.read_line(&mut line).expect("reads the log") > 0,
            "the server exited before listening"
        );
        if let Some(rest) = line.split("address=").nth(1) {
            let text = rest.split_whitespace().next().unwrap_or_default();
            break text.parse().expect("a socket address");
        }
    };
    // Keep draining the log so that the server never blocks on it.
    std::thread::spawn(move || std::io::copy(&mut log, &mut std::io::sink()));
    (server, address)
}

/// A `server/discover` over a fresh connection: the HTTP status line.
fn discover(address: SocketAddr) -> String {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let mut stream = TcpStream::connect(address).expect("connects");
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nAccept: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("writes");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("reads");
    response.lines().next().unwrap_or_default().to_owned()
}

fn terminate_and_wait(server: &mut Child) -> std::process::ExitStatus {
    let pid = Pid::from_raw(i32::try_from(server.id()).expect("a pid"));
    kill(pid, Signal::SIGTERM).expect("signals the server");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = server.try_wait().expect("waits") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = server.kill();
            panic!("the server did not stop within 10 s of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn serves_then_stops_on_sigterm(one_core: bool) {
    let (mut server, address) = serve(one_core);
    assert_eq!(discover(address), "HTTP/1.1 200 OK");
    if one_core {
        // Besides the log's writer (started by the first line logged).
        let serving = std::fs::read_dir(format!("/proc/{}/task", server.id()))
            .expect("the server's threads")
            .filter_map(Result::ok)
            .filter(|task| {
                std::fs::read_to_string(task.path().join("comm"))
                    .is_ok_and(|name| name.trim() != "mcp-log")
            })
            .count();
        assert_eq!(serving, 1, "one core: the server runs on one thread");
    }
    let status = terminate_and_wait(&mut server);
    assert!(status.success(), "exit status after SIGTERM: {status}");
    assert!(
        TcpStream::connect(address).is_err(),
        "nothing listens after shutdown"
    );
}

#[test]
fn one_core_serves_on_one_thread_and_stops_on_sigterm() {
    serves_then_stops_on_sigterm(true);
}

#[test]
fn worker_threads_stop_on_sigterm() {
    serves_then_stops_on_sigterm(false);
}
