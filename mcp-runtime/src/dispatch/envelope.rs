//! Turning one message's bytes into a request or notification, or into the
//! JSON-RPC error that says why it is neither.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::ops::Range;

use bytestring::ByteString;
use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer};
use serde_json::error::Category;
use serde_json::value::RawValue;

pub(crate) use super::head::{Head, MetaMember, Notification};
use super::head::{Members, notification, offset_in};
use super::meta::ReadMeta;
use crate::protocol::method::MethodName;
use crate::protocol::{ErrorObject, RequestId};

/// A JSON-RPC request, owning its body; `params` and its members are
/// ranges into it so that nothing is copied.
#[derive(Debug)]
pub(crate) struct Request {
    pub(crate) id: RequestId,
    pub(crate) method: MethodName,
    /// The message as received: shared with the transport's buffer, not
    /// copied out of it.
    body: ByteString,
    /// Where `params` is. The one-pass parse locates only its members, so
    /// this is found on first use (most methods never need the whole text).
    params: OnceCell<Option<Range<usize>>>,
    /// The members of `params` several stages read.
    head: OnceCell<Head>,
}

impl Request {
    /// The JSON text of `params`, if present.
    pub(crate) fn params(&self) -> Option<&str> {
        self.params_range().map(|range| &self.body[range])
    }

    fn params_range(&self) -> Option<Range<usize>> {
        self.params
            .get_or_init(|| locate_params(&self.body))
            .clone()
    }

    /// The whole message and, when it is already known, where its
    /// `params` are: for a view that finds them on first use.
    pub(crate) fn message(&self) -> (ByteString, Option<Option<Range<usize>>>) {
        (self.body.clone(), self.params.get().cloned())
    }

    /// The members of `params` that `_meta` checks, header checks and
    /// handlers all need: located with the envelope when it parsed in one
    /// pass, else in one pass over `params` on first use.
    pub(crate) fn head(&self) -> &Head {
        self.head
            .get_or_init(|| Head::read(&self.body, self.params_range()))
    }

    /// The JSON text of one member the head located.
    pub(crate) fn member(&self, range: &Option<Range<usize>>) -> Option<&str> {
        range.clone().map(|range| &self.body[range])
    }

    /// The raw JSON of one member the head located, shared with the
    /// message's buffer.
    pub(crate) fn member_bytes(&self, range: &Option<Range<usize>>) -> Option<bytes::Bytes> {
        range.clone().map(|range| self.body.as_bytes().slice(range))
    }

    /// The message as received.
    pub(crate) fn text(&self) -> &str {
        &self.body
    }

    /// Moves `_meta` out of the head (it is read once, when the request is
    /// prepared; the head has no `_meta` afterwards).
    pub(crate) fn take_meta(&mut self) -> Option<MetaMember> {
        self.head();
        self.head.get_mut().and_then(|head| head.meta.take())
    }
}

pub(crate) use crate::protocol::jsonrpc::json_str;

#[derive(Debug)]
pub(crate) enum Incoming {
    Request(Request),
    Notification(Notification),
}

/// A message that could not be accepted, with the id to answer (when it
/// could be read).
#[derive(Debug)]
pub(crate) struct Rejection {
    pub(crate) id: Option<RequestId>,
    pub(crate) error: ErrorObject,
}

impl Rejection {
    fn new(id: Option<RequestId>, error: ErrorObject) -> Box<Self> {
        Box::new(Rejection { id, error })
    }
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
}

/// Where a message's `params` are (a byte range of it), if present.
pub(crate) fn locate_params(body: &str) -> Option<Range<usize>> {
    serde_json::from_str::<Envelope<'_>>(body)
        .ok()
        .and_then(|envelope| envelope.params)
        .map(|raw| offset_in(body, raw.get()))
}

/// Keeps an explicit `null` distinguishable from an absent member.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// A request read in one pass: the envelope and the members of `params`
/// together. Anything unusual (a notification, `params` that is not an
/// object, a duplicate member, a wrong type) fails it, and the message
/// takes the two-pass path, which says exactly what is wrong.
#[derive(Deserialize)]
struct OnePass<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    id: RequestId,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow, default, deserialize_with = "present_members")]
    params: Option<Members<'a, ReadMeta>>,
}

fn present_members<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Members<'de, ReadMeta>>, D::Error> {
    Members::deserialize(d).map(Some)
}

/// The common case: a well-formed request, read in one pass.
fn parse_at_once(body: ByteString) -> Result<Request, ByteString> {
    let Ok(OnePass {
        jsonrpc,
        id,
        method,
        params,
    }) = serde_json::from_str::<OnePass<'_>>(&body)
    else {
        return Err(body);
    };
    if jsonrpc != "2.0" {
        return Err(body);
    }
    let method = MethodName::parse(&method);
    let (params, head) = match params {
        // Located on first use, if ever needed.
        Some(members) => (OnceCell::new(), members.locate(&body)),
        None => (OnceCell::from(None), Head::default()),
    };
    Ok(Request {
        id,
        method,
        body,
        params,
        head: OnceCell::from(head),
    })
}

/// Parses one message. `body` must be the whole message and valid UTF-8.
pub(crate) fn parse(body: impl Into<ByteString>) -> Result<Incoming, Box<Rejection>> {
    let body = body.into();
    let first = body.trim_start().as_bytes().first().copied();
    if first != Some(b'{') {
        return Err(reject_non_object(&body, first));
    }
    let body = match parse_at_once(body) {
        Ok(request) => return Ok(Incoming::Request(request)),
        Err(body) => body,
    };
    let envelope: Envelope<'_> = match serde_json::from_str(&body) {
        Ok(envelope) => envelope,
        Err(error) => return Err(reject_malformed(&body, &error)),
    };
    let id = match envelope.id {
        None => None,
        Some(raw) => match serde_json::from_str::<RequestId>(raw.get()) {
            Ok(id) => Some(id),
            Err(_) => {
                return Err(Rejection::new(
                    None,
                    ErrorObject::invalid_request("`id` must be a string or an integer"),
                ));
            }
        },
    };
    if envelope.jsonrpc.as_deref() != Some("2.0") {
        return Err(Rejection::new(
            id,
            ErrorObject::invalid_request("`jsonrpc` must be \"2.0\""),
        ));
    }
    let Some(method) = envelope.method else {
        return Err(Rejection::new(
            id,
            ErrorObject::invalid_request("missing `method`"),
        ));
    };
    let Some(id) = id else {
        if method.starts_with("notifications/") {
            return Ok(Incoming::Notification(notification(
                &method,
                envelope.params,
            )));
        }
        return Err(Rejection::new(
            None,
            ErrorObject::invalid_request(format!(
                "missing `id`: `{method}` is a request, and only notifications may omit the id"
            )),
        ));
    };
    let method = MethodName::parse(&method);
    let params = envelope.params.map(|raw| offset_in(&body, raw.get()));
    Ok(Incoming::Request(Request {
        id,
        method,
        body,
        params: OnceCell::from(params),
        head: OnceCell::new(),
    }))
}

fn reject_non_object(body: &str, first: Option<u8>) -> Box<Rejection> {
    let error = if let Err(e) = serde_json::from_str::<IgnoredAny>(body) {
        ErrorObject::parse_error(e)
    } else if first == Some(b'[') {
        ErrorObject::invalid_request("batch requests are not supported; send one message at a time")
    } else {
        ErrorObject::invalid_request("a message must be a JSON object")
    };
    Rejection::new(None, error)
}

/// Syntax errors are `-32700`; valid JSON of the wrong shape is `-32600`,
/// answered with the id when it can still be read.
fn reject_malformed(body: &str, error: &serde_json::Error) -> Box<Rejection> {
    if matches!(
        error.classify(),
        Category::Syntax | Category::Eof | Category::Io
    ) {
        return Rejection::new(None, ErrorObject::parse_error(error));
    }
    if let Err(syntax) = serde_json::from_str::<IgnoredAny>(body) {
        return Rejection::new(None, ErrorObject::parse_error(syntax));
    }
    #[derive(Deserialize)]
    struct Id {
        id: RequestId,
    }
    let id = serde_json::from_str::<Id>(body).ok().map(|i| i.id);
    Rejection::new(id, ErrorObject::invalid_request(strip_position(error)))
}

fn strip_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::error_code;

    #[test]
    fn json_strings_read_as_serde_json_reads_them() {
        for raw in [
            r#""echo""#,
            r#""""#,
            r#""ünïcødé ✓""#,
            r#""a\"b""#,
            r#""tab\there""#,
            r#""\u00e9""#,
            "\"raw\ttab\"",
            "\"nul\u{0}\"",
            "12",
            "null",
            r#""unterminated"#,
            r#"["x"]"#,
        ] {
            let expected = serde_json::from_str::<String>(raw).ok();
            assert_eq!(json_str(raw).map(Cow::into_owned), expected, "{raw}");
        }
        assert!(matches!(json_str(r#""echo""#), Some(Cow::Borrowed("echo"))));
    }

    fn reject(body: &str) -> Box<Rejection> {
        match parse(body.to_owned()) {
            Err(r) => r,
            Ok(ok) => panic!("accepted {body}: {ok:?}"),
        }
    }

    #[test]
    fn requests_keep_params_in_place() {
        let Ok(Incoming::Request(req)) =
            parse(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"a":1}}"#)
        else {
            panic!()
        };
        assert_eq!(req.id, RequestId::Number(3));
        assert_eq!(req.params(), Some(r#"{"a":1}"#));
    }

    #[test]
    fn malformed_messages_get_the_right_codes() {
        let r = reject("{not json");
        assert_eq!((r.id, r.error.code), (None, error_code::PARSE_ERROR));
        let r = reject("[]");
        assert_eq!(r.error.code, error_code::INVALID_REQUEST);
        let r = reject("[1,");
        assert_eq!(r.error.code, error_code::PARSE_ERROR);
        let r = reject("42");
        assert_eq!(r.error.code, error_code::INVALID_REQUEST);
        let r = reject(r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#);
        assert_eq!((r.id, r.error.code), (None, error_code::INVALID_REQUEST));
        let r = reject(r#"{"jsonrpc":"2.0","method":"tools/list"}"#);
        assert_eq!((r.id, r.error.code), (None, error_code::INVALID_REQUEST));
        let r = reject(r#"{"jsonrpc":"1.0","id":"x","method":"tools/list"}"#);
        assert_eq!(
            (r.id, r.error.code),
            (Some(RequestId::from("x")), error_code::INVALID_REQUEST)
        );
        let r = reject(r#"{"jsonrpc":"2.0","id":5}"#);
        assert_eq!(
            (r.id, r.error.code),
            (Some(RequestId::Number(5)), error_code::INVALID_REQUEST)
        );
        let r = reject(r#"{"jsonrpc":"2.0","id":5,"method":7}"#);
        assert_eq!(
            (r.id, r.error.code),
            (Some(RequestId::Number(5)), error_code::INVALID_REQUEST)
        );
        let r = reject(r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#);
        assert_eq!((r.id, r.error.code), (None, error_code::INVALID_REQUEST));
    }

    #[test]
    fn notifications_are_recognised() {
        let Ok(Incoming::Notification(n)) = parse(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}"#,
        ) else {
            panic!()
        };
        assert_eq!(n.cancels, Some(RequestId::from("a")));
        assert_eq!(&*n.method, "notifications/cancelled");
        assert_eq!(
            n.params.map(|p| p.get().to_owned()).as_deref(),
            Some(r#"{"requestId":"a"}"#)
        );
        let Ok(Incoming::Notification(n)) =
            parse(r#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#)
        else {
            panic!()
        };
        assert_eq!(&*n.method, "notifications/whatever");
        assert!(n.params.is_none() && n.cancels.is_none());
    }
}

#[cfg(test)]
mod one_pass {
    use super::*;

    const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}"#;

    #[test]
    fn a_well_formed_request_is_read_in_one_pass() {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hello"}},"_meta":{META}}}}}"#
        );
        let mut request = parse_at_once(body.as_str().into()).expect("one pass");
        assert!(request.params.get().is_none(), "params located lazily");
        let head = request.head();
        assert_eq!(request.member(&head.name), Some(r#""echo""#));
        assert_eq!(request.member(&head.arguments), Some(r#"{"text":"hello"}"#));
        assert_eq!(
            request.params(),
            Some(&body[body.find(r#"{"name""#).unwrap()..body.len() - 1])
        );
        // `_meta` was read in the same pass, and is read only once.
        let Some(MetaMember::Read(ReadMeta(meta))) = request.take_meta() else {
            panic!("`_meta` read with the envelope");
        };
        assert_eq!(meta.protocol_version, "2026-07-28");
        assert!(meta.client_capabilities.supports_sampling());
        assert!(request.take_meta().is_none());
    }

    /// The members `head` located in `request`, in field order, `_meta`
    /// first (as its text, or `read` when the envelope read it).
    fn members(request: &Request, head: &Head) -> Vec<Option<String>> {
        let meta = head.meta.as_ref().map(|meta| match meta {
            MetaMember::Read(_) => "read".to_owned(),
            MetaMember::Raw(range) => request.text()[range.clone()].to_owned(),
        });
        let others = [
            &head.name,
            &head.uri,
            &head.arguments,
            &head.input_responses,
            &head.request_state,
        ]
        .map(|range| request.member(range).map(str::to_owned));
        std::iter::once(meta).chain(others).collect()
    }

    /// A request's `params` text and members, whichever path it took.
    fn head_of(body: &str) -> (Option<String>, Vec<Option<String>>) {
        let Ok(Incoming::Request(request)) = parse(body.to_owned()) else {
            panic!("not a request: {body}");
        };
        let found = members(&request, request.head());
        (request.params().map(str::to_owned), found)
    }

    #[test]
    fn both_paths_find_the_same_members() {
        // Escaped keys are read by value (`\u0065` is `e`).
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"a","arguments":{{"k":[1]}},"requestStat\u0065":"s","inputResponses":{{}},"_meta":{META},"other":[{{"name":1}}]}}}}"#
        );
        let request = parse_at_once(body.as_str().into()).expect("one pass");
        let one_pass = members(&request, request.head());
        let two_pass = members(&request, &Head::read(&request.body, request.params_range()));
        assert_eq!(one_pass[0].as_deref(), Some("read"));
        assert_eq!(two_pass[0].as_deref(), Some(META));
        assert_eq!(one_pass[1..], two_pass[1..]);
        assert_eq!(one_pass[1].as_deref(), Some(r#""a""#));
        assert_eq!(one_pass[5].as_deref(), Some(r#""s""#));
        // A duplicate member sends the request down the two-pass path,
        // which leaves the members to each stage's own parse (and error).
        for duplicate in [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a","name":"b"}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{},"_meta":{}}}"#,
        ] {
            assert!(parse_at_once(duplicate.into()).is_err());
            let (_, members) = head_of(duplicate);
            assert!(members.iter().all(Option::is_none), "{duplicate}");
        }
    }

    #[test]
    fn a_meta_the_envelope_cannot_read_is_located_for_the_slow_path() {
        // Missing a required field, or a field of the wrong type: `read`
        // must say which, so the one-pass parse leaves it as text.
        for meta in [
            r#"{"io.modelcontextprotocol/clientCapabilities":{}}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}"#,
            r#"{"progressToken":1}"#,
        ] {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{meta}}}}}"#
            );
            assert!(parse_at_once(body.as_str().into()).is_err(), "{meta}");
            let (_, members) = head_of(&body);
            assert_eq!(members[0].as_deref(), Some(meta));
        }
    }

    #[test]
    fn null_name_and_meta_are_absent_and_other_nulls_present() {
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":null,"_meta":null,"arguments":null,"requestState":null}}"#;
        let (_, members) = head_of(body);
        assert_eq!(members[0], None);
        assert_eq!(members[1], None);
        assert_eq!(members[3].as_deref(), Some("null"));
        assert_eq!(members[5].as_deref(), Some("null"));
    }

    #[test]
    fn params_that_are_not_an_object_have_no_members() {
        for params in [r#"[{"_meta":{}}]"#, "null", "5"] {
            let body =
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{params}}}"#);
            let (raw, members) = head_of(&body);
            assert_eq!(raw.as_deref(), Some(params));
            assert!(members.iter().all(Option::is_none), "{params}: {members:?}");
        }
    }
}
