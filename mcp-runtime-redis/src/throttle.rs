//! At most one log line a second for one kind of event: Redis failing
//! fails every request that needs it, and the log must not repeat it
//! thousands of times a second.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// One kind of event's line: the events in between are counted, and the
/// next line says how many there were.
#[derive(Debug)]
pub(crate) struct Throttle {
    /// Milliseconds since [`epoch`] at the last line, plus one (0: never).
    last: AtomicU64,
    suppressed: AtomicU64,
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

impl Throttle {
    pub(crate) const fn new() -> Throttle {
        Throttle {
            last: AtomicU64::new(0),
            suppressed: AtomicU64::new(0),
        }
    }

    /// Calls `log` with the number of events not logged since the last
    /// line, unless a line was written less than a second ago.
    pub(crate) fn note(&self, log: impl FnOnce(u64)) {
        let now = u64::try_from(epoch().elapsed().as_millis()).unwrap_or(u64::MAX - 1) + 1;
        let last = self.last.load(Ordering::Relaxed);
        let due = last == 0 || now.saturating_sub(last) >= 1_000;
        // Of two threads due at once, one logs and the other counts.
        if !due
            || self
                .last
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            self.suppressed.fetch_add(1, Ordering::Relaxed);
            return;
        }
        log(self.suppressed.swap(0, Ordering::Relaxed));
    }
}

#[cfg(test)]
mod tests {
    use super::Throttle;

    #[test]
    fn one_line_a_second_counts_the_rest() {
        let throttle = Throttle::new();
        let mut lines = Vec::new();
        for _ in 0..5 {
            throttle.note(|suppressed| lines.push(suppressed));
        }
        assert_eq!(lines, [0], "the first is logged, the next four counted");
        assert_eq!(
            throttle
                .suppressed
                .load(std::sync::atomic::Ordering::Relaxed),
            4
        );
    }
}
