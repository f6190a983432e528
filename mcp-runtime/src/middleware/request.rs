//! What a request layer sees: one request of the dispatcher, whatever its
//! method, and the result it is answered with.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use bytestring::ByteString;

use super::next::{Level, sealed};
use crate::protocol::jsonrpc::Unframed;
use crate::protocol::{ClientCapabilities, RequestId, RequestMeta};
use crate::source::RequestSource;
use crate::state::App;

/// The rest of the request's work, passed on at most once: the future the
/// innermost layer's service answers with, as it is (not boxed again).
pub(crate) type Rest = super::BoxFuture<Response>;

/// One request, as request layers see it: its method, id, params as
/// JSON, `_meta`, the caller and the server's states. A layer may answer
/// it with a JSON-RPC error ([`ErrorObject`](crate::ErrorObject) into the error), or pass it on
/// and see (or change) the result.
///
/// Every request whose envelope and `_meta` are valid reaches the request
/// layers: answers known at once (`server/discover`, list pages, a
/// method not found) as well as those a handler runs for. Not
/// `subscriptions/listen`, whose answer is a stream. A request is passed
/// on at most once: it is not `Clone`, so a retry layer does not apply
/// here (item layers can retry).
pub struct Request {
    pub(crate) method: Cow<'static, str>,
    pub(crate) id: RequestId,
    pub(crate) params: Params,
    /// `params.name` and `params.uri` as raw JSON, located when the
    /// envelope was read.
    pub(crate) name: Option<Bytes>,
    pub(crate) uri: Option<Bytes>,
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
        self.params.get()
    }

    /// `params.name` when it is a string: the tool of a `tools/call`, the
    /// prompt of a `prompts/get`. Read where the envelope was, so that a
    /// layer keyed by the name parses nothing again.
    pub fn name(&self) -> Option<Cow<'_, str>> {
        member(self.name.as_deref()?)
    }

    /// `params.uri` when it is a string: the resource of a
    /// `resources/read`.
    pub fn uri(&self) -> Option<Cow<'_, str>> {
        member(self.uri.as_deref()?)
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

/// A result's JSON: as the dispatcher wrote it (with room for its frame,
/// so that an answer no layer replaced is framed without a copy), or
/// given by a layer.
#[derive(Clone, Debug)]
pub(crate) enum Body {
    Shared(Bytes),
    Unframed(Unframed),
}

impl Response {
    /// The result as request observers see it.
    pub(crate) fn observed(&self) -> super::ResultRef<'_> {
        match &self.json {
            Body::Shared(json) => super::ResultRef::Shared(json),
            Body::Unframed(json) => super::ResultRef::Unframed(json),
        }
    }
}

impl Body {
    fn bytes(&self) -> &[u8] {
        match self {
            Body::Shared(json) => json,
            Body::Unframed(json) => json.json(),
        }
    }
}

/// A request's params: found in the message on first use, since most
/// layers never read them (finding them parses the whole message again).
pub(crate) struct Params {
    message: ByteString,
    range: OnceCell<Option<Range<usize>>>,
    locate: fn(&str) -> Option<Range<usize>>,
}

impl Params {
    /// The params of `message`, where `located` says or as `locate`
    /// finds them.
    pub(crate) fn new(
        (message, located): (ByteString, Option<Option<Range<usize>>>),
        locate: fn(&str) -> Option<Range<usize>>,
    ) -> Params {
        let range = located.map_or_else(OnceCell::new, OnceCell::from);
        Params {
            message,
            range,
            locate,
        }
    }

    fn get(&self) -> Option<&str> {
        let text: &str = &self.message;
        let range = self.range.get_or_init(|| (self.locate)(text)).clone()?;
        text.get(range)
    }
}

/// A member's raw JSON as a string, when it is one.
/// Whether a result's JSON says `isError: true`: read as a `Value` (rare:
/// a layer's own result), whose parser every binary has already, rather
/// than a struct of its own.
pub(super) fn shared_is_tool_error(json: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(json)
        .is_ok_and(|result| result.get("isError") == Some(&serde_json::Value::Bool(true)))
}

pub(super) fn member(raw: &[u8]) -> Option<Cow<'_, str>> {
    crate::protocol::jsonrpc::json_str(std::str::from_utf8(raw).ok()?)
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
    pub(crate) json: Body,
    /// Whether it is a tool's error result (`isError: true`), when the
    /// dispatcher knows it; `None`: read from the JSON when asked.
    pub(crate) tool_error: Option<bool>,
}

impl Response {
    /// A result of `json`, the text of a JSON object.
    pub fn from_json(json: impl Into<Bytes>) -> Response {
        Response {
            json: Body::Shared(json.into()),
            tool_error: None,
        }
    }

    /// The result's JSON text.
    pub fn json(&self) -> &str {
        std::str::from_utf8(self.json.bytes()).unwrap_or_default()
    }

    /// Whether it is a tool's error result (`isError: true`): the tool ran
    /// and reported a failure, as opposed to a JSON-RPC error. Known
    /// without parsing for a result the dispatcher wrote.
    pub fn is_tool_error(&self) -> bool {
        self.tool_error
            .unwrap_or_else(|| shared_is_tool_error(self.json.bytes()))
    }
}
