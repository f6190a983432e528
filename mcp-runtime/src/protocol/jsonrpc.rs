//! The JSON-RPC 2.0 envelope as MCP constrains it: ids, error objects and
//! the byte-level framing of responses and notifications.

use std::borrow::Cow;
use std::fmt;
use std::io::Write as _;
use std::sync::Arc;

use bytes::Buf as _;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

/// JSON-RPC and MCP error codes, each used only with its specified meaning.
pub mod error_code {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i32 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i32 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i32 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i32 = -32602;
    /// Internal error.
    pub const INTERNAL_ERROR: i32 = -32603;
    /// HTTP headers disagree with the request body (Streamable HTTP only).
    pub const HEADER_MISMATCH: i32 = -32020;
    /// The request needs a client capability the client did not declare.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i32 = -32021;
    /// The requested protocol version is not supported.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;

    /// This runtime's own code (outside the JSON-RPC reserved range, as the
    /// spec asks): the caller exceeded the rate limit (HTTP 429).
    pub const RATE_LIMITED: i32 = -31_000;
    /// This runtime's own code: too many requests in flight (HTTP 503).
    pub const SERVER_BUSY: i32 = -31_001;
    /// This runtime's own code: the request ran past its time limit.
    pub const REQUEST_TIMEOUT: i32 = -31_002;
    /// This runtime's own code: the caller lacks a scope the request needs
    /// (HTTP 403), found by the built-in scope layer.
    pub const FORBIDDEN: i32 = -31_003;
}

/// A JSON-RPC request id: a string or an integer, never `null`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(Arc<str>),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.into())
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => serializer.serialize_i64(*n),
            RequestId::String(s) => serializer.serialize_str(s),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl Visitor<'_> for IdVisitor {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RequestId, E> {
                Ok(RequestId::Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RequestId, E> {
                i64::try_from(v)
                    .map(RequestId::Number)
                    .map_err(|_| E::custom("integer id out of range"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RequestId, E> {
                Ok(RequestId::String(v.into()))
            }
        }
        deserializer.deserialize_any(IdVisitor)
    }
}

/// A JSON-RPC error object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code; see [`error_code`].
    pub code: i32,
    /// A short, single-sentence description.
    pub message: Cow<'static, str>,
    /// Structured detail, when the code defines some.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with a code and message and no data.
    pub fn new(code: i32, message: impl Into<Cow<'static, str>>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attaches `data`.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32700`: the bytes were not JSON.
    pub fn parse_error(detail: impl fmt::Display) -> Self {
        Self::new(error_code::PARSE_ERROR, format!("Parse error: {detail}"))
    }

    /// `-32600`: JSON, but not a valid JSON-RPC request.
    pub fn invalid_request(detail: impl fmt::Display) -> Self {
        Self::new(
            error_code::INVALID_REQUEST,
            format!("Invalid request: {detail}"),
        )
    }

    /// `-32601`: the method is unknown or not offered by this server.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            error_code::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// `-32601` for a method of a capability this server does not
    /// advertise (the spec's `MethodNotFoundError`: "calling `prompts/list`
    /// when the `prompts` capability was not advertised"), saying which.
    pub(crate) fn capability_not_offered(method: &str, capability: &str) -> Self {
        Self::method_not_found(method).with_data(serde_json::json!({
            "reason": format!("the server does not advertise the `{capability}` capability")
        }))
    }

    /// `-32602`: the parameters are invalid.
    pub fn invalid_params(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(error_code::INVALID_PARAMS, message)
    }

    /// `-32602` for a `tools/call` or `prompts/get` naming no item this
    /// server serves (`kind` is `tool` or `prompt`).
    pub(crate) fn unknown_item(kind: &str, name: &str) -> Self {
        Self::invalid_params(format!("Unknown {kind}: {name}"))
    }

    /// Whether this is the `-32602` of a `tools/call` or `prompts/get`
    /// that names no tool or prompt this server has. A metrics layer keeps
    /// the caller's name out of its labels then (as the OpenTelemetry
    /// layer does): every name a client makes up would be a series of its
    /// own.
    pub fn names_unknown_item(&self) -> bool {
        self.code == error_code::INVALID_PARAMS
            && ["Unknown tool: ", "Unknown prompt: "]
                .iter()
                .any(|prefix| self.message.starts_with(prefix))
    }

    /// `-32603`: something failed inside the server.
    pub fn internal_error() -> Self {
        Self::new(error_code::INTERNAL_ERROR, "Internal error")
    }

    /// `-32020`: an HTTP header disagrees with the body.
    pub fn header_mismatch(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(error_code::HEADER_MISMATCH, message)
    }

    /// `-32021`: the request needs client capabilities that were not declared.
    pub fn missing_capability(required: Value) -> Self {
        Self::new(
            error_code::MISSING_REQUIRED_CLIENT_CAPABILITY,
            "Missing required client capability",
        )
        .with_data(serde_json::json!({ "requiredCapabilities": required }))
    }

    /// `-32022`: the requested protocol version is not supported.
    pub fn unsupported_version(requested: &str, supported: &[&str]) -> Self {
        Self::new(
            error_code::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
        )
        .with_data(serde_json::json!({ "supported": supported, "requested": requested }))
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for ErrorObject {}

/// Appends the JSON text of `value` to `out`.
fn push_json<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Serializing our own wire types into a Vec cannot fail: they contain no
    // maps with non-string keys and no fallible `Serialize` impls.
    serde_json::to_writer(&mut *out, value).expect("wire types always serialize");
}

/// `{"jsonrpc":"2.0","id":ID,"result":RESULT}` where `result` is already JSON.
pub(crate) fn result_frame(id: &RequestId, result: &[u8]) -> Vec<u8> {
    let mut out = result_head(id, result.len() + 1);
    out.extend_from_slice(result);
    out.extend_from_slice(RESULT_END);
    out
}

/// A result frame up to its result, `{"jsonrpc":"2.0","id":ID,"result":`,
/// with room for `more` bytes: a frame is this, the result's JSON, and
/// [`RESULT_END`].
pub(crate) fn result_head(id: &RequestId, more: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(more + 48);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    push_json(&mut out, id);
    out.extend_from_slice(br#","result":"#);
    out
}

/// What closes a result frame after its result.
pub(crate) const RESULT_END: &[u8] = b"}";

/// Room kept before a result's JSON for its frame's head
/// (`{"jsonrpc":"2.0","id":` and `,"result":` are 32 bytes; the rest is
/// for the id).
const HEAD_ROOM: usize = 64;

/// A result's JSON written after room for its frame's head, so that
/// framing it with the request's id copies nothing: the head goes into
/// the room, and the frame is the same allocation.
#[derive(Clone, Debug)]
pub(crate) struct Unframed {
    out: Vec<u8>,
    /// A tool's result with `isError` set: request layers read it without
    /// parsing the result again.
    tool_error: bool,
}

impl Unframed {
    /// Room for `json` bytes of result (more may be written).
    pub(crate) fn with_capacity(json: usize) -> Unframed {
        let mut out = Vec::with_capacity(HEAD_ROOM + json + RESULT_END.len());
        out.resize(HEAD_ROOM, 0);
        Unframed {
            out,
            tool_error: false,
        }
    }

    /// Marks the result as a tool's error result (`isError: true`).
    pub(crate) fn set_tool_error(&mut self, tool_error: bool) {
        self.tool_error = tool_error;
    }

    /// Whether it is a tool's error result.
    pub(crate) fn is_tool_error(&self) -> bool {
        self.tool_error
    }

    /// Where the result's JSON is written.
    pub(crate) fn json_mut(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    /// The result's JSON.
    pub(crate) fn json(&self) -> &[u8] {
        &self.out[HEAD_ROOM..]
    }

    /// `{"jsonrpc":"2.0","id":ID,"result":RESULT}`; an id too long for the
    /// room (a long string) is framed by copying.
    pub(crate) fn frame(mut self, id: &RequestId) -> bytes::Bytes {
        let mut head = [0u8; HEAD_ROOM];
        let written = {
            let mut room = &mut head[..];
            room.write_all(br#"{"jsonrpc":"2.0","id":"#)
                .ok()
                .and_then(|()| serde_json::to_writer(&mut room, id).ok())
                .and_then(|()| room.write_all(br#","result":"#).ok())
                .map(|()| HEAD_ROOM - room.len())
        };
        let Some(length) = written else {
            return bytes::Bytes::from(result_frame(id, self.json()));
        };
        let start = HEAD_ROOM - length;
        self.out[start..HEAD_ROOM].copy_from_slice(&head[..length]);
        self.out.extend_from_slice(RESULT_END);
        let mut frame = bytes::Bytes::from(self.out);
        frame.advance(start);
        frame
    }
}

/// `{"jsonrpc":"2.0","id":ID,"error":{...}}`, without `id` when the
/// request's id could not be read: MCP's schema allows only a string or an
/// integer there, never `null`.
pub(crate) fn error_frame(id: Option<&RequestId>, error: &ErrorObject) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","#);
    if let Some(id) = id {
        out.extend_from_slice(br#""id":"#);
        push_json(&mut out, id);
        out.push(b',');
    }
    out.extend_from_slice(br#""error":"#);
    push_json(&mut out, error);
    out.push(b'}');
    out
}

/// `{"jsonrpc":"2.0","method":METHOD,"params":PARAMS}`.
pub(crate) fn notification_frame<P: Serialize + ?Sized>(method: &str, params: &P) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","method":"#);
    push_json(&mut out, method);
    out.extend_from_slice(br#","params":"#);
    push_json(&mut out, params);
    out.push(b'}');
    out
}

/// A JSON string's value, borrowed unless it has escapes (serde's `Cow`
/// always allocates outside a `#[serde(borrow)]` field). `raw` is one JSON
/// value as the envelope located it: a string without escapes or control
/// characters is its own text between the quotes, which is what tool
/// names, URIs and states are (read for every request, by several stages).
pub(crate) fn json_str(raw: &str) -> Option<Cow<'_, str>> {
    // Without an early exit the check vectorizes: a `requestState` is
    // hundreds of bytes.
    let plain = |inner: &str| {
        !inner.bytes().fold(false, |odd, b| {
            odd | (b == b'"') | (b == b'\\') | (b < 0x20)
        })
    };
    if let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"'))
        && plain(inner)
    {
        return Some(Cow::Borrowed(inner));
    }
    serde_json::from_str::<&str>(raw)
        .map(Cow::Borrowed)
        .or_else(|_| serde_json::from_str::<String>(raw).map(Cow::Owned))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unframed_result_frames_in_place_as_result_frame_does() {
        let result = br#"{"resultType":"complete","content":[]}"#;
        let long = "x".repeat(40);
        let ids = [
            RequestId::Number(7),
            RequestId::Number(i64::MIN),
            RequestId::from("a\"b"),
            // Too long for the room: framed by copying, the same bytes.
            RequestId::from(long.as_str()),
        ];
        for id in ids {
            let mut unframed = Unframed::with_capacity(8);
            unframed.json_mut().extend_from_slice(result);
            assert_eq!(unframed.json(), result);
            assert_eq!(
                &unframed.frame(&id)[..],
                &result_frame(&id, result)[..],
                "{id:?}"
            );
        }
    }

    #[test]
    fn frames_are_exact_json() {
        let id = RequestId::from("a\"b");
        let frame = result_frame(&id, br#"{"resultType":"complete"}"#);
        assert_eq!(
            std::str::from_utf8(&frame).unwrap(),
            r#"{"jsonrpc":"2.0","id":"a\"b","result":{"resultType":"complete"}}"#
        );
        let frame = error_frame(None, &ErrorObject::method_not_found("x/y"));
        assert_eq!(
            std::str::from_utf8(&frame).unwrap(),
            r#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found: x/y"}}"#
        );
    }

    #[test]
    fn ids_reject_floats_and_null() {
        assert_eq!(
            serde_json::from_str::<RequestId>("7").unwrap(),
            RequestId::Number(7)
        );
        assert!(serde_json::from_str::<RequestId>("1.5").is_err());
        assert!(serde_json::from_str::<RequestId>("null").is_err());
        assert!(serde_json::from_str::<RequestId>("true").is_err());
        assert!(serde_json::from_str::<RequestId>("18446744073709551615").is_err());
    }
}
