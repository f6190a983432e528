//! Per-client caps: how many connections one client address may hold open,
//! and how many of its requests may be in progress (from their head to the
//! end of their response, body reading included). Without them, one client
//! could take every slot the server has, and deny service to everyone else
//! while staying within its rate limit.
//!
//! A client is its IP address; IPv6 addresses count by their /64 prefix,
//! which is what one host (or one customer of an ISP) gets, and an
//! IPv4-mapped IPv6 address counts as the IPv4 address. The counts are
//! shared by every worker. A connection looks its client up once; its
//! requests then cost one atomic increment and one decrement each.
//!
//! They also count each client's open streams, and tell how many requests
//! a client has in progress: what the fair-share rule (`security::fair`)
//! reads when a pool runs short.

use std::collections::HashMap;
use std::net::IpAddr;

use super::client_of;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// The caps, and every client that holds something.
#[derive(Debug)]
pub(crate) struct Clients {
    max_connections: usize,
    max_requests: usize,
    held: Mutex<HashMap<IpAddr, Arc<Held>>>,
}

/// What one client holds.
#[derive(Debug, Default)]
struct Held {
    connections: AtomicUsize,
    requests: AtomicUsize,
    streams: AtomicUsize,
}

/// Which cap a client is at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AtCap {
    Connections,
    Requests,
}

impl Clients {
    pub(crate) fn new(max_connections: usize, max_requests: usize) -> Arc<Clients> {
        Arc::new(Clients {
            max_connections,
            max_requests,
            held: Mutex::new(HashMap::new()),
        })
    }

    fn held(&self) -> MutexGuard<'_, HashMap<IpAddr, Arc<Held>>> {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A connection from `ip`, or the cap it would exceed.
    pub(crate) fn connect(self: &Arc<Clients>, ip: IpAddr) -> Result<ClientConnection, AtCap> {
        let key = client_of(ip);
        let mut held = self.held();
        let entry = held.entry(key).or_default();
        // The caps are at least 1, so a client at one holds something: its
        // entry stays.
        if entry.connections.load(Ordering::Relaxed) >= self.max_connections {
            return Err(AtCap::Connections);
        }
        entry.connections.fetch_add(1, Ordering::Relaxed);
        Ok(ClientConnection {
            clients: self.clone(),
            key,
            held: entry.clone(),
        })
    }

    /// A request from `ip` that came without a connection of ours (through
    /// the tower service), or the cap it would exceed.
    pub(crate) fn request(self: &Arc<Clients>, ip: IpAddr) -> Result<ClientRequest, AtCap> {
        let key = client_of(ip);
        // Counted under the lock: an entry found here cannot be forgotten
        // before it counts this request.
        let mut clients = self.held();
        let held = clients.entry(key).or_default().clone();
        let request = ClientRequest::begin(self.clone(), key, held);
        drop(clients);
        request
    }

    /// How many requests the client at `ip` has in progress (the one
    /// asking included).
    pub(crate) fn requests_of(&self, ip: IpAddr) -> usize {
        let held = self.held();
        let requests = held.get(&client_of(ip));
        requests.map_or(0, |held| held.requests.load(Ordering::Relaxed))
    }

    /// Counts a stream of the client at `ip` when `admits` allows one to a
    /// client holding as many as it does.
    pub(crate) fn open_stream(
        self: &Arc<Clients>,
        ip: IpAddr,
        admits: impl FnOnce(usize) -> bool,
    ) -> Option<ClientStream> {
        let key = client_of(ip);
        let mut clients = self.held();
        let held = clients.entry(key).or_default();
        // Decided and counted under the lock: two streams of one client
        // cannot both pass on the same count.
        let streams = held.streams.load(Ordering::Relaxed);
        let admitted = admits(streams);
        if admitted {
            held.streams.fetch_add(1, Ordering::AcqRel);
        }
        let held = held.clone();
        drop(clients);
        let stream = ClientStream {
            clients: self.clone(),
            key,
            held,
            counted: admitted,
        };
        // A refused stream's guard forgets a client that holds nothing.
        admitted.then_some(stream)
    }

    /// Forgets `key` once it holds nothing (and is still `held`: a client
    /// that left and came back has a new entry, which is not this one's to
    /// remove).
    fn release(&self, key: IpAddr, held: &Arc<Held>) {
        let mut clients = self.held();
        // Read under the lock: whoever counts under it (`connect`,
        // `request`) is either seen here or finds no entry and makes one.
        let empty = held.connections.load(Ordering::Acquire) == 0
            && held.requests.load(Ordering::Acquire) == 0
            && held.streams.load(Ordering::Acquire) == 0;
        if empty
            && clients
                .get(&key)
                .is_some_and(|known| Arc::ptr_eq(known, held))
        {
            clients.remove(&key);
        }
    }

    #[cfg(test)]
    fn tracked(&self) -> usize {
        self.held().len()
    }
}

/// One open connection of a client; its requests count through it.
#[derive(Debug)]
pub(crate) struct ClientConnection {
    clients: Arc<Clients>,
    key: IpAddr,
    held: Arc<Held>,
}

impl ClientConnection {
    /// Counts a request on this connection, or says the client is at
    /// [`AtCap::Requests`]. Each `Ok` needs its [`end_request`]; the
    /// connection outlives its requests, so the client's entry does too.
    ///
    /// [`end_request`]: Self::end_request
    pub(crate) fn begin_request(&self) -> Result<(), AtCap> {
        let before = self.held.requests.fetch_add(1, Ordering::AcqRel);
        if before < self.clients.max_requests {
            return Ok(());
        }
        self.held.requests.fetch_sub(1, Ordering::AcqRel);
        Err(AtCap::Requests)
    }

    pub(crate) fn end_request(&self) {
        self.held.requests.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Drop for ClientConnection {
    fn drop(&mut self) {
        if self.held.connections.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.clients.release(self.key, &self.held);
        }
    }
}

/// One request of a client in progress.
#[derive(Debug)]
pub(crate) struct ClientRequest {
    clients: Arc<Clients>,
    key: IpAddr,
    held: Arc<Held>,
}

impl ClientRequest {
    fn begin(clients: Arc<Clients>, key: IpAddr, held: Arc<Held>) -> Result<ClientRequest, AtCap> {
        let before = held.requests.fetch_add(1, Ordering::AcqRel);
        let request = ClientRequest { clients, key, held };
        match before < request.clients.max_requests {
            true => Ok(request),
            // Dropping it undoes the count (and forgets an idle client).
            false => Err(AtCap::Requests),
        }
    }
}

impl Drop for ClientRequest {
    fn drop(&mut self) {
        let before = self.held.requests.fetch_sub(1, Ordering::AcqRel);
        // The last request of a client without connections (the tower
        // service's case): forget the client. With a connection open, the
        // connection's end does.
        if before == 1 && self.held.connections.load(Ordering::Acquire) == 0 {
            self.clients.release(self.key, &self.held);
        }
    }
}

/// One open stream of a client (a subscription, a legacy session's
/// notification stream).
#[derive(Debug)]
pub(crate) struct ClientStream {
    clients: Arc<Clients>,
    key: IpAddr,
    held: Arc<Held>,
    /// Whether it was counted (a refused one only forgets its client).
    counted: bool,
}

impl Drop for ClientStream {
    fn drop(&mut self) {
        if self.counted {
            self.held.streams.fetch_sub(1, Ordering::AcqRel);
        }
        self.clients.release(self.key, &self.held);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn connections_are_capped_per_client_and_released() {
        let clients = Clients::new(2, 10);
        let first = clients.connect(ip("127.0.0.2")).unwrap();
        let second = clients.connect(ip("127.0.0.2")).unwrap();
        assert_eq!(
            clients.connect(ip("127.0.0.2")).unwrap_err(),
            AtCap::Connections
        );
        // Another address has its own cap.
        let other = clients.connect(ip("127.0.0.1")).unwrap();
        drop(first);
        let third = clients.connect(ip("127.0.0.2")).unwrap();
        drop((second, third, other));
        assert_eq!(clients.tracked(), 0);
    }

    #[test]
    fn requests_are_capped_across_connections_and_without_one() {
        let clients = Clients::new(10, 3);
        let (a, b) = (
            clients.connect(ip("10.0.0.1")).unwrap(),
            clients.connect(ip("10.0.0.1")).unwrap(),
        );
        a.begin_request().unwrap();
        b.begin_request().unwrap();
        let service = clients.request(ip("10.0.0.1")).unwrap();
        assert_eq!(a.begin_request().unwrap_err(), AtCap::Requests);
        assert_eq!(
            clients.request(ip("10.0.0.1")).unwrap_err(),
            AtCap::Requests
        );
        drop(service);
        b.begin_request().unwrap();
        for connection in [&a, &b, &b] {
            connection.end_request();
        }
        drop((a, b));
        assert_eq!(clients.tracked(), 0);
        // A request without a connection forgets its client when it ends.
        drop(clients.request(ip("10.0.0.1")).unwrap());
        assert_eq!(clients.tracked(), 0);
    }

    #[test]
    fn streams_are_counted_per_client_and_forgotten() {
        let clients = Clients::new(10, 10);
        let first = clients
            .open_stream(ip("10.0.0.1"), |held| held < 2)
            .unwrap();
        let second = clients
            .open_stream(ip("10.0.0.1"), |held| held < 2)
            .unwrap();
        assert!(
            clients
                .open_stream(ip("10.0.0.1"), |held| held < 2)
                .is_none()
        );
        assert!(
            clients
                .open_stream(ip("10.0.0.2"), |held| held < 2)
                .is_some()
        );
        drop(first);
        let third = clients
            .open_stream(ip("10.0.0.1"), |held| held < 2)
            .unwrap();
        drop((second, third));
        assert_eq!(clients.tracked(), 0);
        // A connection's requests are what `requests_of` counts.
        let connection = clients.connect(ip("10.0.0.1")).unwrap();
        connection.begin_request().unwrap();
        assert_eq!(clients.requests_of(ip("10.0.0.1")), 1);
        assert_eq!(clients.requests_of(ip("10.0.0.9")), 0);
        connection.end_request();
    }

    #[test]
    fn ipv6_clients_count_by_their_slash_64() {
        assert_eq!(client_of(ip("2001:db8:1:2:aaaa::1")), ip("2001:db8:1:2::"));
        assert_eq!(client_of(ip("::ffff:192.0.2.7")), ip("192.0.2.7"));
        let clients = Clients::new(1, 1);
        let _one = clients.connect(ip("2001:db8:1:2::1")).unwrap();
        assert_eq!(
            clients.connect(ip("2001:db8:1:2::ffff")).unwrap_err(),
            AtCap::Connections
        );
        assert!(clients.connect(ip("2001:db8:1:3::1")).is_ok());
    }
}
