//! What this instance keeps of each legacy session: bounded, shared fairly
//! between client addresses, and swept by expiry in order.
//!
//! A session id is sealed (any instance opens it), but each instance keeps
//! a small entry per session it serves: its live settings, and whether it
//! ended (DELETE). Anyone may `initialize`, and a session lasts a day, so
//! the table is bounded (`HttpOptions::max_legacy_sessions`, 65,536 by
//! default: about 26 MiB) and follows the fair-share rule
//! (`security::fair`): one address holds at most 1/8 of it, and once less
//! than half is free, less than 1/8 of what is free. An ended session
//! keeps its entry (it must stay refused) until it would have expired.
//! Expired entries leave in expiry order, a few per insert, never by a
//! walk over the whole table.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::net::IpAddr;
use std::sync::Arc;

use super::Local;
use crate::legacy::session_id::SessionToken;
use crate::security::client_of;
use crate::security::fair::FairShare;

/// The sessions this instance keeps.
#[derive(Debug)]
pub(super) struct Sessions {
    /// The most entries kept.
    capacity: usize,
    entries: HashMap<String, Entry>,
    /// Entries per client address (an entry made for a session another
    /// instance started has none).
    by_client: HashMap<IpAddr, usize>,
    /// Expiry times, soonest first (an entry may be gone already).
    expiry: BinaryHeap<Reverse<(u64, String)>>,
}

#[derive(Debug)]
struct Entry {
    local: Arc<Local>,
    client: Option<IpAddr>,
}

impl Sessions {
    /// An empty table that keeps at most `capacity` sessions.
    pub(super) fn new(capacity: usize) -> Sessions {
        Sessions {
            capacity: capacity.max(1),
            entries: HashMap::new(),
            by_client: HashMap::new(),
            expiry: BinaryHeap::new(),
        }
    }

    /// Starts a session for `client`, unless the rule refuses it.
    pub(super) fn start(&mut self, token: &SessionToken, client: Option<IpAddr>, now: u64) -> bool {
        self.sweep(now);
        let client = client.map(client_of);
        let held = client.map_or(0, |client| {
            self.by_client.get(&client).copied().unwrap_or(0)
        });
        let free = self.capacity.saturating_sub(self.entries.len());
        if !FairShare::new(self.capacity).admits(held, free) {
            return false;
        }
        self.insert(token, client);
        true
    }

    /// This instance's part of a session, made on first use (a session
    /// another instance started). With the table full it is not kept: the
    /// request is served, its settings read again next time.
    pub(super) fn local(&mut self, token: &SessionToken, now: u64) -> Arc<Local> {
        if let Some(entry) = self.entries.get(&token.nonce) {
            return entry.local.clone();
        }
        self.sweep(now);
        if self.entries.len() >= self.capacity {
            return Arc::new(Local::new(token.expires));
        }
        self.insert(token, None)
    }

    /// Whether the session ended here (DELETE, or told by another
    /// instance).
    pub(super) fn ended(&self, nonce: &str) -> bool {
        self.entries
            .get(nonce)
            .is_some_and(|entry| entry.local.closed.is_cancelled())
    }

    /// When a session this instance holds expires.
    pub(super) fn expires(&self, nonce: &str) -> Option<u64> {
        self.entries.get(nonce).map(|entry| entry.local.expires)
    }

    /// Ends a session here: its streams close, and it stays refused until
    /// it would have expired.
    pub(super) fn end(&mut self, token_nonce: &str, expires: u64, now: u64) {
        if !self.entries.contains_key(token_nonce) {
            self.sweep(now);
            if self.entries.len() >= self.capacity {
                // Not kept: with a shared store it refuses the id anyway,
                // and without one no instance ever served it.
                return;
            }
            let local = Arc::new(Local::new(expires));
            let entry = Entry {
                local,
                client: None,
            };
            self.entries.insert(token_nonce.to_owned(), entry);
            self.expiry.push(Reverse((expires, token_nonce.to_owned())));
        }
        if let Some(entry) = self.entries.get(token_nonce) {
            entry.local.closed.cancel();
        }
    }

    fn insert(&mut self, token: &SessionToken, client: Option<IpAddr>) -> Arc<Local> {
        let local = Arc::new(Local::new(token.expires));
        let entry = Entry {
            local: local.clone(),
            client,
        };
        if let Some(client) = client {
            *self.by_client.entry(client).or_default() += 1;
        }
        self.entries.insert(token.nonce.clone(), entry);
        self.expiry
            .push(Reverse((token.expires, token.nonce.clone())));
        local
    }

    /// Drops the entries whose session has expired, soonest first.
    fn sweep(&mut self, now: u64) {
        while let Some(Reverse((expires, _))) = self.expiry.peek() {
            if *expires > now {
                return;
            }
            let Some(Reverse((_, nonce))) = self.expiry.pop() else {
                return;
            };
            let expired = self
                .entries
                .get(&nonce)
                .is_some_and(|entry| entry.local.expires <= now);
            if !expired {
                continue;
            }
            let Some(entry) = self.entries.remove(&nonce) else {
                continue;
            };
            entry.local.closed.cancel();
            self.forget_client(entry.client);
        }
    }

    fn forget_client(&mut self, client: Option<IpAddr>) {
        let Some(client) = client else {
            return;
        };
        if let Some(count) = self.by_client.get_mut(&client) {
            *count -= 1;
            if *count == 0 {
                self.by_client.remove(&client);
            }
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::legacy::session::Negotiated;

    fn token(expires: u64) -> SessionToken {
        let negotiated = Negotiated {
            version: "2025-11-25".to_owned(),
            capabilities: serde_json::Map::new(),
            client_info: None,
        };
        let mut token = SessionToken::new(negotiated);
        token.expires = expires;
        token
    }

    const MAX_SESSIONS: usize = 65_536;

    fn ip(host: u8) -> Option<IpAddr> {
        Some(IpAddr::from([127, 0, 0, host]))
    }

    #[test]
    fn a_handful_of_addresses_cannot_take_every_session() {
        let mut sessions = Sessions::new(MAX_SESSIONS);
        let share = MAX_SESSIONS / 8;
        for host in 2..10 {
            let mut held = 0;
            while sessions.start(&token(100), ip(host), 0) {
                held += 1;
            }
            assert!(held <= share, "{held}");
        }
        assert!(sessions.len() < MAX_SESSIONS);
        assert!(
            sessions.start(&token(100), ip(99), 0),
            "a newcomer is served"
        );
    }

    #[test]
    fn expired_sessions_leave_in_order_and_free_their_share() {
        let mut sessions = Sessions::new(MAX_SESSIONS);
        let first = token(10);
        assert!(sessions.start(&first, ip(2), 0));
        assert!(sessions.start(&token(20), ip(2), 0));
        sessions.end(&first.nonce, first.expires, 0);
        assert!(sessions.ended(&first.nonce), "stays refused");
        assert!(sessions.start(&token(30), ip(3), 15));
        assert_eq!(sessions.len(), 2, "the first expired");
        assert!(!sessions.ended(&first.nonce));
        assert_eq!(sessions.by_client.get(&ip(2).unwrap()), Some(&1));
    }
}
