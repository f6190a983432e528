//! Starting the hostile server as a process and talking raw HTTP/1.1 and
//! stdio to it, byte for byte (the attacks need malformed requests no
//! client library sends).

#![allow(dead_code, reason = "each test file uses part of this")]

use std::io::{BufRead, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) mod keep_alive;
pub(crate) mod stdio;

pub(crate) const BINARY: &str = env!("CARGO_BIN_EXE_hostile-server");

/// What becomes of the server's stderr.
pub(crate) enum Log {
    /// Read and counted (bytes), so that the server never blocks on it.
    Counted,
    /// Never read after the address: a host that ignores stderr.
    Unread,
    /// Read line by line: counted (bytes), and lines reporting a panic kept
    /// in [`Http::panics`].
    Watched,
}

/// A server on a loopback port of its own choosing.
pub(crate) struct Http {
    pub(crate) child: Child,
    pub(crate) address: SocketAddr,
    /// Bytes of log written after the address line (with [`Log::Counted`]
    /// and [`Log::Watched`]).
    pub(crate) logged: Arc<AtomicUsize>,
    /// Log lines that say something panicked (with [`Log::Watched`]).
    pub(crate) panics: Panics,
    /// Kept open (and unread) with [`Log::Unread`].
    _stderr: Option<ChildStderr>,
}

impl Http {
    pub(crate) fn start(args: &[&str], log: Log) -> Http {
        Http::start_with_env(args, &[], log)
    }

    /// [`Http::start`] with extra environment variables.
    pub(crate) fn start_with_env(args: &[&str], env: &[(&str, &str)], log: Log) -> Http {
        let mut child = Command::new(BINARY)
            .args(["--http", "127.0.0.1:0"])
            .args(args)
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let mut line = String::new();
        let address = loop {
            line.clear();
            assert!(
                stderr.read_line(&mut line).expect("reads the log") > 0,
                "the server exited before listening"
            );
            if let Some(rest) = line.split("address=").nth(1) {
                let text = rest.split_whitespace().next().unwrap_or_default();
                break text.parse().expect("a socket address");
            }
        };
        let logged = Arc::new(AtomicUsize::new(0));
        let panics = Panics::default();
        let unread = match log {
            Log::Counted => {
                let logged = logged.clone();
                std::thread::spawn(move || {
                    let mut buffer = [0u8; 8192];
                    while let Ok(read @ 1..) = stderr.read(&mut buffer) {
                        logged.fetch_add(read, Ordering::Relaxed);
                    }
                });
                None
            }
            Log::Unread => Some(stderr.into_inner()),
            Log::Watched => {
                panics.watch(stderr, logged.clone());
                None
            }
        };
        Http {
            child,
            address,
            logged,
            panics,
            _stderr: unread,
        }
    }
}

/// The lines of a server's log that say something panicked: the standard
/// panic hook's `thread '…' panicked at` and the runtime's `handler
/// panicked`.
#[derive(Clone, Default)]
pub(crate) struct Panics(Arc<Mutex<PanicLines>>);

#[derive(Default)]
struct PanicLines {
    count: usize,
    /// The first hundred, for reports.
    kept: Vec<String>,
}

/// Lines [`Panics`] keeps.
const KEPT: usize = 100;

impl Panics {
    /// How many lines said so.
    pub(crate) fn count(&self) -> usize {
        self.0.lock().unwrap().count
    }

    /// The lines after the first `seen` (of the first hundred).
    pub(crate) fn since(&self, seen: usize) -> Vec<String> {
        let lines = self.0.lock().unwrap();
        lines.kept.get(seen..).unwrap_or_default().to_vec()
    }

    /// Reads `log` to its end on a thread of its own, counting its bytes
    /// into `logged` and noting the lines that report a panic.
    pub(crate) fn watch(&self, mut log: impl BufRead + Send + 'static, logged: Arc<AtomicUsize>) {
        let panics = self.0.clone();
        std::thread::spawn(move || {
            let mut line = Vec::new();
            while let Ok(read @ 1..) = log.read_until(b'\n', &mut line) {
                logged.fetch_add(read, Ordering::Relaxed);
                let text = String::from_utf8_lossy(&line);
                if text.contains("panicked") {
                    let mut panics = panics.lock().unwrap();
                    panics.count += 1;
                    if panics.kept.len() < KEPT {
                        panics.kept.push(text.trim_end().to_owned());
                    }
                }
                line.clear();
            }
        });
    }
}

/// The resident set of process `pid` (`VmRSS`), in KiB.
pub(crate) fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

impl Drop for Http {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP response, as read off the socket.
#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) head: String,
    pub(crate) body: String,
}

impl Response {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then_some(value.trim())
        })
    }
}

/// Sends `bytes` as they are, on a fresh connection, and reads the
/// response (the request asks the server to close).
pub(crate) fn raw(address: SocketAddr, bytes: &[u8]) -> Response {
    let mut stream = TcpStream::connect(address).expect("connects");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a read timeout");
    stream.write_all(bytes).expect("writes");
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    parse(&response)
}

/// A response as read off a socket (status 0 when there is none).
pub(crate) fn parse(response: &[u8]) -> Response {
    let text = String::from_utf8_lossy(response).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Response {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    }
}

pub(crate) const DISCOVER: &str = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

/// A `tools/call` body.
pub(crate) fn call(id: u64, tool: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
    )
}

/// A POST of `body` with the MCP headers for `method` (and `name`), with
/// `head` as the request line and the first headers (`Host` among them).
pub(crate) fn post(head: &str, method: &str, name: Option<&str>, body: &str) -> Vec<u8> {
    let mut request = format!(
        "{head}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n"
    );
    if let Some(name) = name {
        request.push_str(&format!("Mcp-Name: {name}\r\n"));
    }
    request.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ));
    request.into_bytes()
}

/// `request` (made by [`post`]) without its `Connection: close`, for a
/// [`keep_alive::KeepAlive`] connection.
pub(crate) fn kept_open(request: Vec<u8>) -> Vec<u8> {
    String::from_utf8(request)
        .expect("text")
        .replacen("Connection: close\r\n", "", 1)
        .into_bytes()
}

/// A well-formed `server/discover` to `address`.
pub(crate) fn discover(address: SocketAddr) -> Response {
    let head = format!("POST /mcp HTTP/1.1\r\nHost: {address}");
    raw(address, &post(&head, "server/discover", None, DISCOVER))
}
