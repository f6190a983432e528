//! One worker's connections: the head timeout, graceful shutdown, the
//! per-client caps, and giving memory back after a burst.
//!
//! **Head timeout.** A connection that holds a worker without a request in
//! progress (a head trickled in byte by byte, or an idle keep-alive
//! connection) is closed once it has been idle for the limit. Hyper has
//! this built in (`header_read_timeout`), but it arms a timer and polls the
//! socket once more for every request: about 1,500 instructions, 2 to 3 %
//! of the throughput of a small answer. Here a request costs two `Cell`
//! updates, and one task per worker sweeps its connections eight times per
//! limit. A connection is idle from its accept, and from the end of each
//! response body, until hyper hands over the next request.
//!
//! **Graceful shutdown.** Each connection is told to finish what is in
//! flight and close, and shutdown waits until every one has. Hyper-util's
//! `GracefulShutdown` does the same with a watch channel that every
//! connection polls each time it runs (~170 instructions per request);
//! here a connection reads a `Cell` and is woken once, at shutdown.
//!
//! **Per-client caps.** A connection carries its client's share of the
//! caps (`security::clients`); each request counts against the client's
//! requests in progress from the moment hyper hands it over until its
//! response body is done.
//!
//! Everything but the client counts (shared by every worker) is per worker
//! thread (`Rc`, `Cell`): a connection never
//! leaves the thread that accepted it.

use std::cell::{Cell, RefCell};
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use http_body::{Body, Frame, SizeHint};
use hyper_util::server::graceful::GracefulConnection;
use tokio::task::AbortHandle;
use tokio::time::MissedTickBehavior;

use crate::security::clients::ClientConnection;

/// How many sweeps a limit spans: a connection is closed between the limit
/// and an eighth of it later.
const SWEEPS_PER_LIMIT: u32 = 8;
const MIN_PERIOD: Duration = Duration::from_millis(5);
const MAX_PERIOD: Duration = Duration::from_secs(3600);
/// A worker that has had at least this many connections open at once (about
/// 4 MiB of hyper's buffers) hands the allocator's free memory back to the
/// system when it is down to a quarter of them (see [`Connections::sweep`]).
const BURST: usize = 256;

/// One worker's connections, and its clock: the number of sweeps so far.
pub(super) struct Connections {
    sweeps: Cell<u64>,
    /// Whole sweeps an idle connection may last.
    limit: u64,
    period: Duration,
    watched: RefCell<Vec<Watched>>,
    /// The most connections open at once since the last burst ended.
    peak: Cell<usize>,
    /// Connections not yet ended.
    open: Cell<usize>,
    /// Set when shutdown begins.
    draining: Cell<bool>,
    /// Who waits for the last connection to end.
    drained: RefCell<Option<Waker>>,
}

struct Watched {
    activity: Weak<Activity>,
    abort: AbortHandle,
}

/// What one connection is doing.
pub(super) struct Activity {
    connections: Rc<Connections>,
    /// Requests handed over by hyper whose response body is not done.
    requests: Cell<u32>,
    /// The sweep count when `requests` last fell to 0 (or at accept).
    idle_since: Cell<u64>,
    /// The connection's task, to wake at shutdown.
    task: RefCell<Option<Waker>>,
    /// Its client's share of the per-client caps (none for a client
    /// without an address).
    client: Option<ClientConnection>,
}

impl Connections {
    /// Connections closed when idle for `limit`, with their sweeper task
    /// (spawned on the current `LocalSet`; it ends with it).
    pub(super) fn start(limit: Duration) -> Rc<Connections> {
        let connections = Rc::new(Connections::new(limit));
        let (sweeper, period) = (Rc::downgrade(&connections), connections.period);
        tokio::task::spawn_local(async move {
            let mut ticks = tokio::time::interval(period);
            // Consecutive sweeps at least `period` apart, however late the
            // thread gets to them: counting sweeps never undercounts time.
            ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let Some(connections) = sweeper.upgrade() else {
                    return;
                };
                connections.sweep();
            }
        });
        connections
    }

    fn new(limit: Duration) -> Connections {
        // Bounded both ways: no busy sweeping for tiny limits, and no
        // overflowing clock for "never" (`Duration::MAX`).
        let period = (limit / SWEEPS_PER_LIMIT).clamp(MIN_PERIOD, MAX_PERIOD);
        Connections {
            sweeps: Cell::new(0),
            limit: u64::try_from(limit.as_nanos().div_ceil(period.as_nanos())).unwrap_or(u64::MAX),
            period,
            watched: RefCell::new(Vec::new()),
            peak: Cell::new(0),
            open: Cell::new(0),
            draining: Cell::new(false),
            drained: RefCell::new(None),
        }
    }

    /// A new connection's activity (counted against `client`'s caps when
    /// there is one): idle from now.
    pub(super) fn connection(
        self: &Rc<Connections>,
        client: Option<ClientConnection>,
    ) -> Rc<Activity> {
        let open = self.open.get() + 1;
        self.open.set(open);
        self.peak.set(self.peak.get().max(open));
        Rc::new(Activity {
            connections: self.clone(),
            requests: Cell::new(0),
            idle_since: Cell::new(self.sweeps.get()),
            task: RefCell::new(None),
            client,
        })
    }

    /// Watches the connection `activity` describes, whose task `abort`
    /// stops.
    pub(super) fn watch(&self, activity: &Rc<Activity>, abort: AbortHandle) {
        self.watched.borrow_mut().push(Watched {
            activity: Rc::downgrade(activity),
            abort,
        });
    }

    /// Tells every connection to finish what it is doing and close, then
    /// waits until all have ended.
    pub(super) async fn drain(&self) {
        self.draining.set(true);
        for watched in self.watched.borrow().iter() {
            if let Some(activity) = watched.activity.upgrade()
                && let Some(task) = activity.task.borrow().as_ref()
            {
                task.wake_by_ref();
            }
        }
        std::future::poll_fn(|cx| {
            if self.open.get() == 0 {
                return Poll::Ready(());
            }
            *self.drained.borrow_mut() = Some(cx.waker().clone());
            Poll::Pending
        })
        .await;
    }

    fn sweep(&self) {
        let now = self.sweeps.get() + 1;
        self.sweeps.set(now);
        let mut watched = self.watched.borrow_mut();
        watched.retain(|watched| {
            let Some(activity) = watched.activity.upgrade() else {
                // The connection ended.
                return false;
            };
            // Idle since some time after sweep `idle_since`: at least
            // `now - idle_since - 1` periods ago.
            let expired =
                activity.requests.get() == 0 && now - activity.idle_since.get() > self.limit;
            if expired {
                tracing::debug!("closing a connection idle past the head timeout");
                watched.abort.abort();
            }
            !expired
        });
        let (open, peak) = (self.open.get(), self.peak.get());
        if peak >= BURST && open <= peak / 4 {
            // A burst of connections is over. What they held (hyper's two
            // 8 KiB buffers each, mostly) is free, but glibc keeps it
            // resident: after 6,000 idle connections a server stays at
            // ~100 MiB, and at up to twice that after more bursts, with
            // under 1 MiB in use (benches/NOTES.md, section 10).
            let left = watched.len();
            watched.shrink_to(left * 2);
            drop(watched);
            release_free_memory();
            self.peak.set(open);
        }
    }
}

/// Returns the allocator's free pages to the system: glibc's
/// `malloc_trim(0)`, which walks every arena (1 to 50 ms after 6,000
/// connections, under 2 ms after 600, during which the calling worker serves
/// nothing). Elsewhere, nothing: other C libraries have no such call, and
/// another global allocator has its own settings.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[expect(unsafe_code, reason = "one FFI call")]
fn release_free_memory() {
    use std::sync::atomic::{AtomicBool, Ordering};
    // Process-wide: one call trims every worker's arena, so a worker whose
    // burst ends while another trims does not wait for it to do it again.
    static TRIMMING: AtomicBool = AtomicBool::new(false);
    if TRIMMING.swap(true, Ordering::Acquire) {
        return;
    }
    let started = std::time::Instant::now();
    // SAFETY: `malloc_trim` takes no pointers and has no preconditions;
    // glibc serializes it with every other allocator call (MT-Safe).
    let released = unsafe { libc::malloc_trim(0) } != 0;
    TRIMMING.store(false, Ordering::Release);
    tracing::debug!(
        released,
        elapsed_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
        "returned free memory to the system after a burst of connections"
    );
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn release_free_memory() {}

impl Activity {
    /// A request arrived; it is in progress until the returned guard (kept
    /// by its response body) drops. It counts against its client's cap on
    /// requests in progress unless the client is at it, which the guard
    /// tells.
    pub(super) fn begin(self: &Rc<Activity>) -> InProgress {
        self.requests.set(self.requests.get() + 1);
        let counted = self
            .client
            .as_ref()
            .is_none_or(|client| client.begin_request().is_ok());
        InProgress {
            activity: self.clone(),
            counted,
        }
    }

    /// Serves `connection` until it ends, shutting it down gracefully when
    /// the worker drains. A closure's future, not an `async fn`'s: that
    /// would hold the connection (hyper's state, 672 bytes) twice, in a
    /// task each connection keeps for as long as it is open.
    pub(super) fn serve<C: GracefulConnection + Unpin>(
        self: Rc<Self>,
        mut connection: C,
    ) -> impl Future<Output = C::Output> {
        let mut told = false;
        std::future::poll_fn(move |cx| {
            if !told && self.connections.draining.get() {
                told = true;
                Pin::new(&mut connection).graceful_shutdown();
            }
            let mut task = self.task.borrow_mut();
            if !task
                .as_ref()
                .is_some_and(|known| known.will_wake(cx.waker()))
            {
                *task = Some(cx.waker().clone());
            }
            drop(task);
            Pin::new(&mut connection).poll(cx)
        })
    }
}

impl Drop for Activity {
    fn drop(&mut self) {
        let connections = &self.connections;
        let open = connections.open.get() - 1;
        connections.open.set(open);
        if open == 0
            && let Some(waiting) = connections.drained.borrow_mut().take()
        {
            waiting.wake();
        }
    }
}

/// A request in progress on its connection.
pub(super) struct InProgress {
    activity: Rc<Activity>,
    /// Whether it counts against its client's cap (it does unless the
    /// client was at it: then it is refused).
    counted: bool,
}

impl InProgress {
    /// Whether the client had room for this request.
    pub(super) fn admitted(&self) -> bool {
        self.counted
    }
}

impl Drop for InProgress {
    fn drop(&mut self) {
        let activity = &self.activity;
        if self.counted
            && let Some(client) = &activity.client
        {
            client.end_request();
        }
        let left = activity.requests.get() - 1;
        activity.requests.set(left);
        if left == 0 {
            activity.idle_since.set(activity.connections.sweeps.get());
        }
    }
}

/// A response body that keeps its request in progress until it is done
/// (hyper drops a body once it has taken all of it).
pub(super) struct Tracked<B> {
    pub(super) body: B,
    pub(super) _request: InProgress,
}

impl<B: Body + Unpin> Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A watch without its sweeper task, swept by hand.
    fn watch(limit: Duration) -> Rc<Connections> {
        Rc::new(Connections::new(limit))
    }

    #[tokio::test(flavor = "current_thread")]
    async fn only_connections_idle_for_the_whole_limit_are_closed() {
        tokio::task::LocalSet::new()
            .run_until(async {
                let watch = watch(Duration::from_secs(8));
                assert_eq!(watch.limit, 8);
                let connection = || tokio::task::spawn_local(std::future::pending::<()>());
                let (idle, busy) = (connection(), connection());
                let (idle_activity, busy_activity) =
                    (watch.connection(None), watch.connection(None));
                watch.watch(&idle_activity, idle.abort_handle());
                watch.watch(&busy_activity, busy.abort_handle());
                let request = busy_activity.begin();
                // Idle since sweep 0: 8 sweeps may have taken barely more
                // than 7 periods, so the 9th closes it, and only it.
                for _ in 0..8 {
                    watch.sweep();
                }
                assert!(!idle.is_finished());
                watch.sweep();
                assert!(idle.await.unwrap_err().is_cancelled());
                assert_eq!(watch.watched.borrow().len(), 1);
                drop(idle_activity);
                // The request's end starts its idle time.
                drop(request);
                for _ in 0..8 {
                    watch.sweep();
                }
                assert!(!busy.is_finished());
                // A new request stops the clock; its end restarts it.
                let again = busy_activity.begin();
                for _ in 0..20 {
                    watch.sweep();
                }
                assert!(!busy.is_finished());
                drop(again);
                for _ in 0..9 {
                    watch.sweep();
                }
                assert!(busy.await.unwrap_err().is_cancelled());
                assert!(watch.watched.borrow().is_empty());
            })
            .await;
    }

    #[test]
    fn the_end_of_a_burst_is_noticed_once() {
        let watch = watch(Duration::from_secs(10));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let local = tokio::task::LocalSet::new();
        local.block_on(&runtime, async {
            let mut open = Vec::new();
            for _ in 0..BURST {
                let task = tokio::task::spawn_local(std::future::pending::<()>());
                let activity = watch.connection(None);
                watch.watch(&activity, task.abort_handle());
                open.push((task, activity));
            }
            watch.sweep();
            assert_eq!(watch.peak.get(), BURST);
            // Down to a quarter and one: not over yet.
            open.truncate(BURST / 4 + 1);
            watch.sweep();
            assert_eq!(watch.peak.get(), BURST);
            assert!(watch.watched.borrow().capacity() >= BURST);
            // Down to a quarter: over; the list shrinks, the peak starts
            // again from what is open.
            open.pop();
            watch.sweep();
            assert_eq!(watch.peak.get(), BURST / 4);
            assert!(watch.watched.borrow().capacity() <= BURST / 2);
            open.clear();
            watch.sweep();
            assert_eq!(watch.peak.get(), BURST / 4);
        });
    }

    #[test]
    fn ended_connections_are_forgotten_and_short_limits_get_short_periods() {
        let watch = watch(Duration::from_millis(300));
        assert_eq!(watch.period, Duration::from_micros(37_500));
        assert_eq!(watch.limit, 8);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let local = tokio::task::LocalSet::new();
        local.block_on(&runtime, async {
            let task = tokio::task::spawn_local(async {});
            watch.watch(&watch.connection(None), task.abort_handle());
            watch.sweep();
            assert!(watch.watched.borrow().is_empty());
        });
        assert_eq!(self::watch(Duration::ZERO).limit, 0);
        let never = self::watch(Duration::MAX);
        assert_eq!(never.period, MAX_PERIOD);
        assert!(never.limit > 1 << 40);
    }
}
