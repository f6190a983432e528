//! Reading and checking the per-request `_meta` every modern request carries.

use std::sync::Arc;

use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::protocol::json::parse_arguments;
use crate::protocol::meta::{CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY};
use crate::protocol::{
    ClientCapabilities, ErrorObject, Implementation, LogLevel, ProgressToken, RequestMeta,
};

use super::key::Key;

#[derive(Deserialize)]
struct ParamsMeta<'a> {
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<&'a RawValue>,
    #[serde(rename = "protocolVersion", default)]
    legacy_version: Option<serde_json::Value>,
}

/// The large members are boxed so that the parsed struct stays small as
/// serde moves it about (they were most of a request's `memcpy`).
#[derive(Deserialize)]
struct WireMeta {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default)]
    protocol_version: Option<String>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo", default)]
    client_info: Option<Box<Implementation>>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default)]
    client_capabilities: Option<SharedCapabilities>,
    #[serde(rename = "io.modelcontextprotocol/logLevel", default)]
    log_level: Option<LogLevel>,
    #[serde(rename = "progressToken", default)]
    progress_token: Option<ProgressToken>,
    #[serde(default)]
    traceparent: Option<String>,
    #[serde(default)]
    tracestate: Option<String>,
    #[serde(default)]
    baggage: Option<String>,
}

/// The capabilities, read straight into their shared allocation: the
/// struct is large and mostly empty, and a derived visitor would move it
/// whole several times on the way there. Same rules as the derive, except
/// that only a JSON object is accepted: unknown members are ignored,
/// `null` members are absent, duplicates are refused.
struct SharedCapabilities(Arc<ClientCapabilities>);

impl<'de> Deserialize<'de> for SharedCapabilities {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(CapabilitiesVisitor)
    }
}

struct CapabilitiesVisitor;

impl<'de> Visitor<'de> for CapabilitiesVisitor {
    type Value = SharedCapabilities;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("struct ClientCapabilities")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let Some(mut key) = map.next_key::<Key<'de>>()? else {
            // `{}`, what most clients send: one shared value per thread, no
            // allocation.
            thread_local! {
                static NONE: Arc<ClientCapabilities> = Arc::default();
            }
            return Ok(SharedCapabilities(NONE.with(Arc::clone)));
        };
        let mut shared = Arc::new(ClientCapabilities::default());
        let Some(caps) = Arc::get_mut(&mut shared) else {
            unreachable!("a new Arc is unique");
        };
        // Exhaustive: a member added to the struct stops this compiling
        // until it is read here too.
        let ClientCapabilities {
            elicitation,
            sampling,
            roots,
            extensions,
            experimental,
        } = caps;
        let mut seen = [false; 5];
        loop {
            let [e, s, r, x, p] = &mut seen;
            match &*key {
                "elicitation" => read_once(&mut map, elicitation, e, "elicitation")?,
                "sampling" => read_once(&mut map, sampling, s, "sampling")?,
                "roots" => read_once(&mut map, roots, r, "roots")?,
                "extensions" => read_once(&mut map, extensions, x, "extensions")?,
                "experimental" => read_once(&mut map, experimental, p, "experimental")?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            match map.next_key::<Key<'de>>()? {
                Some(next) => key = next,
                None => break,
            }
        }
        Ok(SharedCapabilities(shared))
    }
}

/// Reads one member into its slot, refusing a second occurrence (`seen`
/// records the first, even one whose value is `null`, which stays absent
/// as with the derive).
fn read_once<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
    map: &mut A,
    slot: &mut Option<T>,
    seen: &mut bool,
    name: &'static str,
) -> Result<(), A::Error> {
    if std::mem::replace(seen, true) {
        return Err(de::Error::duplicate_field(name));
    }
    *slot = map.next_value()?;
    Ok(())
}

/// Why a request's `_meta` was refused.
#[derive(Debug)]
pub(crate) enum MetaError {
    /// The request is malformed: `-32602`.
    Invalid(ErrorObject),
    /// A legacy `initialize` (no `_meta`, a `protocolVersion` param): answer
    /// with the versions this server speaks so the client can say why.
    LegacyInitialize { requested: String },
}

/// A `_meta` read while the envelope is read, in the same pass over the
/// body: an object with every required field. Anything else fails that
/// pass, and the request is read again the slow way, where [`read`] says
/// exactly what is wrong.
#[derive(Debug)]
pub(crate) struct ReadMeta(pub(super) Arc<RequestMeta>);

impl<'de> Deserialize<'de> for ReadMeta {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Located first, then read (or found read already): see `Recent`.
        let raw = <&'de RawValue>::deserialize(deserializer)?;
        parse_wire(raw.get())
            .map(ReadMeta)
            .map_err(|_| de::Error::custom("`_meta` lacks a required field"))
    }
}

/// The `_meta` objects this thread read last, by their exact text. A
/// client sends the same `_meta` (version, capabilities, identity) with
/// every request, and reading it was a tenth of a small request's work
/// (its keys are long, and the capabilities an allocation of their own):
/// the same text always reads to the same metadata, so a request whose
/// `_meta` is byte for byte one of these shares its reading. Only what
/// read without error is kept, and only small objects, so what a client
/// can make this hold is bounded.
#[derive(Default)]
struct Recent {
    entries: [Option<(Box<str>, Arc<RequestMeta>)>; RECENT_ENTRIES],
    /// The entry the next new text replaces (round robin).
    next: usize,
}

/// How many `_meta` texts each thread keeps (a few clients per thread).
const RECENT_ENTRIES: usize = 4;

/// The longest `_meta` text kept (one with a progress token or trace
/// context differs from request to request anyway).
const RECENT_MAX_LEN: usize = 1024;

impl Recent {
    fn get(&self, raw: &str) -> Option<Arc<RequestMeta>> {
        self.entries
            .iter()
            .flatten()
            .find(|(text, _)| &**text == raw)
            .map(|(_, meta)| meta.clone())
    }

    fn put(&mut self, raw: &str, meta: &Arc<RequestMeta>) {
        if raw.len() > RECENT_MAX_LEN {
            return;
        }
        self.entries[self.next] = Some((raw.into(), meta.clone()));
        self.next = (self.next + 1) % RECENT_ENTRIES;
    }
}

thread_local! {
    static RECENT: std::cell::RefCell<Recent> = std::cell::RefCell::default();
}

/// Reads `params._meta`, requiring the fields every request must carry.
pub(crate) fn parse(params: Option<&str>, method: &str) -> Result<Arc<RequestMeta>, MetaError> {
    let invalid = |message: String| MetaError::Invalid(ErrorObject::invalid_params(message));
    let Some(params) = params else {
        return Err(invalid(format!(
            "missing `params._meta`: every request must carry `{PROTOCOL_VERSION_KEY}` and `{CLIENT_CAPABILITIES_KEY}`"
        )));
    };
    let not_object = || invalid("`params` must be a JSON object".to_owned());
    if !params.trim_start().starts_with('{') {
        return Err(not_object());
    }
    let head: ParamsMeta<'_> = serde_json::from_str(params).map_err(|_| not_object())?;
    let Some(raw) = head.meta else {
        if method == "initialize" {
            let requested = match head.legacy_version {
                Some(serde_json::Value::String(v)) => v,
                _ => String::new(),
            };
            return Err(MetaError::LegacyInitialize { requested });
        }
        return Err(invalid(format!(
            "missing `params._meta`: every request must carry `{PROTOCOL_VERSION_KEY}` and `{CLIENT_CAPABILITIES_KEY}`"
        )));
    };
    parse_wire(raw.get())
}

/// Reads the `_meta` object itself (from this thread's recent ones when
/// its text is one of theirs).
pub(super) fn parse_wire(raw: &str) -> Result<Arc<RequestMeta>, MetaError> {
    if let Some(meta) = RECENT.with_borrow(|recent| recent.get(raw)) {
        return Ok(meta);
    }
    let wire: WireMeta = parse_arguments(raw).map_err(|e| {
        MetaError::Invalid(ErrorObject::invalid_params(format!(
            "invalid `params._meta`: {e}"
        )))
    })?;
    let meta = wire.check()?;
    RECENT.with_borrow_mut(|recent| recent.put(raw, &meta));
    Ok(meta)
}

impl WireMeta {
    /// The request's metadata, if it has the fields every request must carry.
    fn check(self) -> Result<Arc<RequestMeta>, MetaError> {
        let invalid = |message: String| MetaError::Invalid(ErrorObject::invalid_params(message));
        let Some(protocol_version) = self.protocol_version else {
            return Err(invalid(format!(
                "`params._meta` is missing `{PROTOCOL_VERSION_KEY}`"
            )));
        };
        let Some(client_capabilities) = self.client_capabilities else {
            return Err(invalid(format!(
                "`params._meta` is missing `{CLIENT_CAPABILITIES_KEY}`"
            )));
        };
        Ok(Arc::new(RequestMeta {
            protocol_version,
            client_info: self.client_info,
            client_capabilities: client_capabilities.0,
            log_level: self.log_level,
            progress_token: self.progress_token,
            traceparent: self.traceparent.filter(|t| is_traceparent(t)),
            tracestate: self.tracestate,
            baggage: self.baggage,
        }))
    }
}

/// W3C trace context `traceparent`: `vv-<32 hex>-<16 hex>-<2 hex>`.
fn is_traceparent(value: &str) -> bool {
    let parts: Vec<&str> = value.split('-').collect();
    let hex = |s: &str, len: usize| s.len() == len && s.bytes().all(|b| b.is_ascii_hexdigit());
    parts.len() >= 4
        && hex(parts[0], 2)
        && parts[0] != "ff"
        && hex(parts[1], 32)
        && hex(parts[2], 16)
        && hex(parts[3], 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::error_code;

    fn error(params: Option<&str>) -> ErrorObject {
        match parse(params, "tools/list") {
            Err(MetaError::Invalid(e)) => e,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_same_meta_text_shares_one_reading_and_only_that_text_does() {
        let text = |caps: &str| {
            format!(
                r#"{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{caps}}}"#
            )
        };
        let first = parse_wire(&text(r#"{"roots":{}}"#)).unwrap();
        let again = parse_wire(&text(r#"{"roots":{}}"#)).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        // Equal JSON written differently is read again, to the same value.
        let spaced = parse_wire(&text(r#"{ "roots": {} }"#)).unwrap();
        assert!(!Arc::ptr_eq(&first, &spaced));
        assert_eq!(first.client_capabilities, spaced.client_capabilities);
        let other = parse_wire(&text(r#"{"sampling":{}}"#)).unwrap();
        assert!(other.client_capabilities.roots.is_none());
        assert!(other.client_capabilities.sampling.is_some());
        // What failed is never kept: it fails again, saying why.
        for _ in 0..2 {
            assert!(matches!(
                parse_wire(r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#),
                Err(MetaError::Invalid(_))
            ));
        }
        // A long text is read each time.
        let long = text(&format!(
            r#"{{"experimental":{{"x":"{}"}}}}"#,
            "y".repeat(RECENT_MAX_LEN)
        ));
        let (a, b) = (parse_wire(&long).unwrap(), parse_wire(&long).unwrap());
        assert!(!Arc::ptr_eq(&a, &b));
    }

    #[test]
    fn capabilities_must_be_an_object_and_members_appear_once() {
        let meta = |caps: &str| {
            format!(
                r#"{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{caps}}}}}"#
            )
        };
        assert_eq!(error(Some(&meta("[]"))).code, error_code::INVALID_PARAMS);
        let e = error(Some(&meta(r#"{"roots":{},"roots":{}}"#)));
        assert!(
            e.message.contains("duplicate field `roots`"),
            "{}",
            e.message
        );
        let Ok(parsed) = parse(
            Some(&meta(
                r#"{"elicitation":{"url":{}},"sampling":null,"other":[1]}"#,
            )),
            "tools/list",
        ) else {
            panic!("valid capabilities");
        };
        assert!(parsed.client_capabilities.supports_elicitation_url());
        assert!(!parsed.client_capabilities.supports_sampling());
    }

    #[test]
    fn empty_capabilities_are_shared_and_others_are_not() {
        let caps = |caps: &str| {
            let params = format!(
                r#"{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{caps}}}}}"#
            );
            match parse(Some(&params), "tools/list") {
                Ok(meta) => meta.client_capabilities.clone(),
                Err(error) => panic!("{caps}: {error:?}"),
            }
        };
        let (a, b) = (caps("{}"), caps(" { } "));
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(*a, ClientCapabilities::default());
        let c = caps(r#"{"other":1}"#);
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(*c, ClientCapabilities::default());
        assert!(caps(r#"{"other":1,"sampling":{}}"#).supports_sampling());
    }

    #[test]
    fn required_fields_are_required() {
        assert_eq!(error(None).code, error_code::INVALID_PARAMS);
        assert_eq!(error(Some("{}")).code, error_code::INVALID_PARAMS);
        assert_eq!(error(Some("[]")).code, error_code::INVALID_PARAMS);
        let e = error(Some(
            r#"{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}"#,
        ));
        assert!(e.message.contains("protocolVersion"), "{}", e.message);
        let e = error(Some(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#,
        ));
        assert!(e.message.contains("clientCapabilities"), "{}", e.message);
        let e = error(Some(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}}"#,
        ));
        assert!(e.message.contains("logLevel"), "{}", e.message);
    }

    #[test]
    fn optional_fields_are_read() {
        let meta = parse(
            Some(
                r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/logLevel":"info","progressToken":7,"traceparent":"00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01","tracestate":"k=v"}}"#,
            ),
            "tools/list",
        )
        .unwrap();
        assert_eq!(meta.log_level, Some(LogLevel::Info));
        assert!(meta.client_capabilities.supports_sampling());
        assert_eq!(
            meta.traceparent.as_deref(),
            Some("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01")
        );
        assert!(!is_traceparent("00-zz-00f067aa0ba902b7-01"));
    }

    #[test]
    fn legacy_initialize_is_recognised() {
        match parse(Some(r#"{"protocolVersion":"2025-11-25"}"#), "initialize") {
            Err(MetaError::LegacyInitialize { requested }) => assert_eq!(requested, "2025-11-25"),
            other => panic!("{other:?}"),
        }
    }
}
