//! The runtime's own counters, for operators: requests refused by reason,
//! tasks running, subscriptions open, and Redis errors.
//!
//! They are counted in the process whatever the features, only where
//! something rare happens (a refusal, a task, a subscription, an error),
//! so the request path pays nothing for them. Read them with
//! [`snapshot`]; with the `otel` feature they are exported beside the
//! conventions' duration histogram, over OTLP and on the Prometheus
//! endpoint (`mcp_runtime_refusals_total{reason="origin"}` and the like).
//!
//! They are the process's, as a Prometheus registry is: two servers in one
//! process add to the same counts.
//!
//! ```
//! let counts = mcp_runtime::metrics::snapshot();
//! for (refusal, count) in counts.refusals {
//!     println!("{} (HTTP {}): {count}", refusal.reason(), refusal.status());
//! }
//! println!("tasks running: {}", counts.tasks_running);
//! ```

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

/// The counts at one moment, from [`snapshot`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Snapshot {
    /// Requests refused since the process started, by reason.
    pub refusals: [(Refusal, u64); 7],
    /// Tasks whose work is running in this process now.
    pub tasks_running: u64,
    /// `subscriptions/listen` streams open on this process now.
    pub subscriptions_open: u64,
    /// Redis commands that failed or did not answer in time, since the
    /// process started.
    pub redis_errors: u64,
}

struct Counts {
    refusals: [AtomicU64; 7],
    tasks_running: AtomicU64,
    subscriptions_open: AtomicU64,
    redis_errors: AtomicU64,
}

static COUNTS: Counts = Counts {
    refusals: [const { AtomicU64::new(0) }; 7],
    tasks_running: AtomicU64::new(0),
    subscriptions_open: AtomicU64::new(0),
    redis_errors: AtomicU64::new(0),
};

/// The counts now.
pub fn snapshot() -> Snapshot {
    let read = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
    Snapshot {
        refusals: Refusal::ALL.map(|refusal| (refusal, read(&COUNTS.refusals[refusal.index()]))),
        tasks_running: read(&COUNTS.tasks_running),
        subscriptions_open: read(&COUNTS.subscriptions_open),
        redis_errors: read(&COUNTS.redis_errors),
    }
}

/// Counts one refusal.
#[cfg_attr(
    not(feature = "http"),
    allow(dead_code, reason = "requests are refused by the HTTP transport")
)]
pub(crate) fn refused(refusal: Refusal) {
    COUNTS.refusals[refusal.index()].fetch_add(1, Ordering::Relaxed);
}

/// Counts one failed Redis command.
#[cfg_attr(
    not(feature = "redis"),
    allow(dead_code, reason = "counted by the Redis stores")
)]
pub(crate) fn redis_error() {
    COUNTS.redis_errors.fetch_add(1, Ordering::Relaxed);
}

/// Something that is open while it lives: counted up when made, down when
/// dropped.
#[derive(Debug)]
pub(crate) struct Open(&'static AtomicU64);

impl Open {
    /// A task's work, while it runs.
    pub(crate) fn task() -> Open {
        Open::counted(&COUNTS.tasks_running)
    }

    /// A `subscriptions/listen` stream, while it is open.
    pub(crate) fn subscription() -> Open {
        Open::counted(&COUNTS.subscriptions_open)
    }

    fn counted(counter: &'static AtomicU64) -> Open {
        counter.fetch_add(1, Ordering::Relaxed);
        Open(counter)
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
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
    fn refusals_and_errors_count_up() {
        let count = |s: &Snapshot| s.refusals[Refusal::TooLarge.index()].1;
        let before = snapshot();
        refused(Refusal::TooLarge);
        redis_error();
        let after = snapshot();
        assert!(count(&after) > count(&before));
        assert!(after.redis_errors > before.redis_errors);
    }

    #[test]
    fn an_open_thing_counts_down_when_dropped() {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let (first, second) = (Open::counted(&COUNTER), Open::counted(&COUNTER));
        assert_eq!(COUNTER.load(Ordering::Relaxed), 2);
        drop(first);
        assert_eq!(COUNTER.load(Ordering::Relaxed), 1);
        drop(second);
        assert_eq!(COUNTER.load(Ordering::Relaxed), 0);
    }
}
