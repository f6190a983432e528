//! Turning one message's bytes into a request or notification, or into the
//! JSON-RPC error that says why it is neither.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::ops::Range;

use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer};
use serde_json::error::Category;
use serde_json::value::RawValue;

use super::method::MethodName;
use crate::protocol::{ErrorObject, RequestId};

/// A JSON-RPC request, owning its body; `params` is a range into it so that
/// nothing is copied.
#[derive(Debug)]
pub(crate) struct Request {
    pub(crate) id: RequestId,
    pub(crate) method: MethodName,
    body: String,
    params: Option<Range<usize>>,
    /// The members of `params` several stages read, found on first use.
    head: OnceCell<Head>,
}

impl Request {
    /// The JSON text of `params`, if present.
    pub(crate) fn params(&self) -> Option<&str> {
        self.params.clone().map(|range| &self.body[range])
    }

    /// The members of `params` that `_meta` checks, header checks and
    /// handlers all need, located in one pass over the JSON.
    pub(crate) fn head(&self) -> &Head {
        self.head
            .get_or_init(|| Head::read(&self.body, self.params.clone()))
    }

    /// The JSON text of one member the head located.
    pub(crate) fn member(&self, range: &Option<Range<usize>>) -> Option<&str> {
        range.clone().map(|range| &self.body[range])
    }
}

/// A JSON string's value, borrowed unless it has escapes (serde's `Cow`
/// always allocates outside a `#[serde(borrow)]` field).
pub(crate) fn json_str(raw: &str) -> Option<Cow<'_, str>> {
    serde_json::from_str::<&str>(raw)
        .map(Cow::Borrowed)
        .or_else(|_| serde_json::from_str::<String>(raw).map(Cow::Owned))
        .ok()
}

/// Where the commonly read members of `params` are in the body, as the raw
/// JSON of each value. Empty when `params` is not an object that parses:
/// each stage then parses `params` itself and reports its own error.
#[derive(Debug, Default)]
pub(crate) struct Head {
    pub(crate) meta: Option<Range<usize>>,
    pub(crate) name: Option<Range<usize>>,
    pub(crate) uri: Option<Range<usize>>,
    pub(crate) arguments: Option<Range<usize>>,
    pub(crate) input_responses: Option<Range<usize>>,
    pub(crate) request_state: Option<Range<usize>>,
}

impl Head {
    fn read(body: &str, params: Option<Range<usize>>) -> Head {
        #[derive(Deserialize)]
        struct Members<'a> {
            #[serde(rename = "_meta", borrow, default)]
            meta: Option<&'a RawValue>,
            #[serde(borrow, default)]
            name: Option<&'a RawValue>,
            #[serde(borrow, default)]
            uri: Option<&'a RawValue>,
            #[serde(borrow, default, deserialize_with = "present")]
            arguments: Option<&'a RawValue>,
            #[serde(
                rename = "inputResponses",
                borrow,
                default,
                deserialize_with = "present"
            )]
            input_responses: Option<&'a RawValue>,
            #[serde(rename = "requestState", borrow, default, deserialize_with = "present")]
            request_state: Option<&'a RawValue>,
        }
        let Some(range) = params else {
            return Head::default();
        };
        let Ok(members) = serde_json::from_str::<Members<'_>>(&body[range]) else {
            return Head::default();
        };
        let at = |raw: Option<&RawValue>| raw.map(|raw| offset_in(body, raw.get()));
        Head {
            meta: at(members.meta),
            name: at(members.name),
            uri: at(members.uri),
            arguments: at(members.arguments),
            input_responses: at(members.input_responses),
            request_state: at(members.request_state),
        }
    }
}

/// A client notification. Only cancellation means anything to a stateless
/// server; everything else is accepted and ignored.
#[derive(Debug, PartialEq)]
pub(crate) enum Notification {
    /// `notifications/cancelled` naming a request.
    Cancelled(RequestId),
    /// Any other notification (or a cancellation too malformed to act on).
    Other,
}

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

/// Keeps an explicit `null` distinguishable from an absent member.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// Parses one message. `body` must be the whole message and valid UTF-8.
pub(crate) fn parse(body: String) -> Result<Incoming, Box<Rejection>> {
    let first = body.trim_start().as_bytes().first().copied();
    if first != Some(b'{') {
        return Err(reject_non_object(&body, first));
    }
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
        params,
        head: OnceCell::new(),
    }))
}

/// Where `part` (a subslice of `whole`) sits inside it.
fn offset_in(whole: &str, part: &str) -> Range<usize> {
    let start = part.as_ptr() as usize - whole.as_ptr() as usize;
    start..start + part.len()
}

fn notification(method: &str, params: Option<&RawValue>) -> Notification {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Cancelled {
        request_id: RequestId,
    }
    if method != "notifications/cancelled" {
        return Notification::Other;
    }
    // Invalid cancellations are ignored, as the spec asks.
    params
        .and_then(|p| serde_json::from_str::<Cancelled>(p.get()).ok())
        .map_or(Notification::Other, |c| {
            Notification::Cancelled(c.request_id)
        })
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

    fn reject(body: &str) -> Box<Rejection> {
        match parse(body.to_owned()) {
            Err(r) => r,
            Ok(ok) => panic!("accepted {body}: {ok:?}"),
        }
    }

    #[test]
    fn requests_keep_params_in_place() {
        let Ok(Incoming::Request(req)) =
            parse(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"a":1}}"#.into())
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
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}"#
                .into(),
        ) else {
            panic!()
        };
        assert_eq!(n, Notification::Cancelled(RequestId::from("a")));
        let Ok(Incoming::Notification(n)) =
            parse(r#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#.into())
        else {
            panic!()
        };
        assert_eq!(n, Notification::Other);
    }
}
