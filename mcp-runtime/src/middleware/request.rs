//! What a request layer sees: one request of the dispatcher, whatever its
//! method, and the result it is answered with.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;

use super::next::{Level, sealed};
use crate::protocol::{ClientCapabilities, ErrorObject, RequestId, RequestMeta};
use crate::source::RequestSource;
use crate::state::App;

/// The rest of the request's work, passed on at most once.
pub(crate) type Rest = Pin<Box<dyn Future<Output = Result<Response, ErrorObject>>>>;

/// One request, as request layers see it: its method, id, params as
/// JSON, `_meta`, the caller and the server's states. A layer may answer
/// it with a JSON-RPC error ([`ErrorObject`] into the error), or pass it on
/// and see (or change) the result.
///
/// Every request whose envelope and `_meta` are valid reaches the request
/// layers: answers known at once (`server/discover`, list pages, a
/// method not found) as well as those a handler runs for. Not
/// `subscriptions/listen`, whose answer is a stream. A request is passed
/// on at most once: it is not `Clone`, so a retry layer does not apply
/// here (item layers can retry).
pub struct Request {
    pub(crate) method: Box<str>,
    pub(crate) id: RequestId,
    pub(crate) params: Option<Bytes>,
    pub(crate) meta: Arc<RequestMeta>,
    pub(crate) source: RequestSource,
    pub(crate) app: App,
    pub(crate) rest: Option<Rest>,
}

impl sealed::Sealed for Request {}

impl Level for Request {
    type Response = Response;
}

impl Request {
    /// The method, e.g. `tools/call`.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The request's id.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// The params as JSON text, `_meta` included; `None` when absent.
    pub fn params(&self) -> Option<&str> {
        let params = self.params.as_deref()?;
        // Cut from the request's text, which is UTF-8.
        std::str::from_utf8(params).ok()
    }

    /// The params parsed into `T`.
    ///
    /// # Errors
    /// When they are absent or do not fit `T`.
    pub fn params_as<T: serde::de::DeserializeOwned>(&self) -> serde_json::Result<T> {
        serde_json::from_str(self.params().unwrap_or("null"))
    }

    /// The request's `_meta`: the protocol version, the client's name and
    /// capabilities, trace context.
    pub fn meta(&self) -> &RequestMeta {
        &self.meta
    }

    /// What the client declared it supports, extensions included.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.meta.client_capabilities
    }

    /// Where the request came from: the transport and the caller
    /// ([`RequestSource::principal`]).
    pub fn source(&self) -> &RequestSource {
        &self.source
    }

    /// The server's state of type `T`, if it was given one.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.app.states().get()
    }
}

impl fmt::Debug for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Request")
            .field("method", &self.method)
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// A request's result, as JSON text (the `result` member of the answer).
#[derive(Clone, Debug)]
pub struct Response {
    pub(crate) json: Bytes,
}

impl Response {
    /// A result of `json`, the text of a JSON object.
    pub fn from_json(json: impl Into<Bytes>) -> Response {
        Response { json: json.into() }
    }

    /// The result's JSON text.
    pub fn json(&self) -> &str {
        std::str::from_utf8(&self.json).unwrap_or_default()
    }
}
