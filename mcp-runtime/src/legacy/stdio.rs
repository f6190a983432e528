//! The legacy era on stdio: an `initialize` switches the connection (this
//! process's stdin/stdout) to legacy; requests without modern `_meta` are
//! then served through the adapter, and the client's responses to
//! server-to-client requests are routed back.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::adapter::{Call, Offer};
use super::bridge::{ANSWER_TIMEOUT, Peer, Pending};
use super::notify;
use super::session::{Negotiated, SharedLive};
use crate::context::Outbox;
use crate::dispatch::envelope::{MetaMember, Request};
use crate::dispatch::{Dispatcher, Reply};
use crate::protocol::ErrorObject;
use crate::source::{RequestSource, TransportKind};
use crate::transport::stdio::{Frames, Started, StdioHook};

/// One stdio connection's legacy state: nothing until `initialize`.
pub(crate) struct Connection {
    dispatcher: Arc<Dispatcher>,
    offer: Offer,
    frames: Frames,
    session: RefCell<Option<Rc<Session>>>,
    pending: Rc<Pending>,
}

struct Session {
    negotiated: Negotiated,
    live: SharedLive,
}

impl Connection {
    pub(crate) fn new(dispatcher: &Arc<Dispatcher>, frames: &Frames) -> Connection {
        Connection {
            offer: Offer::read(dispatcher),
            dispatcher: dispatcher.clone(),
            frames: frames.clone(),
            session: RefCell::new(None),
            pending: Rc::default(),
        }
    }
}

impl StdioHook for Connection {
    /// Takes a line that is a response to one of our requests. Only a
    /// legacy connection has asked anything, so a modern one pays nothing.
    fn take_response(&self, line: &str) -> bool {
        if self.session.borrow().is_none() {
            return false;
        }
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            return false;
        };
        let is_response = message.get("method").is_none()
            && (message.get("result").is_some() || message.get("error").is_some());
        if is_response && !self.pending.resolve("", &message) {
            tracing::debug!("a response to no request in flight (late, or unknown id)");
        }
        is_response
    }

    /// Whether the adapter serves `request`: an `initialize` without modern
    /// `_meta`, or, once initialized, any request without modern `_meta`.
    fn claims(&self, request: &Request) -> bool {
        // A modern connection that is not being initialized pays for no
        // parsing: most of them never see this adapter.
        if request.method.as_str() != "initialize" && self.session.borrow().is_none() {
            return false;
        }
        let modern = match &request.head().meta {
            // Read with the envelope only when it names its version.
            Some(MetaMember::Read(_)) => true,
            Some(MetaMember::Raw(range)) => {
                super::is_modern_meta(Some(&request.text()[range.clone()]))
            }
            None => false,
        };
        !modern
    }

    /// Answers `initialize` at once (what follows depends on it), or hands
    /// back the future that answers any other claimed request.
    fn revision(&self) -> Option<&'static str> {
        let session = self.session.borrow();
        Some(super::negotiate(&session.as_ref()?.negotiated.version))
    }

    fn start(self: Rc<Self>, request: Request, end_of_input: &CancellationToken) -> Started {
        if request.method.as_str() == "initialize" && self.session.borrow().is_none() {
            return Started::Answered(self.initialize(&request, end_of_input));
        }
        let end_of_input = end_of_input.clone();
        // Boxed: the transport keeps it in its task set.
        Started::Running(Box::pin(
            async move { self.answer(request, end_of_input).await },
        ))
    }
}

impl Connection {
    fn initialize(&self, request: &Request, end_of_input: &CancellationToken) -> Reply {
        let params = request
            .params()
            .and_then(|p| serde_json::from_str::<Value>(p).ok());
        let negotiated = match Negotiated::from_initialize(params.as_ref()) {
            Ok(negotiated) => negotiated,
            Err(error) => return Reply::error(Some(&request.id), &error),
        };
        let result = self.offer.initialize_result(&negotiated);
        tracing::info!(version = %negotiated.version, "stdio connection switched to the legacy era");
        let session = Rc::new(Session {
            negotiated,
            live: SharedLive::default(),
        });
        *self.session.borrow_mut() = Some(session.clone());
        let frames = self.frames.clone();
        tokio::task::spawn_local(notify::forward(
            self.dispatcher.changes().subscribe(),
            self.offer.clone(),
            session.live.clone(),
            move |frame| frames.send(frame).is_ok(),
            end_of_input.clone(),
        ));
        Reply::result(&request.id, result.to_string().as_bytes())
    }

    async fn answer(self: Rc<Self>, request: Request, end_of_input: CancellationToken) -> Reply {
        let Some(session) = self.session.borrow().clone() else {
            return Reply::error(Some(&request.id), &ErrorObject::internal_error());
        };
        let params = match request.params().map(serde_json::from_str::<Value>) {
            None => None,
            Some(Ok(params)) => Some(params),
            Some(Err(_)) => {
                return Reply::error(
                    Some(&request.id),
                    &ErrorObject::invalid_params("Invalid params"),
                );
            }
        };
        let call = Call {
            dispatcher: &self.dispatcher,
            offer: &self.offer,
            negotiated: &session.negotiated,
            live: &session.live,
            peer: Peer {
                outbox: Outbox::new(Arc::new(self.frames.clone())),
                pending: &self.pending,
                session: "",
                can_ask: true,
                timeout: ANSWER_TIMEOUT,
                stop: end_of_input.clone(),
            },
            shutdown: &end_of_input,
            source: RequestSource::new(TransportKind::Stdio),
        };
        call.answer(&request.id, request.method.as_str(), params)
            .await
    }
}
