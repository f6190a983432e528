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

use std::time::Instant;

use serde_json::Value;

use super::envelope::{Request, json_str};
use super::{Dispatcher, ResultJson};
use crate::context::Scope;
use crate::protocol::ErrorObject;
use crate::protocol::method::Method;
use crate::security::Principal;

/// The `tracing` target of audit events.
pub(crate) const TARGET: &str = "mcp::audit";

/// How much of the arguments an event shows when they are logged.
const SHOWN_ARGUMENTS: usize = 1024;

/// How much of the client's self-reported name an event shows.
const SHOWN_CLIENT: usize = 64;

/// One audited request, from its start; the event is written when it is
/// finished, or when it is dropped unfinished (the client cancelled).
pub(super) struct Audit<'a> {
    dispatcher: &'a Dispatcher,
    method: Method,
    name: Option<String>,
    arguments: Option<&'a str>,
    principal: Option<Principal>,
    client: Option<String>,
    transport: &'static str,
    request: &'a Request,
    started: Instant,
    finished: bool,
}

impl<'a> Audit<'a> {
    /// Starts auditing `request` if it is a tool call, a resource read or
    /// a prompt get and a subscriber listens to `mcp::audit`. Out of line:
    /// most requests only pay for the check.
    pub(super) fn start(
        dispatcher: &'a Dispatcher,
        method: Method,
        request: &'a Request,
        scope: &Scope,
    ) -> Option<Box<Audit<'a>>> {
        if !matches!(
            method,
            Method::ToolsCall | Method::ResourcesRead | Method::PromptsGet
        ) || !tracing::enabled!(target: TARGET, tracing::Level::INFO)
        {
            return None;
        }
        Audit::started(dispatcher, method, request, scope)
    }

    #[inline(never)]
    fn started(
        dispatcher: &'a Dispatcher,
        method: Method,
        request: &'a Request,
        scope: &Scope,
    ) -> Option<Box<Audit<'a>>> {
        let head = request.head();
        let name = match method {
            Method::ResourcesRead => &head.uri,
            _ => &head.name,
        };
        Some(Box::new(Audit {
            dispatcher,
            method,
            name: request.member(name).and_then(json_str).map(Into::into),
            arguments: request.member(&head.arguments),
            principal: scope.source.principal().cloned(),
            client: scope.meta.client_info.as_ref().map(|c| c.name.clone()),
            transport: transport_name(scope),
            request,
            started: Instant::now(),
            finished: false,
        }))
    }

    /// Writes the event for the request's answer.
    #[inline(never)]
    pub(super) fn finish(&mut self, answer: &Result<ResultJson, ErrorObject>) {
        self.finished = true;
        let answer = answer.as_ref().map(ResultJson::json);
        let (outcome, code) = match answer {
            Err(error) => ("error", Some(error.code)),
            Ok(result) if result.starts_with(br#"{"resultType":"input_required""#) => {
                ("input_required", None)
            }
            Ok(result) if self.method == Method::ToolsCall && is_tool_error(result) => {
                ("tool_error", None)
            }
            Ok(_) => ("ok", None),
        };
        self.emit(outcome, code);
    }

    fn emit(&self, outcome: &str, error_code: Option<i32>) {
        let digest = self.arguments.map(|arguments| self.digest(arguments));
        let logged = self
            .dispatcher
            .settings
            .audit_arguments
            .then_some(self.arguments)
            .flatten()
            .map(shown);
        let principal = self.principal.as_ref();
        tracing::info!(
            target: TARGET,
            method = self.method.name(),
            name = shown(self.name.as_deref().unwrap_or("")),
            request_id = %self.request.id,
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
        let digest = self.dispatcher.sealer.keys.audit_digest(&canonical);
        digest[..16].iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl Drop for Audit<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.emit("cancelled", None);
        }
    }
}

fn transport_name(scope: &Scope) -> &'static str {
    match scope.source.transport() {
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
