//! A server's own counters, for operators: requests refused by reason,
//! tasks running, subscriptions open, and the shared store's (Redis's) errors.
//!
//! They are counted whatever the features, only where something rare
//! happens (a refusal, a task, a subscription, an error), so the request
//! path pays nothing for them. Each server counts its own: two servers in
//! one process keep separate counts. Read them with
//! [`Server::metrics`](crate::Server::metrics); with `mcp-runtime-otel`
//! they are exported beside the conventions' duration histogram, over OTLP
//! and on the Prometheus endpoint (`mcp_runtime_refusals_total{reason="origin"}`
//! and the like), summed over the servers the export was given to.
//!
//! ```
//! # fn main() -> Result<(), mcp_runtime::BuildError> {
//! # // (Doctests share one binary: no item of another is served here.)
//! let server = mcp_runtime::ServerBuilder::new("demo", "1.0.0")
//! #   .items(mcp_runtime::Items::none())
//!     .build()?;
//! let counts = server.metrics().snapshot();
//! for (refusal, count) in counts.refusals {
//!     println!("{} (HTTP {}): {count}", refusal.reason(), refusal.status());
//! }
//! println!("tasks running: {}", counts.tasks_running);
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Why a request was refused before it reached a handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Refusal {
    /// 429: the rate limit, a client's cap on requests in progress, or a
    /// caller's task quota.
    RateLimited,
    /// 429 before anything was read: too many connections from one
    /// address.
    Connections,
    /// 503: too many requests in flight, or a shared store (Redis) that
    /// does not answer.
    Busy,
    /// 413: a body over the limit.
    TooLarge,
    /// 403: an `Origin` that is not allowed.
    Origin,
    /// 403 (400 when malformed): a `Host` that is not allowed.
    Host,
    /// 504: the request timeout passed before the answer.
    Timeout,
}

impl Refusal {
    /// Every reason, in a fixed order.
    pub const ALL: [Refusal; 7] = [
        Refusal::RateLimited,
        Refusal::Connections,
        Refusal::Busy,
        Refusal::TooLarge,
        Refusal::Origin,
        Refusal::Host,
        Refusal::Timeout,
    ];

    /// The reason as a label value: `rate_limited`, `connections`, `busy`,
    /// `too_large`, `origin`, `host`, `timeout`.
    pub fn reason(self) -> &'static str {
        match self {
            Refusal::RateLimited => "rate_limited",
            Refusal::Connections => "connections",
            Refusal::Busy => "busy",
            Refusal::TooLarge => "too_large",
            Refusal::Origin => "origin",
            Refusal::Host => "host",
            Refusal::Timeout => "timeout",
        }
    }

    /// The HTTP status the refusal is usually answered with.
    pub fn status(self) -> u16 {
        match self {
            Refusal::RateLimited | Refusal::Connections => 429,
            Refusal::Busy => 503,
            Refusal::TooLarge => 413,
            Refusal::Origin | Refusal::Host => 403,
            Refusal::Timeout => 504,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The counts at one moment, from [`Metrics::snapshot`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Snapshot {
    /// Requests refused since the server was built, by reason.
    pub refusals: [(Refusal, u64); 7],
    /// Tasks whose work is running in this process now.
    pub tasks_running: u64,
    /// `subscriptions/listen` streams open on this server now.
    pub subscriptions_open: u64,
    /// Commands to the shared store (Redis) that failed or did not answer
    /// in time, since the server was built.
    pub shared_store_errors: u64,
}

#[derive(Debug, Default)]
struct Counts {
    refusals: [AtomicU64; 7],
    tasks_running: AtomicU64,
    subscriptions_open: AtomicU64,
    shared_store_errors: AtomicU64,
}

/// One server's counters ([`Server::metrics`](crate::Server::metrics)):
/// made when the server is built, and gone with it. Cheap to clone; every
/// clone counts into the same place.
#[derive(Clone, Debug, Default)]
pub struct Metrics(Arc<Counts>);

impl Metrics {
    /// The counts now.
    pub fn snapshot(&self) -> Snapshot {
        let read = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let counts = &*self.0;
        Snapshot {
            refusals: Refusal::ALL
                .map(|refusal| (refusal, read(&counts.refusals[refusal.index()]))),
            tasks_running: read(&counts.tasks_running),
            subscriptions_open: read(&counts.subscriptions_open),
            shared_store_errors: read(&counts.shared_store_errors),
        }
    }

    /// Counts one refusal.
    #[cfg_attr(
        all(not(feature = "http"), not(test)),
        expect(dead_code, reason = "requests are refused by the HTTP transport")
    )]
    pub(crate) fn refused(&self, refusal: Refusal) {
        self.0.refusals[refusal.index()].fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one command to the shared store (a shared backend's: Redis)
    /// that failed or did not answer in time.
    pub fn shared_store_error(&self) {
        self.0.shared_store_errors.fetch_add(1, Ordering::Relaxed);
    }

    /// A task's work, while it runs.
    pub(crate) fn task(&self) -> Open {
        Open::counted(self, |counts| &counts.tasks_running)
    }

    /// A `subscriptions/listen` stream, while it is open.
    pub(crate) fn subscription(&self) -> Open {
        Open::counted(self, |counts| &counts.subscriptions_open)
    }
}

/// A [`Metrics`] that does not keep its server's counts alive: what an
/// exporter that outlives servers holds (see
/// [`Setup::metrics_reader`](crate::plugin::Setup::metrics_reader)).
#[derive(Clone, Debug)]
pub struct WeakMetrics(std::sync::Weak<Counts>);

impl WeakMetrics {
    /// The counts now, if their server (or anything counting for it) is
    /// still alive.
    pub fn snapshot(&self) -> Option<Snapshot> {
        self.0.upgrade().map(|counts| Metrics(counts).snapshot())
    }
}

impl Metrics {
    /// A handle that reads these counts without keeping them alive.
    pub fn downgrade(&self) -> WeakMetrics {
        WeakMetrics(Arc::downgrade(&self.0))
    }
}

/// A plugin's reader of each built server's counters (see
/// [`Setup::metrics_reader`](crate::plugin::Setup::metrics_reader)).
pub(crate) type MetricsReader = Arc<dyn Fn(&Metrics) + Send + Sync>;

/// Something that is open while it lives: counted up when made, down when
/// dropped. It holds its server's counts, so a task that outlives the
/// server still counts itself down where it counted up.
#[derive(Debug)]
pub(crate) struct Open {
    counts: Arc<Counts>,
    counter: fn(&Counts) -> &AtomicU64,
}

impl Open {
    fn counted(metrics: &Metrics, counter: fn(&Counts) -> &AtomicU64) -> Open {
        counter(&metrics.0).fetch_add(1, Ordering::Relaxed);
        Open {
            counts: metrics.0.clone(),
            counter,
        }
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        (self.counter)(&self.counts).fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_has_its_own_label_and_slot() {
        let reasons: std::collections::HashSet<_> =
            Refusal::ALL.iter().map(|r| r.reason()).collect();
        assert_eq!(reasons.len(), Refusal::ALL.len());
        for (index, refusal) in Refusal::ALL.iter().enumerate() {
            assert_eq!(refusal.index(), index);
        }
    }

    #[test]
    fn refusals_and_errors_count_up_in_their_own_metrics_only() {
        let (counted, other) = (Metrics::default(), Metrics::default());
        counted.refused(Refusal::TooLarge);
        counted.refused(Refusal::TooLarge);
        counted.shared_store_error();
        let snapshot = counted.snapshot();
        assert_eq!(
            snapshot.refusals[Refusal::TooLarge.index()],
            (Refusal::TooLarge, 2)
        );
        assert_eq!(snapshot.shared_store_errors, 1);
        assert_eq!(other.snapshot().refusals[Refusal::TooLarge.index()].1, 0);
        assert_eq!(other.snapshot().shared_store_errors, 0);
    }

    #[test]
    fn an_open_thing_counts_down_when_dropped() {
        let metrics = Metrics::default();
        let (first, second) = (metrics.task(), metrics.subscription());
        let third = metrics.task();
        assert_eq!(metrics.snapshot().tasks_running, 2);
        assert_eq!(metrics.snapshot().subscriptions_open, 1);
        drop((first, second));
        assert_eq!(metrics.snapshot().tasks_running, 1);
        assert_eq!(metrics.snapshot().subscriptions_open, 0);
        drop(third);
        assert_eq!(metrics.snapshot().tasks_running, 0);
    }
}
