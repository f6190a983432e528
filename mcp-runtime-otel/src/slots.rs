//! A small pool of connection slots shared fairly by client address (the
//! Prometheus endpoint's 16): one client holds at most `per_client` of
//! them, and when the pool is full a client that holds fewer than the
//! biggest holder takes that holder's oldest slot, which is told to close.
//!
//! A cap alone would still let `total / per_client` addresses take the
//! whole pool; with the eviction, a newcomer is shut out only while every
//! slot is held by a different client (16 addresses, one connection
//! each), and then only until one of them ends (the endpoint's head
//! timeout and connection time bound that). A client is its IP address,
//! IPv6 by its /64, as for the MCP endpoint's caps (`clients`).

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use mcp_runtime::security::client_of;

/// The pool.
#[derive(Debug)]
pub(crate) struct Slots {
    total: usize,
    per_client: usize,
    state: Mutex<Holdings>,
    /// Told when a slot is given back, for [`Slots::vacancy`].
    freed: Notify,
}

#[derive(Debug, Default)]
struct Holdings {
    /// Each client's slots, oldest first.
    held: HashMap<IpAddr, VecDeque<Held>>,
    count: usize,
    next_id: u64,
}

#[derive(Debug)]
struct Held {
    id: u64,
    evicted: CancellationToken,
}

/// One slot of a client: given back when dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    slots: Arc<Slots>,
    key: IpAddr,
    id: u64,
    evicted: CancellationToken,
}

impl Slots {
    /// `total` slots, at most `per_client` (at least 1) for one client.
    pub(crate) fn new(total: usize, per_client: usize) -> Arc<Slots> {
        Arc::new(Slots {
            total,
            per_client: per_client.max(1),
            state: Mutex::new(Holdings::default()),
            freed: Notify::new(),
        })
    }

    fn state(&self) -> MutexGuard<'_, Holdings> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits until a newcomer could be admitted: a slot is free, or some
    /// client holds more than one. Until then, connections wait in the
    /// kernel's backlog rather than being accepted only to be closed.
    pub(crate) async fn vacancy(&self) {
        loop {
            let freed = self.freed.notified();
            let mut freed = std::pin::pin!(freed);
            // Registered before looking: a slot given back in between
            // still wakes this.
            freed.as_mut().enable();
            if self.state().may_admit(self.total) {
                return;
            }
            freed.await;
        }
    }

    /// A slot for a connection from `ip`: a free one, else the oldest of
    /// the biggest holder when it holds at least two more than this
    /// client does (so that shares never cross); `None` when the client
    /// holds its `per_client` already, or no one holds more than it would.
    pub(crate) fn admit(self: &Arc<Slots>, ip: IpAddr) -> Option<Slot> {
        let key = client_of(ip);
        let mut state = self.state();
        let mine = state.held.get(&key).map_or(0, VecDeque::len);
        if mine >= self.per_client {
            return None;
        }
        if state.count >= self.total {
            state.evict_from_biggest_above(mine + 1)?;
        }
        let id = state.next_id;
        state.next_id += 1;
        state.count += 1;
        let evicted = CancellationToken::new();
        state.held.entry(key).or_default().push_back(Held {
            id,
            evicted: evicted.clone(),
        });
        Some(Slot {
            slots: self.clone(),
            key,
            id,
            evicted,
        })
    }

    fn release(&self, key: IpAddr, id: u64) {
        let mut state = self.state();
        let Some(held) = state.held.get_mut(&key) else {
            return;
        };
        // Not found: it was evicted, and counted out then.
        let Some(at) = held.iter().position(|slot| slot.id == id) else {
            return;
        };
        held.remove(at);
        if held.is_empty() {
            state.held.remove(&key);
        }
        state.count -= 1;
        drop(state);
        self.freed.notify_waiters();
    }

    #[cfg(test)]
    fn held_by(&self, ip: &str) -> usize {
        let key = client_of(ip.parse().unwrap());
        self.state().held.get(&key).map_or(0, VecDeque::len)
    }
}

impl Holdings {
    fn may_admit(&self, total: usize) -> bool {
        self.count < total || self.held.values().any(|held| held.len() > 1)
    }

    /// Takes the oldest slot of the client holding the most, if it holds
    /// more than `floor`; `None` when no client does.
    fn evict_from_biggest_above(&mut self, floor: usize) -> Option<()> {
        let (&key, held) = self.held.iter_mut().max_by_key(|(_, held)| held.len())?;
        if held.len() <= floor {
            return None;
        }
        let oldest = held.pop_front()?;
        if held.is_empty() {
            self.held.remove(&key);
        }
        self.count -= 1;
        oldest.evicted.cancel();
        Some(())
    }
}

impl Slot {
    /// Completes when another client took this slot: the connection
    /// should close.
    pub(crate) fn evicted(&self) -> WaitForCancellationFuture<'_> {
        self.evicted.cancelled()
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.slots.release(self.key, self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn a_client_holds_at_most_its_share() {
        let slots = Slots::new(16, 4);
        let held: Vec<Slot> = (0..4)
            .map(|_| slots.admit(ip("127.0.0.2")).unwrap())
            .collect();
        assert!(slots.admit(ip("127.0.0.2")).is_none());
        // IPv6 counts by /64.
        let v6: Vec<Slot> = (0..4)
            .map(|n| slots.admit(ip(&format!("2001:db8::{n}"))).unwrap())
            .collect();
        assert!(slots.admit(ip("2001:db8::ffff")).is_none());
        drop(held);
        assert_eq!(slots.held_by("127.0.0.2"), 0);
        assert_eq!(slots.held_by("2001:db8::1"), 4);
        drop(v6);
        assert_eq!(slots.state().count, 0);
        assert!(slots.state().held.is_empty());
    }

    #[test]
    fn a_full_pool_gives_a_newcomer_the_biggest_holders_oldest_slot() {
        let slots = Slots::new(4, 4);
        let flood: Vec<Slot> = (0..3)
            .map(|_| slots.admit(ip("127.0.0.2")).unwrap())
            .collect();
        let other = slots.admit(ip("127.0.0.3")).unwrap();
        let newcomer = slots.admit(ip("127.0.0.1")).unwrap();
        assert!(flood[0].evicted.is_cancelled());
        assert!(!flood[1].evicted.is_cancelled() && !other.evicted.is_cancelled());
        assert_eq!(slots.held_by("127.0.0.2"), 2);
        // Dropping the evicted slot gives back nothing more.
        let mut flood = flood.into_iter();
        drop(flood.next());
        assert_eq!(slots.state().count, 4);
        // Shares never cross: 127.0.0.3 (1 slot) may not take from a
        // holder of 2, as it would then hold 2 and leave 1.
        assert!(slots.admit(ip("127.0.0.3")).is_none());
        let second = slots.admit(ip("127.0.0.1"));
        assert!(second.is_none(), "127.0.0.1 would hold 2, 127.0.0.2 only 1");
        drop((flood, other, newcomer));
        assert_eq!(slots.state().count, 0);
    }

    #[test]
    fn a_pool_of_single_holders_admits_no_one_until_a_slot_is_freed() {
        let slots = Slots::new(2, 4);
        let first = slots.admit(ip("10.0.0.1")).unwrap();
        let _second = slots.admit(ip("10.0.0.2")).unwrap();
        assert!(!slots.state().may_admit(slots.total));
        assert!(slots.admit(ip("10.0.0.3")).is_none());
        drop(first);
        assert!(slots.state().may_admit(slots.total));
        assert!(slots.admit(ip("10.0.0.3")).is_some());
    }

    #[tokio::test]
    async fn vacancy_waits_for_a_slot_given_back() {
        let slots = Slots::new(1, 1);
        let held = slots.admit(ip("10.0.0.1")).unwrap();
        let waiting = slots.clone();
        let waiter = tokio::spawn(async move { waiting.vacancy().await });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        drop(held);
        tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
            .await
            .expect("vacancy woke")
            .unwrap();
    }
}
