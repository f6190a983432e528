//! Validation against the vendored `schema.json` of revision 2025-11-25,
//! for what the legacy adapter sends to initialize-handshake clients, and
//! the requests of a legacy-era (session) client over Streamable HTTP.

use std::net::SocketAddr;
use std::sync::OnceLock;

use serde_json::Value;

use crate::http::{self, Reply};

/// The vendored 2025-11-25 schema.
pub fn legacy_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        serde_json::from_str(include_str!("../../../spec/2025-11-25/schema.json"))
            .expect("2025-11-25 schema.json parses")
    })
}

/// Validates `instance` against `#/$defs/{definition}` of the 2025-11-25
/// schema, panicking with every violation if it does not conform.
pub fn assert_valid_legacy(definition: &str, instance: &Value) {
    crate::assert_valid_in("2025-11-25", legacy_schema(), definition, instance);
}

/// Validates a legacy response frame: the envelope, then the result
/// against `result_definition` (such as `CallToolResult`), or the error.
pub fn assert_valid_legacy_response(result_definition: &str, response: &Value) {
    if response.get("error").is_some() {
        assert_valid_legacy("JSONRPCErrorResponse", response);
    } else {
        assert_valid_legacy("JSONRPCResultResponse", response);
        assert_valid_legacy(result_definition, &response["result"]);
    }
}

/// Validates a message the server sends a legacy client unprompted: a
/// notification or a server-to-client request, by its method.
pub fn assert_valid_legacy_message(message: &Value) {
    let definition = match message["method"].as_str() {
        Some("notifications/progress") => "ProgressNotification",
        Some("notifications/message") => "LoggingMessageNotification",
        Some("notifications/cancelled") => "CancelledNotification",
        Some("notifications/tools/list_changed") => "ToolListChangedNotification",
        Some("notifications/prompts/list_changed") => "PromptListChangedNotification",
        Some("notifications/resources/list_changed") => "ResourceListChangedNotification",
        Some("notifications/resources/updated") => "ResourceUpdatedNotification",
        Some("elicitation/create") => "ElicitRequest",
        Some("sampling/createMessage") => "CreateMessageRequest",
        Some("roots/list") => "ListRootsRequest",
        other => panic!("unexpected message to a legacy client: {other:?}"),
    };
    assert_valid_legacy(definition, message);
}

/// The headers every legacy-era POST carries: content type and accept.
pub fn base_headers() -> Vec<(String, String)> {
    vec![
        ("content-type".into(), "application/json".into()),
        (
            "accept".into(),
            "application/json, text/event-stream".into(),
        ),
    ]
}

/// The headers of a request in `session`, which negotiated `version`:
/// the base headers plus the session id and the protocol version.
pub fn session_headers(session: &str, version: &str) -> Vec<(String, String)> {
    let mut headers = base_headers();
    headers.push(("mcp-session-id".into(), session.into()));
    headers.push(("mcp-protocol-version".into(), version.into()));
    headers
}

/// POSTs `body` to `/mcp` with exactly `headers`, and reads the whole
/// response.
pub async fn post(address: SocketAddr, headers: &[(String, String)], body: &Value) -> Reply {
    http::request(address, "POST", "/mcp", headers, body.to_string()).await
}
