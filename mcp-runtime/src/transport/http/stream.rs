//! Answering a request that runs: with one JSON object when it finishes
//! before sending anything, or, once it sends a notification (or, for the
//! legacy adapter, a request to the client), on an SSE stream that ends with
//! its answer. The same for both eras.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;
use http::StatusCode;
use tokio::sync::mpsc;

use super::slot::Slot;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::queue::NoteQueue;
use super::respond::{self, HttpResponse, Statuses, event};
use crate::dispatch::Reply;
use crate::metrics::{Metrics, Refusal};
use crate::protocol::RequestId;

/// How one running request is answered.
pub(crate) struct Streaming {
    /// Whether the client accepts SSE; without it, notifications are
    /// dropped and the answer is JSON.
    pub(crate) sse: bool,
    /// The time limit (none for a subscription).
    pub(crate) deadline: Option<Duration>,
    /// Interval of keep-alive comments on a quiet stream.
    pub(crate) keep_alive: Option<Duration>,
    pub(crate) statuses: Statuses,
    /// Stops the request from outside (the legacy `notifications/cancelled`):
    /// before anything was streamed it is answered 202 with no body, after
    /// that its stream ends.
    pub(crate) cancelled: Option<CancellationToken>,
    /// Held until the request, or its stream, ends.
    pub(crate) permit: Slot,
}

/// A request [`respond`] started.
pub(crate) enum Responding<S> {
    /// It finished on its first poll, as most do.
    Finished(HttpResponse),
    /// It is still running: awaiting this answers it (boxed, so that the
    /// caller's future does not carry its state).
    Running(Pin<Box<S>>),
}

/// Runs `running` (the answer to request `id`), whose notifications go to
/// `queue`, and answers with JSON or switches to SSE.
pub(crate) fn respond<F>(
    id: RequestId,
    mut running: Pin<Box<F>>,
    queue: Arc<NoteQueue>,
    streaming: Streaming,
    metrics: &Metrics,
) -> Responding<impl Future<Output = HttpResponse> + 'static>
where
    F: Future<Output = Reply> + 'static,
{
    // Most handlers finish on their first poll: they are answered without
    // reading the clock for a deadline.
    if let Some(finished) = running.as_mut().now_or_never() {
        return Responding::Finished(finished_at_once(&queue, &streaming, finished, metrics));
    }
    // Cloned only here, for a request still running: most never get here.
    let metrics = metrics.clone();
    Responding::Running(Box::pin(async move {
        let deadline = streaming.deadline.map(|limit| Instant::now() + limit);
        let first = tokio::select! {
            // The answer first: notifications queued with it go out in the
            // same response.
            biased;
            finished = &mut running => return finished_at_once(&queue, &streaming, finished, &metrics),
            note = queue.next(), if streaming.sse => note,
            () = sleep_until(deadline) => {
                let limit = streaming.deadline.unwrap_or(Duration::MAX);
                return respond::counted(Reply::timed_out(&id, limit), streaming.statuses, &metrics);
            }
            // Stopped before anything was sent: nothing more will be.
            () = cancelled(streaming.cancelled.as_ref()) => return respond::empty(StatusCode::ACCEPTED),
        };
        let (events, stream) = mpsc::channel(64);
        let _ = events.try_send(event(&first));
        let stream_task = Stream {
            id,
            queue,
            events,
            deadline,
            streaming,
            metrics,
        };
        tokio::task::spawn_local(stream_task.run(running));
        respond::sse(stream)
    }))
}

/// The response to a request that finished before any notification was
/// streamed. Notifications sent just before the answer are already queued:
/// they go out first, on a stream, if one is allowed.
fn finished_at_once(
    queue: &NoteQueue,
    streaming: &Streaming,
    finished: Reply,
    metrics: &Metrics,
) -> HttpResponse {
    respond::count(metrics, streaming.statuses, finished.error_code);
    let queued = queue.drain();
    if streaming.sse && !queued.is_empty() {
        return respond::sse_complete(&queued, &finished, streaming.statuses);
    }
    respond::reply(finished, streaming.statuses)
}

/// A request's SSE stream, fed until it ends.
struct Stream {
    id: RequestId,
    queue: Arc<NoteQueue>,
    events: mpsc::Sender<bytes::Bytes>,
    deadline: Option<Instant>,
    streaming: Streaming,
    /// The server's counters, for a stream that times out.
    metrics: Metrics,
}

impl Stream {
    async fn run(self, mut running: Pin<Box<impl Future<Output = Reply>>>) {
        let Stream {
            id,
            queue,
            events,
            deadline,
            streaming,
            metrics,
        } = self;
        let _permit = streaming.permit;
        let mut deadline = Box::pin(sleep_until(deadline));
        let mut keep_alive = streaming.keep_alive.map(|every| {
            let mut ticks = tokio::time::interval_at(Instant::now() + every, every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ticks
        });
        loop {
            tokio::select! {
                finished = &mut running => {
                    for note in queue.drain() {
                        let _ = events.send(event(&note)).await;
                    }
                    let _ = events.send(event(&finished.frame)).await;
                    break;
                }
                note = queue.next() => {
                    if events.send(event(&note)).await.is_err() {
                        break;
                    }
                }
                // The client closed the stream, or cancelled the request:
                // dropping `running` cancels the handler.
                () = events.closed() => break,
                () = cancelled(streaming.cancelled.as_ref()) => break,
                () = &mut deadline => {
                    let limit = streaming.deadline.unwrap_or(Duration::MAX);
                    // Counted here: a stream's status was sent before.
                    metrics.refused(Refusal::Timeout);
                    let _ = events.send(event(&Reply::timed_out(&id, limit).frame)).await;
                    break;
                }
                _ = tick(&mut keep_alive) => {
                    if events.send(respond::KEEP_ALIVE).await.is_err() {
                        break;
                    }
                }
            }
        }
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

async fn cancelled(token: Option<&CancellationToken>) {
    match token {
        Some(token) => token.cancelled().await,
        None => std::future::pending().await,
    }
}

async fn tick(ticks: &mut Option<tokio::time::Interval>) {
    match ticks {
        Some(ticks) => {
            ticks.tick().await;
        }
        None => std::future::pending().await,
    }
}
