//! Fair shares: the one rule every pool that clients fill follows (requests
//! in flight, open streams, tasks, legacy sessions).
//!
//! A pool of `N` slots shared by clients (an address, or a task's owner)
//! was once guarded by a per-client cap alone, a whole fraction of `N`
//! (1/8, 1/2): eight addresses, or two, then held every slot and everyone
//! else was refused. The rule here keeps room for a newcomer whatever a
//! handful of clients do:
//!
//! - **A client holds at most 1/8 of a pool** (its share), and
//! - **once less than half of the pool is free, a client takes another
//!   slot only while it holds less than 1/8 of the free slots.** The
//!   biggest holders are refused first; a client holding nothing is
//!   admitted while any slot is free.
//!
//! The HTTP transport's pools (requests in flight, streams) apply the rule
//! only once less than half is free ([`FairShare::is_contended`]): before,
//! a client is held to its own cap on requests in progress, which a
//! deployment behind a proxy (every client at the proxy's address) raises.
//!
//! Each client that fills its allowance past half leaves about 8/9 of what
//! was free, so the free slots shrink geometrically with the number of
//! clients, not linearly: exhausting a pool takes 44 distinct clients for
//! the 1,024 requests in flight, 32 for the 256 streams, 63 for the 10,000
//! tasks (the tests below count them). Each refusal is the pool's usual
//! one (HTTP 503 `Server busy`, or the task store's `-31001`).
//!
//! No client is ever evicted: what it holds, it keeps until it ends.

/// The rule for one pool of `capacity` slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FairShare {
    capacity: usize,
}

impl FairShare {
    pub(crate) const fn new(capacity: usize) -> FairShare {
        FairShare { capacity }
    }

    /// The most one client may hold: 1/8 of the pool, at least one.
    pub(crate) const fn share(self) -> usize {
        let share = self.capacity / 8;
        if share == 0 { 1 } else { share }
    }

    /// Whether a client's holding needs to be known to decide: while at
    /// least half of the pool is free, anyone under its share is admitted.
    pub(crate) const fn is_contended(self, free: usize) -> bool {
        free * 2 < self.capacity
    }

    /// Whether a client holding `held` slots may take one more, with `free`
    /// slots free.
    pub(crate) const fn admits(self, held: usize, free: usize) -> bool {
        if free == 0 || held >= self.share() {
            return false;
        }
        !self.is_contended(free) || held * 8 < free
    }
}

#[cfg(test)]
mod tests {
    use super::FairShare;

    /// Clients fill `pool` one after another, each as far as the rule lets
    /// it: how many it takes to leave no slot free.
    fn clients_to_exhaust(pool: FairShare, capacity: usize) -> usize {
        let mut free = capacity;
        for client in 1.. {
            let mut held = 0;
            while pool.admits(held, free) {
                held += 1;
                free -= 1;
            }
            if free == 0 {
                return client;
            }
            assert!(
                held > 0 || free == 0,
                "a newcomer was refused with {free} free"
            );
        }
        unreachable!()
    }

    #[test]
    fn a_client_holds_at_most_an_eighth() {
        let pool = FairShare::new(1024);
        assert_eq!(pool.share(), 128);
        assert!(pool.admits(127, 1024));
        assert!(!pool.admits(128, 1024));
        assert_eq!(FairShare::new(3).share(), 1);
    }

    #[test]
    fn past_half_the_biggest_holders_are_refused_first() {
        let pool = FairShare::new(1024);
        // 400 free: under half; a client holding 50 = 400/8 is refused, a
        // lighter one is not, a newcomer always is admitted.
        assert!(!pool.admits(50, 400));
        assert!(pool.admits(49, 400));
        assert!(pool.admits(0, 1));
        assert!(!pool.admits(0, 0));
    }

    #[test]
    fn a_handful_of_clients_cannot_exhaust_a_pool() {
        // The old rule: 8 addresses filled 1,024 requests in flight, 2 the
        // 256 streams, 10 the 10,000 tasks.
        assert_eq!(clients_to_exhaust(FairShare::new(1024), 1024), 44);
        assert_eq!(clients_to_exhaust(FairShare::new(256), 256), 32);
        assert_eq!(clients_to_exhaust(FairShare::new(10_000), 10_000), 63);
    }
}
