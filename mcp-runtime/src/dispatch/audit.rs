//! Audit events: one structured `tracing` event per tool call, resource
//! read and prompt get, under the target `mcp::audit`: who called (the
//! authenticated principal, the OAuth client, the transport, the client's
//! self-reported name), what (method, tool or prompt name or URI, a keyed
//! digest of the arguments), the outcome and how long it took.
//!
//! Nothing is computed unless a subscriber enables the target at `INFO`:
//! the check is one comparison on the request path. The arguments
//! themselves are logged only when the server is built with
//! `ServerBuilder::audit_arguments` (they may hold anything a user typed);
//! otherwise their digest lets equal calls be matched without the log
//! holding them.

use std::task::{Context as TaskContext, Poll};
use std::time::Instant;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::middleware::{
    BoxError, BoxFuture, Layer, Next, Request, RequestLayer, Response, Service,
};
use crate::protocol::method::Method;
use crate::protocol::{ErrorObject, RequestId};
use crate::security::{KeyRing, Principal};

/// The `tracing` target of audit events.
pub(crate) const TARGET: &str = crate::diagnostics::AUDIT_TARGET;

/// How much of the arguments an event shows when they are logged.
const SHOWN_ARGUMENTS: usize = 1024;

/// How much of the client's self-reported name an event shows.
const SHOWN_CLIENT: usize = 64;

/// Whether `method`'s requests are audited now: tool calls, resource reads
/// and prompt gets, while a subscriber listens to `mcp::audit`. The
/// dispatcher asks before each such request, and passes only those through
/// the stack with the audit layer: the others pay for one comparison.
pub(crate) fn wanted(method: Method) -> bool {
    matches!(
        method,
        Method::ToolsCall | Method::ResourcesRead | Method::PromptsGet
    ) && listened()
}

/// Whether a subscriber enables `mcp::audit` at `INFO`. Asked by making a
/// span of that target, not with `enabled!`: tracing-subscriber keeps each
/// per-layer filter's answer to `enabled` in a thread-local until a span
/// or event is made (tokio-rs/tracing#2519), and the answers of a probe
/// that makes neither would decide the next span, the request's own, for
/// a layer whose filter rejects the audit events (an export layer). The
/// span, made and dropped at once, consumes them; it exists only while
/// the audit does, never entered.
fn listened() -> bool {
    !tracing::info_span!(target: TARGET, "mcp.audit.probe").is_disabled()
}

/// The server's request layers with the audit layer innermost.
pub(crate) fn stack(
    mut layers: Vec<RequestLayer>,
    keys: &KeyRing,
    arguments: bool,
) -> Next<Request> {
    let audit = AuditLayer {
        keys: keys.clone(),
        arguments,
    };
    layers.push(RequestLayer::new(audit));
    crate::middleware::request_stack(&layers).expect("holds the audit layer")
}

/// The audit events, as a request layer (innermost: it sees the answer the
/// handler gave, before the server's own request layers).
#[derive(Clone)]
pub(crate) struct AuditLayer {
    /// The key of the arguments' digest.
    pub(crate) keys: KeyRing,
    /// Events show the arguments themselves (`ServerBuilder::audit_arguments`).
    pub(crate) arguments: bool,
}

impl<S> Layer<S> for AuditLayer {
    type Service = Audited<S>;

    fn layer(&self, inner: S) -> Audited<S> {
        Audited {
            inner,
            layer: self.clone(),
        }
    }
}

/// The rest of the stack, audited.
#[derive(Clone)]
pub(crate) struct Audited<S> {
    inner: S,
    layer: AuditLayer,
}

impl<S> Service<Request> for Audited<S>
where
    S: Service<Request, Response = Response, Error = BoxError, Future = BoxFuture<Response>>,
{
    type Response = Response;
    type Error = BoxError;
    type Future = BoxFuture<Response>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let mut audit = Audit::start(&self.layer, &request);
        let answer = self.inner.call(request);
        Box::pin(async move {
            let answer = answer.await;
            audit.finish(&answer);
            answer
        })
    }
}

/// The members of the params an event shows.
#[derive(Deserialize)]
struct Named<'a> {
    #[serde(borrow, default)]
    name: Option<&'a str>,
    #[serde(borrow, default)]
    uri: Option<&'a str>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

/// One audited request, from its start; the event is written when it is
/// finished, or when it is dropped unfinished (the client cancelled).
struct Audit {
    layer: AuditLayer,
    method: String,
    name: Option<String>,
    arguments: Option<String>,
    request_id: RequestId,
    principal: Option<Principal>,
    client: Option<String>,
    transport: &'static str,
    started: Instant,
    finished: bool,
}

impl Audit {
    fn start(layer: &AuditLayer, request: &Request) -> Audit {
        let named = request
            .params()
            .and_then(|params| serde_json::from_str::<Named<'_>>(params).ok());
        let (name, arguments) = match named {
            Some(Named {
                name,
                uri,
                arguments,
            }) => (
                uri.or(name).map(Into::into),
                arguments.map(|a| a.get().to_owned()),
            ),
            None => (None, None),
        };
        Audit {
            layer: layer.clone(),
            method: request.method().to_owned(),
            name,
            arguments,
            request_id: request.id().clone(),
            principal: request.source().principal().cloned(),
            client: request.meta().client_info.as_ref().map(|c| c.name.clone()),
            transport: transport_name(request.source()),
            started: Instant::now(),
            finished: false,
        }
    }

    /// Writes the event for the request's answer.
    fn finish(&mut self, answer: &Result<Response, BoxError>) {
        self.finished = true;
        let (outcome, code) = match answer {
            Err(error) => ("error", error.downcast_ref::<ErrorObject>().map(|e| e.code)),
            Ok(result)
                if result
                    .json()
                    .starts_with(r#"{"resultType":"input_required""#) =>
            {
                ("input_required", None)
            }
            Ok(result)
                if self.method == "tools/call" && is_tool_error(result.json().as_bytes()) =>
            {
                ("tool_error", None)
            }
            Ok(_) => ("ok", None),
        };
        self.emit(outcome, code);
    }

    fn emit(&self, outcome: &str, error_code: Option<i32>) {
        let arguments = self.arguments.as_deref();
        let digest = arguments.map(|arguments| self.digest(arguments));
        let logged = self
            .layer
            .arguments
            .then_some(arguments)
            .flatten()
            .map(shown);
        let principal = self.principal.as_ref();
        tracing::info!(
            target: TARGET,
            method = self.method.as_str(),
            name = shown(self.name.as_deref().unwrap_or("")),
            request_id = %self.request_id,
            principal = principal.map(Principal::id),
            oauth_client = principal.and_then(Principal::client_id),
            client = self.client.as_deref().map(client_name),
            transport = self.transport,
            arguments_digest = digest.as_deref(),
            arguments = logged.as_deref(),
            outcome,
            error_code,
            duration_ms = self.started.elapsed().as_secs_f64() * 1000.0,
            "audit"
        );
    }

    /// The keyed digest of the arguments, in a canonical form (object keys
    /// sorted, no whitespace), so that the same arguments written
    /// differently get the same digest.
    fn digest(&self, arguments: &str) -> String {
        let value: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
        let canonical = crate::mrtr::state::canonical_json(&value);
        let digest = self.layer.keys.audit_digest(&canonical);
        digest[..16].iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl Drop for Audit {
    fn drop(&mut self) {
        if !self.finished {
            self.emit("cancelled", None);
        }
    }
}

fn transport_name(source: &crate::RequestSource) -> &'static str {
    match source.transport() {
        crate::TransportKind::Stdio => "stdio",
        crate::TransportKind::Http => "http",
        _ => "in-process",
    }
}

/// Whether a `tools/call` result (as serialized) is a tool error.
fn is_tool_error(result: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Outcome {
        #[serde(rename = "isError", default)]
        is_error: bool,
    }
    serde_json::from_slice::<Outcome>(result).is_ok_and(|o| o.is_error)
}

/// A value from the client as an event shows it: cut to its first KiB.
fn shown(arguments: &str) -> String {
    if arguments.len() <= SHOWN_ARGUMENTS {
        return arguments.to_owned();
    }
    let mut cut = SHOWN_ARGUMENTS;
    while !arguments.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}... ({} bytes)", &arguments[..cut], arguments.len())
}

/// The client's self-reported name as an event shows it: cut to 64 bytes,
/// with control characters escaped (`\n`, `\u{1b}`), since the client
/// picks it and a subscriber that writes values raw must not get a line
/// break or a terminal escape from it. Not quoted: subscribers quote string
/// values themselves, and a quoted value came out as `client="\"name\""`.
fn client_name(name: &str) -> String {
    let mut cut = name.len().min(SHOWN_CLIENT);
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut shown = String::with_capacity(cut);
    for c in name[..cut].chars() {
        if c.is_control() {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    if cut < name.len() {
        shown.push_str(&format!("... ({} bytes)", name.len()));
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_arguments_are_cut() {
        let long = format!("\"{}\"", "é".repeat(600));
        let cut = shown(&long);
        assert!(cut.ends_with("... (1202 bytes)"), "{cut}");
        assert!(cut.len() < 1100);
        assert_eq!(shown("{}"), "{}");
    }

    #[test]
    fn client_names_are_escaped_and_cut_but_not_quoted() {
        assert_eq!(
            client_name("mcp-runtime-inspector"),
            "mcp-runtime-inspector"
        );
        assert_eq!(
            client_name("evil\nINFO mcp::audit: forged\u{1b}[2J"),
            r"evil\nINFO mcp::audit: forged\u{1b}[2J"
        );
        let long = "é".repeat(40);
        assert_eq!(
            client_name(&long),
            format!("{}... (80 bytes)", "é".repeat(32))
        );
    }

    #[test]
    fn tool_errors_are_read_from_the_result() {
        assert!(is_tool_error(
            br#"{"resultType":"complete","content":[],"isError":true}"#
        ));
        assert!(!is_tool_error(
            br#"{"resultType":"complete","content":[{"type":"text","text":"\"isError\":true"}]}"#
        ));
    }
}
