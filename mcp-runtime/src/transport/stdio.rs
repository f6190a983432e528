//! The stdio transport: newline-delimited JSON-RPC on stdin/stdout.
//!
//! stdout carries protocol frames only; diagnostics go to stderr through
//! `tracing`. Requests run concurrently on the current thread, responses go
//! out as they finish (matched by id), `notifications/cancelled` aborts the
//! named request, and end of input drains what is in flight and returns.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io;
use std::rc::Rc;

use bytes::Bytes;
use futures_util::FutureExt as _;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::task::{AbortHandle, JoinSet, LocalSet};

use crate::context::Outbox;
use crate::dispatch::envelope::{self, Incoming, Notification};
use crate::dispatch::{Dispatcher, Reply};
use crate::protocol::{ErrorObject, RequestId};
use crate::server::Server;

/// stdio settings.
#[derive(Clone, Debug)]
pub(crate) struct StdioConfig {
    /// Longest accepted line, in bytes.
    pub(crate) max_line_bytes: usize,
}

impl Default for StdioConfig {
    fn default() -> Self {
        StdioConfig {
            max_line_bytes: 4 * 1024 * 1024,
        }
    }
}

/// An empty frame tells the writer that no more output will come.
const END_OF_OUTPUT: Bytes = Bytes::new();

/// Serves `input`/`output` until `input` ends and every request has been
/// answered. Runs on the current thread (handlers need not be `Send`).
pub(crate) async fn serve<R, W>(server: &Server, input: R, output: W) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let (frames, pending) = unbounded_channel();
    // Legacy era (feature `legacy`): an `initialize` switches this
    // connection to the adapter.
    #[cfg(feature = "legacy")]
    let legacy = Rc::new(crate::legacy::stdio::Connection::new(
        server,
        frames.clone(),
    ));
    let reader = read_requests(
        server.dispatcher.clone(),
        input,
        frames,
        server.builder.stdio.max_line_bytes,
        #[cfg(feature = "legacy")]
        legacy,
    );
    LocalSet::new()
        .run_until(async { tokio::try_join!(reader, write_frames(output, pending)) })
        .await
        .map(|_| ())
}

async fn read_requests<R: AsyncRead + Unpin>(
    dispatcher: std::sync::Arc<Dispatcher>,
    input: R,
    frames: UnboundedSender<Bytes>,
    max_line_bytes: usize,
    #[cfg(feature = "legacy")] legacy: Rc<crate::legacy::stdio::Connection>,
) -> io::Result<()> {
    let mut lines = LineReader::new(input, max_line_bytes);
    let mut tasks = JoinSet::new();
    // Cancelled at end of input: subscriptions then close gracefully.
    let end_of_input = tokio_util::sync::CancellationToken::new();
    let in_flight: Rc<RefCell<HashMap<RequestId, AbortHandle>>> = Rc::default();
    let send = |reply: Reply| {
        let _ = frames.send(reply.frame);
    };
    loop {
        let line = match lines.next().await? {
            Line::Eof => break,
            Line::TooLong => {
                send(Reply::error(
                    None,
                    &ErrorObject::invalid_request(format!(
                        "message exceeds the {max_line_bytes}-byte limit"
                    )),
                ));
                continue;
            }
            Line::Message(bytes) => match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(_) => {
                    send(Reply::error(
                        None,
                        &ErrorObject::parse_error("message is not valid UTF-8"),
                    ));
                    continue;
                }
            },
        };
        while tasks.try_join_next().is_some() {}
        // Legacy era: the client's answers to our requests.
        #[cfg(feature = "legacy")]
        if legacy.take_response(&line) {
            continue;
        }
        let request = match envelope::parse(line) {
            Err(rejection) => {
                send(Reply::from(rejection));
                continue;
            }
            Ok(Incoming::Notification(Notification::Cancelled(id))) => {
                if let Some(task) = in_flight.borrow_mut().remove(&id) {
                    tracing::debug!(%id, "request cancelled by the client");
                    task.abort();
                }
                continue;
            }
            Ok(Incoming::Notification(Notification::Other)) => continue,
            Ok(Incoming::Request(request)) => request,
        };
        if in_flight.borrow().contains_key(&request.id) {
            let error = ErrorObject::invalid_request(format!(
                "request id {} is already in use by a request in flight",
                request.id
            ));
            send(Reply::error(Some(&request.id), &error));
            continue;
        }
        // Legacy era: `initialize`, and what follows it without `_meta`.
        #[cfg(feature = "legacy")]
        if legacy.claims(&request) {
            let id = request.id.clone();
            match legacy.start(request, &end_of_input) {
                crate::legacy::stdio::Started::Answered(reply) => send(reply),
                crate::legacy::stdio::Started::Running(answer) => {
                    let (frames, done, task_id) = (frames.clone(), in_flight.clone(), id.clone());
                    let task = tasks.spawn_local(async move {
                        let reply = answer.await;
                        done.borrow_mut().remove(&task_id);
                        let _ = frames.send(reply.frame);
                    });
                    in_flight.borrow_mut().insert(id, task);
                }
            }
            continue;
        }
        let prepared = match dispatcher.prepare(request) {
            Ok(prepared) => prepared,
            Err(reply) => {
                send(reply);
                continue;
            }
        };
        if let Some(reply) = dispatcher.answer_at_once(&prepared, None) {
            send(reply);
            continue;
        }
        let id = prepared.request.id.clone();
        let mut running =
            Box::pin(dispatcher.run(prepared, Outbox::new(frames.clone()), end_of_input.clone()));
        // Most handlers finish on their first poll: those are answered
        // without a task. A pending one moves into a task, whose first poll
        // registers the wakers this one did not keep.
        if let Some(reply) = (&mut running).now_or_never() {
            send(reply);
            continue;
        }
        let task = {
            let (frames, in_flight, id) = (frames.clone(), in_flight.clone(), id.clone());
            tasks.spawn_local(async move {
                let reply = running.await;
                in_flight.borrow_mut().remove(&id);
                let _ = frames.send(reply.frame);
            })
        };
        in_flight.borrow_mut().insert(id, task);
    }
    end_of_input.cancel();
    while tasks.join_next().await.is_some() {}
    let _ = frames.send(END_OF_OUTPUT);
    Ok(())
}

/// Writes frames one per line, flushing only when no more are queued.
async fn write_frames<W: AsyncWrite + Unpin>(
    output: W,
    mut pending: UnboundedReceiver<Bytes>,
) -> io::Result<()> {
    let mut output = BufWriter::with_capacity(64 * 1024, output);
    while let Some(frame) = pending.recv().await {
        if frame.is_empty() {
            break;
        }
        output.write_all(&frame).await?;
        output.write_all(b"\n").await?;
        if pending.is_empty() {
            output.flush().await?;
        }
    }
    output.flush().await
}

enum Line {
    Message(Vec<u8>),
    TooLong,
    Eof,
}

/// Splits input into lines without ever buffering more than the limit.
struct LineReader<R> {
    input: BufReader<R>,
    limit: usize,
    line: Vec<u8>,
    /// Skipping the rest of an over-long line.
    discarding: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    fn new(input: R, limit: usize) -> Self {
        LineReader {
            input: BufReader::with_capacity(64 * 1024, input),
            limit,
            line: Vec::new(),
            discarding: false,
        }
    }

    /// The next non-blank line, without its `\n` (and `\r`).
    async fn next(&mut self) -> io::Result<Line> {
        loop {
            match self.next_raw().await? {
                Line::Message(line) if line.iter().all(u8::is_ascii_whitespace) => {}
                Line::Message(mut line) => {
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    return Ok(Line::Message(line));
                }
                other => return Ok(other),
            }
        }
    }

    async fn next_raw(&mut self) -> io::Result<Line> {
        loop {
            let chunk = self.input.fill_buf().await?;
            if chunk.is_empty() {
                if std::mem::take(&mut self.discarding) {
                    return Ok(Line::TooLong);
                }
                if self.line.is_empty() {
                    return Ok(Line::Eof);
                }
                return Ok(Line::Message(std::mem::take(&mut self.line)));
            }
            let newline = chunk.iter().position(|&b| b == b'\n');
            let take = newline.unwrap_or(chunk.len());
            let too_long = self.discarding || self.line.len() + take > self.limit;
            if !too_long {
                self.line.extend_from_slice(&chunk[..take]);
            }
            self.input.consume(newline.map_or(take, |n| n + 1));
            if too_long {
                self.line = Vec::new();
                self.discarding = newline.is_none();
                if newline.is_some() {
                    return Ok(Line::TooLong);
                }
            } else if newline.is_some() {
                return Ok(Line::Message(std::mem::take(&mut self.line)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], limit: usize) -> Vec<Option<String>> {
        let mut reader = LineReader::new(input, limit);
        let mut out = Vec::new();
        loop {
            match reader.next().await.unwrap() {
                Line::Eof => return out,
                Line::TooLong => out.push(None),
                Line::Message(m) => out.push(Some(String::from_utf8(m).unwrap())),
            }
        }
    }

    #[tokio::test]
    async fn splits_lines_and_bounds_them() {
        assert_eq!(
            lines(b"a\r\n\n  \nbb\ncccc\ndd", 3).await,
            [Some("a".into()), Some("bb".into()), None, Some("dd".into())]
        );
        assert_eq!(lines(b"toolong", 3).await, [None]);
    }
}
