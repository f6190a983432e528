//! The Streamable HTTP request headers that mirror the body
//! (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`), and
//! their validation: any missing, malformed or mismatched value is `-32020`.
//!
//! The body is the source of truth; these checks stop an intermediary that
//! routes on headers from being told something different from what the
//! server executes.

use std::borrow::Cow;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use http::{HeaderMap, HeaderValue};
use serde_json::Value;

use super::accept::{self, Accepts};
use super::hook::EraHeaders;
use crate::dispatch::envelope::json_str;
use crate::dispatch::{Dispatcher, Prepared};
use crate::protocol::ErrorObject;
use crate::protocol::method::{Method, MethodName};
use crate::schema::{HeaderKind, HeaderParam};

const PARAM_PREFIX: &str = "mcp-param-";

fn mismatch(message: String) -> ErrorObject {
    ErrorObject::header_mismatch(format!("Header mismatch: {message}"))
}

/// The single value of header `name`, as visible ASCII; `Ok(None)` if absent.
fn single<'a>(
    headers: &'a HeaderMap,
    name: impl http::header::AsHeaderName,
    display: &str,
) -> Result<Option<&'a str>, ErrorObject> {
    let mut seen = Seen::default();
    headers
        .get_all(name)
        .iter()
        .for_each(|value| seen.add(value));
    seen.single(display)
}

/// The values of one header seen while scanning the map: the first, and
/// whether there were more.
#[derive(Default)]
struct Seen<'a> {
    first: Option<&'a HeaderValue>,
    repeated: bool,
}

impl<'a> Seen<'a> {
    fn add(&mut self, value: &'a HeaderValue) {
        match self.first {
            None => self.first = Some(value),
            Some(_) => self.repeated = true,
        }
    }

    /// The single value, as visible ASCII; `Ok(None)` if absent.
    fn single(&self, display: &str) -> Result<Option<&'a str>, ErrorObject> {
        let Some(value) = self.first else {
            return Ok(None);
        };
        if self.repeated {
            return Err(mismatch(format!(
                "{display} header is given more than once"
            )));
        }
        let text = value
            .to_str()
            .map_err(|_| mismatch(format!("{display} header contains invalid characters")))?;
        // Visible ASCII, spaces and tabs only (`to_str`): `str::trim`'s
        // Unicode whitespace is ASCII's here, trimmed byte-wise.
        Ok(Some(text.trim_ascii()))
    }

    fn required(&self, display: &str) -> Result<&'a str, ErrorObject> {
        self.single(display)?
            .ok_or_else(|| mismatch(format!("missing {display} header")))
    }

    /// Checks that the header is present once and equals the body's value.
    fn mirrors(&self, display: &str, body: &str) -> Result<(), ErrorObject> {
        if self.is_exactly(body) {
            return Ok(());
        }
        let value = self.required(display)?;
        if value != body {
            return Err(mismatch(format!(
                "{display} header value '{value}' does not match body value '{body}'"
            )));
        }
        Ok(())
    }

    /// Whether the header came once, as exactly `expected` (which has no
    /// surrounding spaces to trim): what a conforming client sends,
    /// compared as it came, where reading it as text checks each byte.
    /// `false` says nothing: the full check decides.
    fn is_exactly(&self, expected: &str) -> bool {
        !self.repeated
            && expected.trim_ascii().len() == expected.len()
            && self
                .first
                .is_some_and(|value| value.as_bytes() == expected.as_bytes())
    }

    /// Whether the header is present with any value but `only` (one line,
    /// any case).
    fn is_other_than(&self, only: &str) -> bool {
        self.first.is_some()
            && (self.repeated
                || !self
                    .first_text()
                    .is_some_and(|value| value.trim().eq_ignore_ascii_case(only)))
    }

    /// The first value as visible ASCII, as `HeaderMap::get` would give it.
    fn first_text(&self) -> Option<&'a str> {
        self.first.and_then(|value| value.to_str().ok())
    }

    /// Whether the first value is exactly `bytes` (which are visible
    /// ASCII).
    fn first_is(&self, bytes: &[u8]) -> bool {
        self.first.is_some_and(|value| value.as_bytes() == bytes)
    }
}

/// The headers the endpoint reads before authorization, found in one pass
/// over the map: a request carries a handful of headers, and walking them
/// once costs less than a hashed lookup of each (this was ~7% of a static
/// answer's instructions).
#[derive(Default)]
pub(crate) struct EndpointHeaders<'a> {
    host: Seen<'a>,
    origin: Seen<'a>,
    content_type: Seen<'a>,
    accept: Seen<'a>,
    content_length: Seen<'a>,
    version: Seen<'a>,
    session_id: Seen<'a>,
    transfer_encoding: Seen<'a>,
    content_encoding: Seen<'a>,
}

impl<'a> EndpointHeaders<'a> {
    pub(crate) fn scan(headers: &'a HeaderMap) -> EndpointHeaders<'a> {
        let mut found = EndpointHeaders::default();
        for (name, value) in headers {
            // Names are lowercase in a `HeaderMap`; a match on the text is
            // a length switch and one comparison.
            let seen = match name.as_str() {
                "host" => &mut found.host,
                "origin" => &mut found.origin,
                "content-type" => &mut found.content_type,
                "accept" => &mut found.accept,
                "content-length" => &mut found.content_length,
                "mcp-protocol-version" => &mut found.version,
                "mcp-session-id" => &mut found.session_id,
                "transfer-encoding" => &mut found.transfer_encoding,
                "content-encoding" => &mut found.content_encoding,
                _ => continue,
            };
            seen.add(value);
        }
        found
    }

    pub(crate) fn host(&self) -> Option<&'a str> {
        self.host.first_text()
    }

    /// Whether `Host` came more than once (RFC 9112 §3.2 requires a 400).
    pub(crate) fn host_repeated(&self) -> bool {
        self.host.repeated
    }

    /// Whether `Origin` came more than once, which no browser sends
    /// (RFC 6454 §7.3).
    pub(crate) fn origin_repeated(&self) -> bool {
        self.origin.repeated
    }

    /// Whether the body has a transfer coding besides `chunked` (which
    /// hyper decodes; anything else would reach the JSON reader encoded).
    pub(crate) fn foreign_transfer_coding(&self) -> bool {
        self.transfer_encoding.is_other_than("chunked")
    }

    /// Whether the body has a content coding (compression), which the
    /// endpoint does not decode.
    pub(crate) fn content_coded(&self) -> bool {
        self.content_encoding.is_other_than("identity")
    }

    pub(crate) fn origin(&self) -> Option<&'a str> {
        self.origin.first_text()
    }

    pub(crate) fn content_type(&self) -> Option<&'a str> {
        self.content_type.first_text()
    }

    pub(crate) fn accept(&self) -> Option<&'a str> {
        self.accept.first_text()
    }

    /// Whether `Content-Type` names JSON ([`accept::is_json`]), what
    /// clients send compared as it came: reading a value as text checks
    /// each byte, and these two headers are most of a request's header
    /// bytes.
    pub(crate) fn content_is_json(&self) -> bool {
        self.content_type.first_is(b"application/json") || accept::is_json(self.content_type())
    }

    /// What `Accept` lets the server send ([`accept::accepts`]), the
    /// common value compared as it came.
    pub(crate) fn accepts(&self) -> Accepts {
        if self.accept.first_is(b"application/json, text/event-stream") {
            return Accepts {
                json: true,
                sse: true,
            };
        }
        accept::accepts(self.accept())
    }

    pub(crate) fn content_length(&self) -> Option<&'a str> {
        self.content_length.first_text()
    }

    /// `MCP-Protocol-Version` and `Mcp-Session-Id`, which tell another
    /// era's traffic apart.
    pub(crate) fn era(&self) -> EraHeaders<'a> {
        EraHeaders {
            version: self.version.first_text(),
            session_id: self.session_id.first_text(),
        }
    }
}

/// The three mirrored headers every request may need, found in one pass
/// over the map (a request carries a handful of headers; three hashed
/// lookups cost more than walking them once).
#[derive(Default)]
struct Mirrored<'a> {
    version: Seen<'a>,
    method: Seen<'a>,
    name: Seen<'a>,
}

impl<'a> Mirrored<'a> {
    fn scan(headers: &'a HeaderMap) -> Mirrored<'a> {
        let mut mirrored = Mirrored::default();
        for (name, value) in headers {
            let seen = match name.as_str() {
                "mcp-protocol-version" => &mut mirrored.version,
                "mcp-method" => &mut mirrored.method,
                "mcp-name" => &mut mirrored.name,
                _ => continue,
            };
            seen.add(value);
        }
        mirrored
    }
}

/// Decodes the `=?base64?...?=` sentinel form; other values are literal.
/// Decoding is strict: canonical padding, standard alphabet, valid UTF-8.
pub(crate) fn decode<'a>(value: &'a str, display: &str) -> Result<Cow<'a, str>, ErrorObject> {
    let Some(encoded) = value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    else {
        return Ok(Cow::Borrowed(value));
    };
    let invalid = || mismatch(format!("{display} header has an invalid Base64 value"));
    let bytes = STANDARD.decode(encoded).map_err(|_| invalid())?;
    String::from_utf8(bytes)
        .map(Cow::Owned)
        .map_err(|_| invalid())
}

/// Checks every mirrored header of a prepared request.
pub(crate) fn check(
    prepared: &Prepared,
    headers: &HeaderMap,
    dispatcher: &Dispatcher,
) -> Result<(), ErrorObject> {
    let mirrored = Mirrored::scan(headers);
    let body_version = &prepared.meta.protocol_version;
    mirrored
        .version
        .mirrors("MCP-Protocol-Version", body_version)?;
    mirrored
        .method
        .mirrors("Mcp-Method", prepared.request.method.as_str())?;
    let request = &prepared.request;
    let head = request.head();
    // A body whose target does not parse is rejected by the dispatcher with
    // -32602.
    let target = match &request.method {
        MethodName::Known(Method::ToolsCall | Method::PromptsGet) => {
            request.member(&head.name).and_then(json_str)
        }
        MethodName::Known(Method::ResourcesRead) => request.member(&head.uri).and_then(json_str),
        MethodName::Unknown(name) => match dispatcher.named_by(name) {
            Some(param) => param_str(request.params(), param).map(Cow::Owned),
            None => None,
        },
        MethodName::Known(_) => None,
    };
    let Some(target) = target else {
        return Ok(());
    };
    // A target that reads as the Base64 form is compared decoded, always.
    let literal = !target.starts_with("=?base64?");
    if !(literal && mirrored.name.is_exactly(&target)) {
        let header = mirrored.name.required("Mcp-Name")?;
        let header = decode(header, "Mcp-Name")?;
        if header != target {
            return Err(mismatch(format!(
                "Mcp-Name header value '{header}' does not match body value '{target}'"
            )));
        }
    }
    let is_call = request.method == MethodName::Known(Method::ToolsCall);
    let header_params = |name: &str| dispatcher.tool_header_params(name);
    if let Some(params) = Some(&*target).filter(|_| is_call).and_then(header_params) {
        // Only tools that mirror arguments pay for reading them.
        let arguments = request
            .member(&head.arguments)
            .and_then(|raw| serde_json::from_str::<Value>(raw).ok());
        check_params(&params, arguments.as_ref(), headers)?;
    }
    Ok(())
}

/// The string param `name` of an extension method's params, which its
/// `Mcp-Name` header mirrors.
fn param_str(params: Option<&str>, name: &str) -> Option<String> {
    let params: serde_json::Map<String, Value> = serde_json::from_str(params?).ok()?;
    match params.get(name)? {
        Value::String(value) => Some(value.clone()),
        _ => None,
    }
}

/// Every annotated parameter present in the arguments needs a matching
/// `Mcp-Param-{name}` header; one absent from the arguments needs none.
fn check_params(
    params: &[HeaderParam],
    arguments: Option<&Value>,
    headers: &HeaderMap,
) -> Result<(), ErrorObject> {
    for param in params {
        let display = format!("Mcp-Param-{}", param.name);
        let header_name = format!("{PARAM_PREFIX}{}", param.name.to_ascii_lowercase());
        let header = single(headers, &header_name, &display)?;
        let value = arguments
            .and_then(|a| param.path.iter().try_fold(a, |v, key| v.get(key)))
            .filter(|v| !v.is_null());
        match (header, value) {
            (None, None) => {}
            (None, Some(_)) => return Err(mismatch(format!("missing {display} header"))),
            (Some(_), None) => {
                return Err(mismatch(format!(
                    "{display} header is present but the argument is not"
                )));
            }
            (Some(header), Some(value)) => {
                let header = decode(header, &display)?;
                if !matches(param.kind, &header, value) {
                    return Err(mismatch(format!(
                        "{display} header value '{header}' does not match body value '{value}'"
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Compares a header value with the body value of its kind; integers
/// numerically (`42.0` equals `42`).
fn matches(kind: HeaderKind, header: &str, body: &Value) -> bool {
    match (kind, body) {
        (HeaderKind::String, Value::String(s)) => header == s,
        (HeaderKind::Boolean, Value::Bool(b)) => header == if *b { "true" } else { "false" },
        (HeaderKind::Integer, Value::Number(n)) => match (header.parse::<f64>(), n.as_f64()) {
            (Ok(h), Some(b)) => h.is_finite() && h == b,
            _ => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sentinel_decoding_is_strict() {
        assert_eq!(decode("=?base64?SGVsbG8=?=", "X").unwrap(), "Hello");
        assert_eq!(decode("SGVsbG8=", "X").unwrap(), "SGVsbG8=");
        assert_eq!(
            decode("=?base64?SGVsbG8=", "X").unwrap(),
            "=?base64?SGVsbG8="
        );
        assert_eq!(
            decode("=?base64?SGVsbG8sIOS4lueVjA==?=", "X").unwrap(),
            "Hello, 世界"
        );
        for bad in [
            "=?base64?SGVsbG8?=",
            "=?base64?SGVs!!!bG8=?=",
            "=?base64?/w==?=",
        ] {
            assert_eq!(decode(bad, "X").unwrap_err().code, -32020, "{bad}");
        }
    }

    #[test]
    fn the_endpoint_scan_reads_first_values_as_a_lookup_would() {
        let mut headers = HeaderMap::new();
        headers.insert("Host", HeaderValue::from_static("localhost:8080"));
        headers.append("accept", HeaderValue::from_static("application/json"));
        headers.append("accept", HeaderValue::from_static("text/event-stream"));
        headers.insert("content-type", HeaderValue::from_bytes(b"caf\xe9").unwrap());
        headers.insert(
            "MCP-Protocol-Version",
            HeaderValue::from_static("2026-07-28"),
        );
        headers.insert("x-other", HeaderValue::from_static("ignored"));
        let seen = EndpointHeaders::scan(&headers);
        for name in ["host", "origin", "accept", "content-type", "content-length"] {
            let lookup = headers.get(name).and_then(|v| v.to_str().ok());
            let scanned = match name {
                "host" => seen.host(),
                "origin" => seen.origin(),
                "accept" => seen.accept(),
                "content-type" => seen.content_type(),
                _ => seen.content_length(),
            };
            assert_eq!(scanned, lookup, "{name}");
        }
        assert_eq!(seen.accept(), Some("application/json"));
        assert_eq!(seen.content_type(), None, "not visible ASCII");
        let era = seen.era();
        assert_eq!((era.version, era.session_id), (Some("2026-07-28"), None));
    }

    #[test]
    fn only_one_exact_value_is_taken_as_it_came() {
        let exactly = |values: &[&'static str], expected: &str| {
            let mut headers = HeaderMap::new();
            for value in values {
                headers.append("mcp-method", HeaderValue::from_static(value));
            }
            Mirrored::scan(&headers).method.is_exactly(expected)
        };
        assert!(exactly(&["tools/call"], "tools/call"));
        assert!(!exactly(&["tools/call"], "tools/list"));
        assert!(!exactly(&["tools/call", "tools/call"], "tools/call"));
        assert!(!exactly(&[], "tools/call"));
        // A body value with spaces around it is for the full check.
        assert!(!exactly(&["echo "], "echo "));
    }

    #[test]
    fn typed_comparison() {
        assert!(matches(HeaderKind::Integer, "42", &json!(42)));
        assert!(matches(HeaderKind::Integer, "42.0", &json!(42)));
        assert!(!matches(HeaderKind::Integer, "43", &json!(42)));
        assert!(matches(HeaderKind::Boolean, "true", &json!(true)));
        assert!(!matches(HeaderKind::Boolean, "True", &json!(true)));
        assert!(matches(HeaderKind::String, "us-west1", &json!("us-west1")));
        assert!(!matches(HeaderKind::String, "42", &json!(42)));
    }
}
