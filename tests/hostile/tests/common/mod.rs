//! Starting the hostile server as a process and talking raw HTTP/1.1 and
//! stdio to it, byte for byte (the attacks need malformed requests no
//! client library sends).

#![allow(dead_code, reason = "each test file uses part of this")]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

pub(crate) const BINARY: &str = env!("CARGO_BIN_EXE_hostile-server");

/// What becomes of the server's stderr.
pub(crate) enum Log {
    /// Read and counted (bytes), so that the server never blocks on it.
    Counted,
    /// Never read after the address: a host that ignores stderr.
    Unread,
}

/// A server on a loopback port of its own choosing.
pub(crate) struct Http {
    pub(crate) child: Child,
    pub(crate) address: SocketAddr,
    /// Bytes of log written after the address line (with [`Log::Counted`]).
    pub(crate) logged: Arc<AtomicUsize>,
    /// Kept open (and unread) with [`Log::Unread`].
    _stderr: Option<ChildStderr>,
}

impl Http {
    pub(crate) fn start(args: &[&str], log: Log) -> Http {
        let mut child = Command::new(BINARY)
            .args(["--http", "127.0.0.1:0"])
            .args(args)
            .env("RUST_LOG", "info")
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
        };
        Http {
            child,
            address,
            logged,
            _stderr: unread,
        }
    }
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
    let text = String::from_utf8_lossy(&response).into_owned();
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

/// A well-formed `server/discover` to `address`.
pub(crate) fn discover(address: SocketAddr) -> Response {
    let head = format!("POST /mcp HTTP/1.1\r\nHost: {address}");
    raw(address, &post(&head, "server/discover", None, DISCOVER))
}
