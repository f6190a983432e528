//! The stdio transport: newline-delimited JSON-RPC on stdin/stdout.
//!
//! stdout carries protocol frames only; diagnostics go to stderr through
//! `tracing`. Requests run concurrently on the current thread, responses go
//! out as they finish (matched by id), `notifications/cancelled` aborts the
//! named request, and end of input drains what is in flight and returns.
//!
//! Another era's traffic (the legacy adapter's) plugs in through a
//! [`StdioHook`]: it sees each line first and may claim requests.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::FutureExt as _;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::Notify;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::task::{AbortHandle, JoinSet, LocalSet};
use tokio_util::sync::CancellationToken;

use crate::context::{Outbox, Sink};
use crate::dispatch::envelope::{self, Incoming, Notification, Request};
use crate::dispatch::{Dispatched, Dispatcher, Reply, Unconditional};
use crate::protocol::method::{Method, MethodName};
use crate::protocol::{ErrorObject, RequestId};
use crate::source::{RequestSource, TransportKind};

/// Settings of the stdio transport.
#[derive(Clone, Debug)]
#[must_use]
pub struct StdioOptions {
    /// Longest accepted line, in bytes.
    pub(crate) max_line_bytes: usize,
    /// Output waiting for stdout above which input is not read.
    pub(crate) max_backlog_bytes: usize,
    /// Requests running at once above which input is not read.
    pub(crate) max_in_flight: usize,
    /// How long a request may run.
    pub(crate) request_timeout: Duration,
    /// How long requests in flight may finish once `run()` is asked to
    /// stop by a signal.
    pub(crate) shutdown_grace: Duration,
}

impl Default for StdioOptions {
    fn default() -> Self {
        StdioOptions {
            max_line_bytes: 4 * 1024 * 1024,
            max_backlog_bytes: 8 * 1024 * 1024,
            max_in_flight: 1024,
            request_timeout: Duration::from_secs(120),
            shutdown_grace: Duration::from_secs(10),
        }
    }
}

impl StdioOptions {
    /// The defaults: messages up to 4 MiB; input waits while 8 MiB of
    /// output wait for stdout, or while 1,024 requests run.
    pub fn new() -> Self {
        StdioOptions::default()
    }

    /// How much output may wait for a client that does not read stdout
    /// before the server stops reading stdin (default 8 MiB). Memory then
    /// stays bounded whatever the client sends: the client is slowed down
    /// to the pace at which it reads, the way a pipe slows a writer.
    pub fn max_output_backlog(mut self, bytes: usize) -> Self {
        self.max_backlog_bytes = bytes.max(1);
        self
    }

    /// How long a request may run (default 120 s, as over HTTP): past it,
    /// its handler is dropped (its cancellation token fires) and the
    /// request is answered with `-31002`. `subscriptions/listen` has no
    /// limit; a task's work runs on after its request is answered, under
    /// the task's own TTL.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long requests in flight may go on once `run()` is stopped by
    /// SIGTERM or SIGINT (default 10 s, as over HTTP): it stops reading
    /// stdin, lets them finish for this long, answers those still running
    /// with `-31001` (the server shut down: retry), then runs the shutdown
    /// hooks and flushes telemetry. End of input drains without this bound
    /// (each request under its own timeout), as the spec's stdio shutdown
    /// asks.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// How many requests may run at once before the server stops reading
    /// stdin until one finishes (default 1,024).
    pub fn max_in_flight(mut self, requests: usize) -> Self {
        self.max_in_flight = requests.max(1);
        self
    }

    /// The largest message accepted, in bytes (default 4 MiB). Longer lines
    /// are answered with an error and skipped without being buffered.
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_line_bytes = bytes.max(1);
        self
    }
}

/// Where frames for stdout go: the writer's queue, which counts what
/// waits in it (the reader stops reading while too much does).
#[derive(Clone)]
pub(crate) struct Frames {
    sender: UnboundedSender<Bytes>,
    backlog: Arc<Backlog>,
}

/// Bytes queued for stdout, and a wake-up for the reader when they fall
/// back under the limit.
struct Backlog {
    bytes: AtomicUsize,
    limit: usize,
    drained: Notify,
}

impl Frames {
    fn new(limit: usize) -> (Frames, UnboundedReceiver<Bytes>) {
        let (sender, pending) = unbounded_channel();
        let backlog = Arc::new(Backlog {
            bytes: AtomicUsize::new(0),
            limit,
            drained: Notify::new(),
        });
        (Frames { sender, backlog }, pending)
    }

    /// Queues one frame; `Err` when the writer is gone.
    pub(crate) fn send(&self, frame: Bytes) -> Result<(), Bytes> {
        let size = frame.len() + 1;
        self.backlog.bytes.fetch_add(size, Ordering::Relaxed);
        self.sender.send(frame).map_err(|unsent| {
            self.backlog.written(size);
            unsent.0
        })
    }

    /// Returns once the backlog is within its limit.
    async fn room(&self) {
        let backlog = &self.backlog;
        // Checked first without a waiter: registering one takes the
        // `Notify`'s lock, and this runs before every line.
        if backlog.bytes.load(Ordering::Relaxed) <= backlog.limit {
            return;
        }
        loop {
            let drained = backlog.drained.notified();
            let mut drained = std::pin::pin!(drained);
            // Registered before the check: a drain in between still wakes.
            drained.as_mut().enable();
            if backlog.bytes.load(Ordering::Relaxed) <= backlog.limit {
                return;
            }
            drained.await;
        }
    }
}

impl Backlog {
    /// `size` bytes left the queue; wakes the reader when that brings the
    /// backlog back within the limit (only then: waking costs a lock).
    fn written(&self, size: usize) {
        let before = self.bytes.fetch_sub(size, Ordering::Relaxed);
        if before > self.limit && before - size <= self.limit {
            self.drained.notify_waiters();
        }
    }
}

impl Sink for Frames {
    fn send(&self, frame: Bytes) {
        let _ = Frames::send(self, frame);
    }
}

/// A request a [`StdioHook`] claimed: answered already, or being answered.
#[allow(dead_code, reason = "used by the legacy adapter (feature `legacy`)")]
pub(crate) enum Started {
    Answered(Reply),
    Running(Pin<Box<dyn Future<Output = Reply>>>),
}

/// Another era's part of one stdio connection: it sees every line before
/// the modern path does.
pub(crate) trait StdioHook {
    /// Takes a line that is a response to one of the hook's own requests.
    fn take_response(&self, line: &str) -> bool;
    /// Whether the hook serves `request` instead of the modern path.
    fn claims(&self, request: &Request) -> bool;
    /// Serves a claimed request; `end_of_input` is cancelled when stdin
    /// ends.
    fn start(self: Rc<Self>, request: Request, end_of_input: &CancellationToken) -> Started;
    /// The revision the connection's client negotiated, once it has.
    fn revision(&self) -> Option<&'static str>;
}

/// An empty frame tells the writer that no more output will come.
const END_OF_OUTPUT: Bytes = Bytes::new();

/// Serves `input`/`output` until `input` ends and every request has been
/// answered, or until `stop` completes and the requests in flight finished
/// or the shutdown grace ran out. Runs on the current thread (handlers
/// need not be `Send`). `hook` is asked once for this connection's hook,
/// given where frames go.
pub(crate) async fn serve<R, W>(
    dispatcher: Arc<Dispatcher>,
    options: &StdioOptions,
    hook: impl FnOnce(&Frames) -> Option<Rc<dyn StdioHook>>,
    (input, output): (R, W),
    stop: impl Future<Output = ()>,
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let (frames, pending) = Frames::new(options.max_backlog_bytes);
    let backlog = frames.backlog.clone();
    let connection = Connection {
        hook: hook(&frames),
        outbox: Outbox::new(Arc::new(frames.clone())),
        frames,
        dispatcher,
        tasks: JoinSet::new(),
        in_flight: Rc::default(),
        end_of_input: CancellationToken::new(),
        max_line_bytes: options.max_line_bytes,
        max_in_flight: options.max_in_flight,
        request_timeout: options.request_timeout,
        shutdown_grace: options.shutdown_grace,
    };
    let lines = LineReader::new(input, options.max_line_bytes);
    LocalSet::new()
        .run_until(async {
            tokio::try_join!(
                connection.read(lines, stop),
                write_frames(output, pending, &backlog)
            )
        })
        .await
        .map(|_| ())
}

/// One connection's requests: reading them, running them, and answering.
struct Connection {
    dispatcher: Arc<Dispatcher>,
    frames: Frames,
    /// Every modern request's notifications go to stdout as they are sent.
    outbox: Outbox,
    hook: Option<Rc<dyn StdioHook>>,
    tasks: JoinSet<()>,
    in_flight: Rc<RefCell<HashMap<RequestId, AbortHandle>>>,
    /// Cancelled at end of input: subscriptions then close gracefully.
    end_of_input: CancellationToken,
    max_line_bytes: usize,
    max_in_flight: usize,
    request_timeout: Duration,
    shutdown_grace: Duration,
}

/// Why the connection stopped reading.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// Input ended: every request in flight is answered.
    Input,
    /// A signal: requests in flight get the shutdown grace.
    Stopped,
}

impl Connection {
    async fn read<R: AsyncRead + Unpin>(
        mut self,
        mut lines: LineReader<R>,
        stop: impl Future<Output = ()>,
    ) -> io::Result<()> {
        // One race around the whole loop rather than one per line: `stop`
        // is polled only when this task wakes, not for every line read
        // from a full buffer.
        let ended = tokio::select! {
            biased;
            () = stop => Ended::Stopped,
            read = self.read_until_end(&mut lines) => {
                read?;
                Ended::Input
            }
        };
        self.end_of_input.cancel();
        self.drain(ended).await;
        let _ = self.frames.send(END_OF_OUTPUT);
        Ok(())
    }

    /// Reads and starts requests until end of input.
    async fn read_until_end<R: AsyncRead + Unpin>(
        &mut self,
        lines: &mut LineReader<R>,
    ) -> io::Result<()> {
        loop {
            self.room().await;
            let line = match lines.next().await? {
                Line::Eof => return Ok(()),
                Line::TooLong => {
                    let limit = self.max_line_bytes;
                    self.send(Reply::error(
                        None,
                        &ErrorObject::invalid_request(format!(
                            "message exceeds the {limit}-byte limit"
                        )),
                    ));
                    continue;
                }
                Line::Message(bytes) => bytes,
            };
            while self.tasks.try_join_next().is_some() {}
            self.on_line(line);
        }
    }

    /// Waits for the requests in flight: all of them after end of input;
    /// after a signal, for the shutdown grace, then answers the rest with
    /// `-31001` (the client may retry them) and drops them.
    async fn drain(&mut self, ended: Ended) {
        let all = async { while self.tasks.join_next().await.is_some() {} };
        if ended == Ended::Input {
            return all.await;
        }
        if tokio::time::timeout(self.shutdown_grace, all).await.is_ok() {
            return;
        }
        let cut: Vec<RequestId> = self
            .in_flight
            .borrow_mut()
            .drain()
            .map(|(id, _)| id)
            .collect();
        tracing::warn!(
            requests = cut.len(),
            grace = ?self.shutdown_grace,
            "requests still running after the shutdown grace period were answered with -31001"
        );
        self.tasks.abort_all();
        let error = ErrorObject::new(
            crate::protocol::error_code::SERVER_BUSY,
            "The server shut down before the request finished; retry it",
        );
        for id in cut {
            self.send(Reply::error(Some(&id), &error));
        }
    }

    fn send(&self, reply: Reply) {
        let _ = self.frames.send(reply.frame);
    }

    /// Backpressure: input waits while too much output waits for stdout,
    /// or while too many requests run.
    async fn room(&mut self) {
        self.frames.room().await;
        while self.tasks.len() >= self.max_in_flight {
            self.tasks.join_next().await;
        }
    }

    fn on_line(&mut self, bytes: Vec<u8>) {
        let Ok(line) = String::from_utf8(bytes) else {
            let error = ErrorObject::parse_error("message is not valid UTF-8");
            return self.send(Reply::error(None, &error));
        };
        if self
            .hook
            .as_ref()
            .is_some_and(|hook| hook.take_response(&line))
        {
            return;
        }
        match envelope::parse(line) {
            Err(rejection) => self.send(Reply::from(rejection)),
            Ok(Incoming::Notification(notification)) => self.on_notification(notification),
            Ok(Incoming::Request(request)) => self.on_request(request),
        }
    }

    fn on_notification(&self, notification: Notification) {
        if self.dispatcher.observes_notifications() {
            let source = RequestSource::new(TransportKind::Stdio);
            let revision = self.hook.as_ref().and_then(|hook| hook.revision());
            let source = match revision {
                Some(revision) => source.with_negotiated_revision(revision),
                None => source,
            };
            (self.dispatcher).notified(&notification, &source, Instant::now());
        }
        if let Some(id) = notification.cancels
            && let Some(task) = self.in_flight.borrow_mut().remove(&id)
        {
            tracing::debug!(%id, "request cancelled by the client");
            task.abort();
        }
    }

    fn on_request(&mut self, request: Request) {
        if self.in_flight.borrow().contains_key(&request.id) {
            let error = ErrorObject::invalid_request(format!(
                "request id {} is already in use by a request in flight",
                request.id
            ));
            return self.send(Reply::error(Some(&request.id), &error));
        }
        if let Some(hook) = self.hook.clone().filter(|hook| hook.claims(&request)) {
            let id = request.id.clone();
            return match hook.start(request, &self.end_of_input) {
                Started::Answered(reply) => self.send(reply),
                // Under the request timeout as a modern request is.
                Started::Running(answer) => self.run(id, answer, false),
            };
        }
        let listen = request.method == MethodName::Known(Method::SubscriptionsListen);
        let source = RequestSource::new(TransportKind::Stdio);
        let mut admission = Unconditional(&self.outbox, Some(self.request_timeout));
        let dispatched =
            self.dispatcher
                .dispatch(request, source, &self.end_of_input, &mut admission);
        match dispatched {
            Dispatched::Answered(answer) => self.send(answer.into_reply()),
            Dispatched::Refused(never) => match never {},
            Dispatched::Running { id, future, .. } => self.run(id, future, listen),
            Dispatched::Layered { id, future } => self.run(id, future, false),
        }
    }

    /// Answers a running request: at once if it finishes on its first
    /// poll (most handlers do: those are answered without a task), or in
    /// a task, under the request timeout unless it is a subscription. The
    /// task's first poll registers the wakers this one did not keep.
    fn run(
        &mut self,
        id: RequestId,
        mut running: Pin<Box<impl Future<Output = Reply> + ?Sized + 'static>>,
        listen: bool,
    ) {
        match (&mut running).now_or_never() {
            Some(reply) => self.send(reply),
            None if listen => self.spawn(id, running),
            None => {
                let limit = self.request_timeout;
                let timed = id.clone();
                let limited = tokio::time::timeout(limit, running)
                    .map(move |reply| reply.unwrap_or_else(|_| Reply::timed_out(&timed, limit)));
                self.spawn(id, limited);
            }
        }
    }

    /// Runs a request that did not finish at once, as a task that
    /// `notifications/cancelled` can abort.
    fn spawn(&mut self, id: RequestId, answer: impl Future<Output = Reply> + 'static) {
        let (frames, in_flight, task_id) =
            (self.frames.clone(), self.in_flight.clone(), id.clone());
        let task = self.tasks.spawn_local(async move {
            let reply = answer.await;
            in_flight.borrow_mut().remove(&task_id);
            let _ = frames.send(reply.frame);
        });
        self.in_flight.borrow_mut().insert(id, task);
    }
}

/// Writes frames one per line, flushing only when no more are queued.
async fn write_frames<W: AsyncWrite + Unpin>(
    output: W,
    mut pending: UnboundedReceiver<Bytes>,
    backlog: &Backlog,
) -> io::Result<()> {
    let mut output = BufWriter::with_capacity(64 * 1024, output);
    while let Some(frame) = pending.recv().await {
        if frame.is_empty() {
            break;
        }
        output.write_all(&frame).await?;
        output.write_all(b"\n").await?;
        backlog.written(frame.len() + 1);
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
