//! The legacy era on Streamable HTTP (the 2025-11-25 shape): `initialize`
//! mints a sealed `Mcp-Session-Id`; requests of a session are answered with
//! JSON or, when the handler sends notifications or asks the client
//! something, on an SSE stream; the client's answers come back as POSTed
//! responses; GET opens the session's notification stream; DELETE ends it.
//!
//! What still needs stickiness: the answer to a server-to-client request
//! must reach the instance whose request waits for it (it is matched in
//! this process's memory), and `logging/setLevel`, resource subscriptions,
//! DELETE and the GET stream are per instance too. Without stickiness an
//! answer that lands elsewhere is accepted (202) but matched to nothing, so
//! the waiting request times out; everything else about a session works on
//! any instance holding the keys.

mod post;
mod respond;
mod streams;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use http::HeaderName;
use http::request::Parts;
use tokio_util::sync::CancellationToken;

use super::adapter::Offer;
use super::bridge::Pending;
use super::session::SharedLive;
use super::session_id::{SessionToken, now_seconds};
use crate::protocol::RequestId;
use crate::transport::http::pipeline::Shared;

pub(crate) use self::post::{EraMarks, claims, post};
pub(crate) use self::streams::other_method;

// Header names parsed once: a lookup by `&str` parses the name every time.
// (Modern POSTs do not look them up: the endpoint's one-pass header scan
// reads both for `EraMarks`.)
const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");

type HttpResponse = http::Response<crate::McpBody>;

/// The legacy side of one HTTP server, shared by its workers.
#[derive(Debug)]
pub(crate) struct LegacyHttp {
    offer: Offer,
    pending: Pending,
    /// This instance's part of each session, by the session's nonce.
    sessions: Mutex<HashMap<String, Arc<Local>>>,
    /// Sessions ended by DELETE here, until they would have expired.
    ended: Mutex<HashMap<String, u64>>,
    /// Requests running here, by session nonce and id, for
    /// `notifications/cancelled`.
    running: Mutex<HashMap<(String, RequestId), CancellationToken>>,
}

/// Removes a request from [`LegacyHttp::running`] however it ends.
struct Running<'a> {
    table: &'a Mutex<HashMap<(String, RequestId), CancellationToken>>,
    key: (String, RequestId),
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        locked(self.table).remove(&self.key);
    }
}

/// What one instance keeps of a session.
#[derive(Debug)]
struct Local {
    live: SharedLive,
    /// Cancelled by DELETE: closes the session's GET streams.
    closed: CancellationToken,
    expires: u64,
}

impl LegacyHttp {
    pub(crate) fn new(server: &crate::Server) -> LegacyHttp {
        LegacyHttp {
            offer: Offer::read(&server.dispatcher, server.info()),
            pending: Pending::default(),
            sessions: Mutex::default(),
            ended: Mutex::default(),
            running: Mutex::default(),
        }
    }

    /// The session a request names: `Err` is the 404 a client gets for a
    /// session that is unknown, expired or ended.
    fn session(&self, shared: &Shared, header: &str) -> Result<(SessionToken, Arc<Local>), ()> {
        let keys = shared.server.dispatcher.state_keys();
        let token = SessionToken::open(keys, header).ok_or(())?;
        if locked(&self.ended).contains_key(&token.nonce) {
            return Err(());
        }
        let mut sessions = locked(&self.sessions);
        let local = sessions
            .entry(token.nonce.clone())
            .or_insert_with(|| {
                Arc::new(Local {
                    live: SharedLive::default(),
                    closed: CancellationToken::new(),
                    expires: token.expires,
                })
            })
            .clone();
        Ok((token, local))
    }

    /// Forgets sessions that expired (called when one is added).
    fn sweep(&self) {
        let now = now_seconds();
        locked(&self.sessions).retain(|_, local| local.expires > now);
        locked(&self.ended).retain(|_, expires| *expires > now);
    }
}

/// Whether a GET or DELETE names a session (is legacy-era traffic).
pub(crate) fn names_session(parts: &Parts) -> bool {
    parts.headers.contains_key(SESSION_ID)
}

fn locked<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn header(parts: &Parts, name: HeaderName) -> Option<&str> {
    parts.headers.get(name).and_then(|v| v.to_str().ok())
}
