//! The legacy era on Streamable HTTP (the 2025-11-25 shape): `initialize`
//! mints a sealed `Mcp-Session-Id`; requests of a session are answered with
//! JSON or, when the handler sends notifications or asks the client
//! something, on an SSE stream; the client's answers come back as POSTed
//! responses; GET opens the session's notification stream; DELETE ends it.
//!
//! It plugs into the HTTP transport as its [`HttpHook`].
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
use crate::dispatch::Dispatcher;
use crate::protocol::RequestId;
use crate::transport::http::endpoint::Endpoint;
use crate::transport::http::endpoint::{HttpHook, Serving};
use crate::transport::http::hook::{EraHeaders, Post};
use crate::transport::http::respond::HttpResponse;

use self::post::{EraMarks, claims};

// Header names parsed once: a lookup by `&str` parses the name every time.
// (Modern POSTs do not look them up: the endpoint's one-pass header scan
// reads both for `EraMarks`.)
const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");

/// The legacy side of one HTTP server, shared by its workers.
#[derive(Debug)]
pub(crate) struct LegacyHttp {
    offer: Arc<Offer>,
    pending: Arc<Pending>,
    /// This instance's part of each session, by the session's nonce.
    sessions: Mutex<HashMap<String, Arc<Local>>>,
    /// Sessions ended by DELETE here, until they would have expired.
    ended: Mutex<HashMap<String, u64>>,
    /// Requests running here, by session nonce and id, for
    /// `notifications/cancelled`.
    running: Arc<RunningTable>,
}

/// Requests running here, by session nonce and id.
type RunningTable = Mutex<HashMap<(String, RequestId), CancellationToken>>;

/// Removes a request from [`LegacyHttp::running`] however it ends.
struct Running<'a> {
    table: &'a RunningTable,
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
    pub(crate) fn new(dispatcher: &Dispatcher) -> LegacyHttp {
        LegacyHttp {
            offer: Arc::new(Offer::read(dispatcher)),
            pending: Arc::default(),
            sessions: Mutex::default(),
            ended: Mutex::default(),
            running: Arc::default(),
        }
    }

    /// The session a request names: `Err` is the 404 a client gets for a
    /// session that is unknown, expired or ended.
    fn session(&self, endpoint: &Endpoint, header: &str) -> Result<(SessionToken, Arc<Local>), ()> {
        let keys = endpoint.dispatcher().state_keys();
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

impl HttpHook for LegacyHttp {
    /// A GET or DELETE that names a session.
    fn claims_other(&self, parts: &Parts) -> bool {
        parts.headers.contains_key(SESSION_ID)
    }

    fn other(&self, endpoint: &Arc<Endpoint>, parts: &Parts) -> Option<HttpResponse> {
        streams::other_method(self, endpoint, parts)
    }

    fn claims_post(&self, era: EraHeaders<'_>, body: &str) -> bool {
        claims(EraMarks::read(era.version, era.session_id), body)
    }

    fn post<'a>(&'a self, endpoint: &'a Arc<Endpoint>, post: Post) -> Serving<'a> {
        Box::pin(post::post(self, endpoint, post))
    }
}

fn locked<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn header(parts: &Parts, name: HeaderName) -> Option<&str> {
    parts.headers.get(name).and_then(|v| v.to_str().ok())
}
