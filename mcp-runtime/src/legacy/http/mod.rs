//! The legacy era on Streamable HTTP (the 2025-11-25 shape): `initialize`
//! mints a sealed `Mcp-Session-Id`; requests of a session are answered with
//! JSON or, when the handler sends notifications or asks the client
//! something, on an SSE stream; the client's answers come back as POSTed
//! responses; GET opens the session's notification stream; DELETE ends it.
//!
//! It plugs into the HTTP transport as its [`HttpHook`].
//!
//! The session travels sealed in its id, so any instance holding the keys
//! serves its plain requests. What one instance cannot know alone (an
//! answer to a server-to-client request that lands on another instance,
//! `notifications/cancelled` for a request running elsewhere, the log
//! level, the subscriptions, a DELETE) goes through the server's
//! [`SessionShare`] when it has one (Redis): then no request of a session
//! needs sticky routing. Without one, all of it is this instance's.

mod post;
mod respond;
mod sessions;
mod streams;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use http::HeaderName;
use http::request::Parts;
use tokio_util::sync::CancellationToken;

use super::adapter::Offer;
use super::bridge::Pending;
use super::session::{SharedLive, lock};
use super::session_id::{SessionToken, now_seconds};
use super::shared::{Forwarded, SessionShare};
use crate::dispatch::Dispatcher;
use crate::protocol::RequestId;
use crate::transport::http::endpoint::Endpoint;
use crate::transport::http::endpoint::{HttpHook, Serving, ServingOther};
use crate::transport::http::hook::{EraHeaders, Post};

use self::post::{EraMarks, claims};
use self::sessions::Sessions;

// Header names parsed once: a lookup by `&str` parses the name every time.
// (Modern POSTs do not look them up: the endpoint's one-pass header scan
// reads both for `EraMarks`.)
const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");

/// The legacy side of one HTTP server, shared by its workers.
#[derive(Debug)]
pub(crate) struct LegacyHttp {
    offer: Arc<Offer>,
    tables: Arc<Tables>,
    /// What the instances share, when there are several.
    share: Option<Arc<dyn SessionShare>>,
}

/// What this instance keeps of its sessions.
#[derive(Debug)]
struct Tables {
    pending: Arc<Pending>,
    /// This instance's part of each session, by the session's nonce (an
    /// ended one's too, until it would have expired).
    sessions: Mutex<Sessions>,
    /// Requests running here, by session nonce and id, for
    /// `notifications/cancelled`.
    running: Arc<RunningTable>,
}

/// Why a request's session cannot be served.
#[derive(Debug)]
enum Refusal {
    /// Unknown, expired or ended: 404.
    NotFound,
    /// The shared store cannot tell now: 503.
    Unavailable(String),
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
    /// The legacy side of an endpoint that keeps at most `max_sessions`
    /// of its own.
    pub(crate) fn new(
        dispatcher: &Dispatcher,
        share: Option<Arc<dyn SessionShare>>,
        max_sessions: usize,
    ) -> LegacyHttp {
        let tables = Arc::new(Tables {
            pending: Arc::default(),
            sessions: Mutex::new(Sessions::new(max_sessions)),
            running: Arc::default(),
        });
        if let Some(share) = &share {
            let tables = Arc::downgrade(&tables);
            share.receive(Box::new(move |nonce, message| {
                tables
                    .upgrade()
                    .map(|tables| tables.deliver(nonce, message))
                    .is_some()
            }));
        }
        LegacyHttp {
            offer: Arc::new(Offer::read(dispatcher)),
            tables,
            share,
        }
    }

    /// The session a request names, with its settings as every instance
    /// sees them.
    async fn session(
        &self,
        endpoint: &Endpoint,
        header: &str,
    ) -> Result<(SessionToken, Arc<Local>), Refusal> {
        let keys = endpoint.dispatcher().state_keys();
        let token = SessionToken::open(keys, header).ok_or(Refusal::NotFound)?;
        if locked(&self.tables.sessions).ended(&token.nonce) {
            return Err(Refusal::NotFound);
        }
        let local = self.tables.local(&token);
        if let Some(share) = &self.share {
            match share.load(&token.nonce).await {
                Ok(Some(live)) => *lock(&local.live) = live,
                Ok(None) => {
                    self.tables.end_here(&token.nonce, token.expires);
                    return Err(Refusal::NotFound);
                }
                Err(error) => return Err(Refusal::Unavailable(error.0)),
            }
        }
        Ok((token, local))
    }
}

impl Tables {
    /// Starts a session that `client` initialized, unless it holds its
    /// share of the table.
    fn start(&self, token: &SessionToken, client: Option<IpAddr>) -> bool {
        locked(&self.sessions).start(token, client, now_seconds())
    }

    /// This instance's part of a session, made on first use.
    fn local(&self, token: &SessionToken) -> Arc<Local> {
        locked(&self.sessions).local(token, now_seconds())
    }

    /// Ends a session in this instance: its streams close, and its id is
    /// refused from now on.
    fn end_here(&self, nonce: &str, expires: u64) {
        locked(&self.sessions).end(nonce, expires, now_seconds());
    }

    /// A message another instance forwarded for one of this instance's
    /// sessions.
    fn deliver(&self, nonce: &str, message: Forwarded) {
        match message {
            Forwarded::Answer { message } => {
                self.pending.resolve(nonce, &message);
            }
            Forwarded::Cancelled { id } => {
                self.cancel(nonce, id);
            }
            Forwarded::Ended => {
                // Only what this instance holds: the id carries the expiry,
                // and the shared store refuses it anyway.
                let mut sessions = locked(&self.sessions);
                if let Some(expires) = sessions.expires(nonce) {
                    sessions.end(nonce, expires, now_seconds());
                }
            }
        }
    }

    /// Stops a request of a session running here; `false` when none is.
    fn cancel(&self, nonce: &str, id: RequestId) -> bool {
        let key = (nonce.to_owned(), id);
        match locked(&self.running).get(&key) {
            Some(cancel) => {
                cancel.cancel();
                true
            }
            None => false,
        }
    }
}

impl Local {
    fn new(expires: u64) -> Local {
        Local {
            live: SharedLive::default(),
            closed: CancellationToken::new(),
            expires,
        }
    }
}

impl HttpHook for LegacyHttp {
    fn revisions(&self) -> &'static [&'static str] {
        crate::legacy::LEGACY_VERSIONS
    }

    /// A GET or DELETE that names a session.
    fn claims_other(&self, parts: &Parts) -> bool {
        parts.headers.contains_key(SESSION_ID)
    }

    fn other<'a>(
        &'a self,
        endpoint: &'a Arc<Endpoint>,
        parts: &'a Parts,
        peer: Option<SocketAddr>,
    ) -> ServingOther<'a> {
        Box::pin(streams::other_method(self, endpoint, parts, peer))
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
