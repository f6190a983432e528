//! The hostile server on stdio, its output read line by line on a thread
//! so that a test can wait for an answer with a deadline.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, Command, Stdio as Pipe};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

use super::{BINARY, Panics};

/// A server serving stdio, killed when dropped.
pub(crate) struct StdioServer {
    pub(crate) child: Child,
    /// stdin, written on a thread: a server that stops reading cannot
    /// block the test, which then sees no answer.
    stdin: Sender<Vec<u8>>,
    /// stdout, one line (without its `\n`) at a time.
    lines: Receiver<Vec<u8>>,
    /// stderr's lines that say something panicked.
    pub(crate) panics: Panics,
}

impl StdioServer {
    pub(crate) fn start(env: &[(&str, &str)]) -> StdioServer {
        let mut child = Command::new(BINARY)
            .envs(env.iter().copied())
            .stdin(Pipe::piped())
            .stdout(Pipe::piped())
            .stderr(Pipe::piped())
            .spawn()
            .expect("the server starts");
        let mut input = child.stdin.take().expect("stdin");
        let (stdin, writes) = channel::<Vec<u8>>();
        std::thread::spawn(move || {
            for bytes in writes {
                if input
                    .write_all(&bytes)
                    .and_then(|()| input.flush())
                    .is_err()
                {
                    return;
                }
            }
        });
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            loop {
                let mut line = Vec::new();
                match stdout.read_until(b'\n', &mut line) {
                    Ok(1..) if line.ends_with(b"\n") => {
                        line.pop();
                    }
                    // The last line, cut off by the end of output.
                    Ok(1..) => {}
                    _ => return,
                }
                if sender.send(line).is_err() {
                    return;
                }
            }
        });
        let panics = Panics::default();
        let stderr = BufReader::new(child.stderr.take().expect("stderr"));
        panics.watch(stderr, Arc::new(AtomicUsize::new(0)));
        StdioServer {
            child,
            stdin,
            lines,
            panics,
        }
    }

    /// Writes `bytes` as they are, without waiting for the server to read
    /// them.
    pub(crate) fn send(&self, bytes: Vec<u8>) {
        // A server that has exited is noticed by the reader.
        let _ = self.stdin.send(bytes);
    }

    /// The next line of output, waiting at most `timeout`;
    /// `Disconnected` once the output has ended.
    pub(crate) fn next_line(&self, timeout: Duration) -> Result<Vec<u8>, RecvTimeoutError> {
        self.lines.recv_timeout(timeout)
    }

    /// Whether the process has exited (and how).
    pub(crate) fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
