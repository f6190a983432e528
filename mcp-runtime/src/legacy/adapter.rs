//! One legacy request, answered: the lifecycle methods here, everything
//! else as modern requests through the dispatcher, with multi round-trip
//! asks bridged to real server-to-client requests.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::bridge::Peer;
use super::session::{Negotiated, SharedLive, lock};
use super::translate::{self, Answer};
use crate::dispatch::envelope::{self, Incoming};
use crate::dispatch::{Dispatched, Dispatcher, Reply, Unconditional};
use crate::protocol::method::{Method, MethodName};
use crate::protocol::{ErrorObject, LogLevel, RequestId};
use crate::source::RequestSource;

/// The most rounds of asks one legacy request may go through; the modern
/// state sealer has its own (usually lower) limit.
const MAX_ROUNDS: usize = 32;

/// What the server offers, read once from its own `server/discover`.
#[derive(Debug, Clone)]
pub(crate) struct Offer {
    /// The modern capabilities, which are also the legacy ones (plus
    /// `logging`, which the adapter always serves).
    pub(crate) capabilities: Map<String, Value>,
    pub(crate) instructions: Option<String>,
    pub(crate) server_info: Value,
}

impl Offer {
    /// What `dispatcher` offers, from its own `server/discover` result.
    pub(crate) fn read(dispatcher: &Dispatcher) -> Offer {
        let result: Value =
            serde_json::from_slice(dispatcher.discover_result()).unwrap_or_default();
        let mut capabilities = match result.get("capabilities") {
            Some(Value::Object(capabilities)) => capabilities.clone(),
            _ => Map::new(),
        };
        capabilities.insert("logging".into(), json!({}));
        // Not offered to handshake-era clients (see `modern_capabilities`).
        if let Some(Value::Object(extensions)) = capabilities.get_mut("extensions") {
            extensions.remove(crate::tasks::EXTENSION_ID);
            if extensions.is_empty() {
                capabilities.remove("extensions");
            }
        }
        Offer {
            capabilities,
            instructions: result
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_owned),
            server_info: serde_json::to_value(dispatcher.info()).unwrap_or_default(),
        }
    }

    fn offers_subscriptions(&self) -> bool {
        self.capabilities
            .get("resources")
            .and_then(|r| r.get("subscribe"))
            == Some(&Value::Bool(true))
    }

    /// The `initialize` result for a negotiated session.
    pub(crate) fn initialize_result(&self, negotiated: &Negotiated) -> Value {
        let mut result = json!({
            "protocolVersion": negotiated.version,
            "capabilities": self.capabilities,
            "serverInfo": self.server_info,
        });
        if let Some(instructions) = &self.instructions {
            result["instructions"] = json!(instructions);
        }
        result
    }
}

/// Everything one legacy request is answered with.
pub(crate) struct Call<'a> {
    pub(crate) dispatcher: &'a Arc<Dispatcher>,
    pub(crate) offer: &'a Offer,
    pub(crate) negotiated: &'a Negotiated,
    pub(crate) live: &'a SharedLive,
    pub(crate) peer: Peer<'a>,
    pub(crate) shutdown: &'a CancellationToken,
    /// Where the request came from: every modern request it becomes
    /// carries it.
    pub(crate) source: RequestSource,
}

impl Call<'_> {
    /// Answers a legacy request (never `initialize`: the transports answer
    /// that, since what it creates is theirs to keep).
    pub(crate) async fn answer(
        &self,
        id: &RequestId,
        method: &str,
        params: Option<Value>,
    ) -> Reply {
        let outcome = match method {
            "ping" => Ok(json!({})),
            "logging/setLevel" => self.set_level(params),
            "resources/subscribe" | "resources/unsubscribe" => self.subscribe(method, params),
            "initialize" => Err(ErrorObject::invalid_request(
                "this connection is already initialized",
            )),
            method if self.proxies(method) => {
                return self.proxy(id, method, params).await;
            }
            other => Err(ErrorObject::method_not_found(other)),
        };
        match outcome {
            Ok(result) => Reply::result(id, result.to_string().as_bytes()),
            Err(error) => Reply::error(Some(id), &error),
        }
    }

    /// Whether the dispatcher answers `method` for legacy clients too:
    /// the core's methods but the modern lifecycle, and every extension's
    /// but the Tasks extension's: its `tasks/*` names are the 2025-11-25
    /// tasks feature's with other shapes, and this server's task tools run
    /// synchronously for these clients.
    fn proxies(&self, method: &str) -> bool {
        match MethodName::parse(method) {
            MethodName::Known(Method::Discover | Method::SubscriptionsListen) => false,
            MethodName::Unknown(name) if name.starts_with("tasks/") => false,
            MethodName::Known(_) => true,
            unknown => self.dispatcher.serves(&unknown),
        }
    }

    fn set_level(&self, params: Option<Value>) -> Result<Value, ErrorObject> {
        let level = params
            .as_ref()
            .and_then(|p| p.get("level"))
            .and_then(|l| serde_json::from_value::<LogLevel>(l.clone()).ok())
            .ok_or_else(|| {
                ErrorObject::invalid_params(
                    "Invalid params: `level` must be one of debug, info, notice, warning, error, critical, alert, emergency",
                )
            })?;
        lock(self.live).log_level = Some(level);
        Ok(json!({}))
    }

    fn subscribe(&self, method: &str, params: Option<Value>) -> Result<Value, ErrorObject> {
        if !self.offer.offers_subscriptions() {
            return Err(ErrorObject::method_not_found(method));
        }
        let uri = params
            .as_ref()
            .and_then(|p| p.get("uri"))
            .and_then(Value::as_str)
            .ok_or_else(|| ErrorObject::invalid_params("Invalid params: `uri` must be a string"))?;
        let mut live = lock(self.live);
        if method == "resources/subscribe" {
            live.subscriptions.insert(uri.to_owned());
        } else {
            live.subscriptions.remove(uri);
        }
        Ok(json!({}))
    }

    /// Runs a request through the dispatcher, answering the asks of every
    /// `input_required` round with real requests to the client.
    async fn proxy(&self, id: &RequestId, method: &str, params: Option<Value>) -> Reply {
        let mut params = match params {
            None => Map::new(),
            Some(Value::Object(params)) => params,
            Some(_) => {
                return Reply::error(
                    Some(id),
                    &ErrorObject::invalid_params("Invalid params: `params` must be an object"),
                );
            }
        };
        for _ in 0..MAX_ROUNDS {
            let frame = self.run_modern(id, method, &params).await;
            let (requests, state) = match translate::answer(method, &frame.frame) {
                Answer::Complete(result) => {
                    return Reply::result(id, Value::Object(result).to_string().as_bytes());
                }
                Answer::Error(error) => return Reply::error(Some(id), &error),
                Answer::InputRequired { requests, state } => (requests, state),
            };
            let responses = match self.ask(requests).await {
                Ok(responses) => responses,
                Err(error) => return Reply::error(Some(id), &error),
            };
            params.insert("inputResponses".into(), Value::Object(responses));
            match state {
                Some(state) => params.insert("requestState".into(), state),
                None => params.remove("requestState"),
            };
        }
        Reply::error(
            Some(id),
            &ErrorObject::internal_error().with_data(json!({"reason": "too many rounds of input"})),
        )
    }

    /// Sends each ask to the client, one after the other (a user answers
    /// one question at a time), and collects the answers by key.
    async fn ask(&self, requests: Map<String, Value>) -> Result<Map<String, Value>, ErrorObject> {
        let mut responses = Map::new();
        for (key, ask) in requests {
            let (method, params) = translate::ask_to_request(&ask, &self.negotiated.version)
                .ok_or_else(ErrorObject::internal_error)?;
            let answer = self.peer.request(&method, params).await?;
            responses.insert(key, answer);
        }
        Ok(responses)
    }

    /// One modern request, with `_meta` from the session, through the
    /// dispatcher like any other.
    async fn run_modern(&self, id: &RequestId, method: &str, params: &Map<String, Value>) -> Reply {
        let mut params = params.clone();
        let level = lock(self.live).log_level;
        self.negotiated.fill_meta(&mut params, level);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let request = match envelope::parse(body.to_string()) {
            Ok(Incoming::Request(request)) => request,
            Ok(Incoming::Notification(_)) => {
                return Reply::error(Some(id), &ErrorObject::internal_error());
            }
            Err(rejection) => return Reply::from(rejection),
        };
        // Handler notifications (log messages, progress) have the same
        // shape in both eras: they go to the client as they are (stdout, or
        // the request's stream).
        let mut admission = Unconditional(&self.peer.outbox, None);
        let revision = super::negotiate(&self.negotiated.version);
        let source = self.source.clone().with_negotiated_revision(revision);
        match self
            .dispatcher
            .dispatch(request, source, self.shutdown, &mut admission)
        {
            Dispatched::Answered(answer) => answer.into_reply(),
            Dispatched::Refused(never) => match never {},
            Dispatched::Running { future, .. } => future.await,
            Dispatched::Layered { future, .. } => future.await,
        }
    }
}
