//! Driving a server binary over stdio, as a client would.

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::parse;

/// How long any single wait may take before the test fails.
const PATIENCE: Duration = Duration::from_secs(10);

/// A server process spawned with piped stdin and stdout.
#[derive(Debug)]
pub struct StdioServer {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl StdioServer {
    /// Spawns `program` (usually `env!("CARGO_BIN_EXE_...")`).
    pub fn spawn(program: &str) -> StdioServer {
        StdioServer::spawn_with(program, &[])
    }

    /// Spawns `program` with command-line `args`.
    pub fn spawn_with(program: &str, args: &[&str]) -> StdioServer {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
        StdioServer {
            child,
            stdin,
            stdout,
        }
    }

    /// Writes one line.
    pub async fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// Reads the next message.
    pub async fn receive(&mut self) -> Value {
        let line = tokio::time::timeout(PATIENCE, self.stdout.next_line())
            .await
            .expect("a message in time")
            .unwrap()
            .expect("stdout is still open");
        parse(&line)
    }

    /// Sends a request and returns the next message.
    pub async fn call(&mut self, line: &str) -> Value {
        self.send(line).await;
        self.receive().await
    }

    /// Closes stdin, collects what is still written, and checks the process
    /// exits successfully.
    pub async fn finish(mut self) -> Vec<Value> {
        drop(self.stdin.take());
        let mut rest = Vec::new();
        while let Some(line) = tokio::time::timeout(PATIENCE, self.stdout.next_line())
            .await
            .expect("stdout closes after stdin does")
            .unwrap()
        {
            rest.push(parse(&line));
        }
        let status = tokio::time::timeout(PATIENCE, self.child.wait())
            .await
            .expect("the server exits after end of input")
            .unwrap();
        assert!(status.success(), "exit status {status}");
        rest
    }
}

/// The client's end of an in-memory stdio connection (for a server served
/// in the test's own runtime with `Server::serve_streams`).
#[derive(Debug)]
pub struct InMemory {
    input: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    output: Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
}

/// The server's ends of an in-memory stdio connection: what it reads, what
/// it writes.
pub type ServerEnds = (
    tokio::io::ReadHalf<tokio::io::DuplexStream>,
    tokio::io::WriteHalf<tokio::io::DuplexStream>,
);

impl InMemory {
    /// A connected pair: the client, and the ends to serve.
    pub fn pair() -> (InMemory, ServerEnds) {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (client_read, client_write) = tokio::io::split(client);
        let client = InMemory {
            input: client_write,
            output: BufReader::new(client_read).lines(),
        };
        (client, tokio::io::split(server))
    }

    /// Writes one line.
    pub async fn send(&mut self, line: &str) {
        self.input.write_all(line.as_bytes()).await.unwrap();
        self.input.write_all(b"\n").await.unwrap();
    }

    /// Reads the next message.
    pub async fn receive(&mut self) -> Value {
        let line = self.next_line().await.expect("the server is still writing");
        parse(&line)
    }

    /// The next line, or `None` when the server closed its output.
    pub async fn next_line(&mut self) -> Option<String> {
        tokio::time::timeout(PATIENCE, self.output.next_line())
            .await
            .expect("a message in time")
            .unwrap()
    }

    /// Ends the server's input (end of stdin).
    pub async fn close(&mut self) {
        self.input.shutdown().await.unwrap();
    }
}

/// Awaits a server serving in-memory stdio (`serve_streams`), which must
/// end, successfully, within 10 s of the test's start of it.
pub async fn served<E: std::fmt::Debug>(serve: impl std::future::Future<Output = Result<(), E>>) {
    tokio::time::timeout(PATIENCE, serve)
        .await
        .expect("the server exits once input ends")
        .unwrap();
}
