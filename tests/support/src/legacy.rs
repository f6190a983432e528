//! Validation against the vendored `schema.json` of revision 2025-11-25,
//! for what the legacy adapter sends to initialize-handshake clients.

use std::sync::OnceLock;

use serde_json::Value;

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
