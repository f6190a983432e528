//! What a request layer sees: one request of the dispatcher, whatever its
//! method, and the result it is answered with.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use bytestring::ByteString;

use serde_json::value::RawValue;

use super::Extensions;
use super::next::{Level, sealed};
use crate::protocol::jsonrpc::Unframed;
use crate::protocol::{ClientCapabilities, RequestId, RequestMeta};
use crate::source::RequestSource;
use crate::state::App;

/// The rest of the request's work, passed on at most once: made from the
/// request as the layers leave it (its params, `_meta` and extensions),
/// into the future the innermost layer's service answers with, as it is
/// (not boxed again).
pub(crate) type Rest = Box<dyn FnOnce(Request) -> super::BoxFuture<Response>>;

/// One request, as request layers see it: its method, id, params as
/// JSON, `_meta`, the caller and the server's states. A layer may answer
/// it early, with a result or a JSON-RPC error
/// ([`ErrorObject`](crate::ErrorObject) into the error), or pass it on
/// and see (or change) the result. Before it passes the request on, it may
/// change its params ([`set_params`](Request::set_params)) and `_meta`
/// ([`meta_mut`](Request::meta_mut)), and attach typed values
/// ([`extensions_mut`](Request::extensions_mut)) that the handler reads as
/// `#[ctx]` [`Extension<T>`](super::Extension): the caller's tenant,
/// resolved from a header or a token claim.
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
    pub(crate) extensions: Extensions,
    /// Whether a layer changed the params or `_meta`.
    pub(crate) changed: bool,
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

    /// The method, to keep beyond the request (a span's, a metric's):
    /// borrowed from static text for every method the runtime knows, so
    /// keeping it copies nothing; owned for another (an extension's).
    pub fn method_to_keep(&self) -> Cow<'static, str> {
        self.method.clone()
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

    /// The typed values attached to this request.
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// The typed values attached to this request, to attach one: the
    /// handler reads it as a `#[ctx]` [`Extension<T>`](super::Extension)
    /// (or with [`Context::extension`](crate::Context::extension)).
    pub fn extensions_mut(&mut self) -> &mut Extensions {
        &mut self.extensions
    }

    /// The request's `_meta`, to change what the handler sees of it (its
    /// [`Context::meta`](crate::Context::meta), the client's capabilities
    /// and name). The version the request was checked against, and the
    /// answers known before any handler runs (`server/discover`, list
    /// pages), follow the `_meta` the client sent.
    pub fn meta_mut(&mut self) -> &mut RequestMeta {
        self.changed = true;
        Arc::make_mut(&mut self.meta)
    }

    /// Replaces the params: the handler (and the layers inside this one)
    /// see `params` instead of what the client sent. `_meta` is not read
    /// from them: change it with [`meta_mut`](Request::meta_mut).
    ///
    /// # Errors
    /// When `params` does not serialize to a JSON object.
    pub fn set_params(&mut self, params: &impl serde::Serialize) -> serde_json::Result<()> {
        let params = serde_json::to_string(params)?;
        if !params.starts_with('{') {
            return Err(serde::de::Error::custom("params must be a JSON object"));
        }
        let members: Members<'_> = serde_json::from_str(&params)?;
        let raw =
            |member: Option<&RawValue>| member.map(|m| Bytes::copy_from_slice(m.get().as_bytes()));
        let (name, uri) = (raw(members.name), raw(members.uri));
        let id = serde_json::to_string(&self.id)?;
        let method = serde_json::to_string(&*self.method)?;
        let head = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":{method},"params":"#);
        let range = head.len()..head.len() + params.len();
        let message = ByteString::from(head + &params + "}");
        self.params = Params::new((message, Some(Some(range))), self.params.locate);
        (self.name, self.uri, self.changed) = (name, uri, true);
        Ok(())
    }

    /// The whole message as the layers left it, when they changed its
    /// params or `_meta`: what the handler is then run from.
    pub(crate) fn changed_message(&self) -> Option<ByteString> {
        self.changed.then(|| self.params.message.clone())
    }
}

/// The members of new params that layers and handlers read by name.
#[derive(serde::Deserialize)]
struct Members<'a> {
    #[serde(borrow, default)]
    name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    uri: Option<&'a RawValue>,
}

/// A result's JSON: as the dispatcher wrote it (with room for its frame,
/// so that an answer no layer replaced is framed without a copy), or
/// given by a layer.
#[derive(Clone, Debug)]
pub(crate) enum Body {
    Shared(Bytes),
    Unframed(Unframed),
    /// A task's handle (`CreateTaskResult`), carried until the answer is
    /// framed (see `ResultJson::Task`).
    Task(Bytes, super::TaskHandle),
}

impl Response {
    /// The result as request observers see it.
    pub(crate) fn observed(&self) -> super::ResultRef<'_> {
        match &self.json {
            Body::Shared(json) | Body::Task(json, _) => super::ResultRef::Shared(json),
            Body::Unframed(json) => super::ResultRef::Unframed(json),
        }
    }
}

impl Body {
    fn bytes(&self) -> &[u8] {
        match self {
            Body::Shared(json) | Body::Task(json, _) => json,
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
