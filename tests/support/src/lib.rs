//! Helpers for tests across the workspace: validating wire messages against
//! the vendored `schema.json` of revision 2026-07-28, and building requests
//! with the `_meta` every modern request carries.

pub mod apps;
pub mod http;
pub mod legacy;
pub mod redis;
pub mod stdio;

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde_json::{Value, json};

/// The vendored spec schema.
pub fn spec_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        serde_json::from_str(include_str!("../../../spec/2026-07-28/schema.json"))
            .expect("schema.json parses")
    })
}

/// Validates `instance` against `#/$defs/{definition}` of the spec schema,
/// panicking with every violation if it does not conform.
pub fn assert_valid(definition: &str, instance: &Value) {
    assert_valid_in("2026-07-28", spec_schema(), definition, instance);
}

/// The Server Card schema (SEP-2127, draft), vendored in
/// `tests/support/server-card/` with its examples.
pub fn server_card_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        serde_json::from_str(include_str!("../server-card/schema.json"))
            .expect("server-card/schema.json parses")
    })
}

/// How `card` breaks the Server Card schema's `ServerCard` definition
/// (empty when it conforms).
pub fn server_card_violations(card: &Value) -> Vec<String> {
    violations_in("server-card", server_card_schema(), "ServerCard", card)
}

/// The vendored schema of the Tasks extension.
pub fn tasks_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        serde_json::from_str(include_str!("../../../spec/extensions/tasks/schema.json"))
            .expect("the tasks schema parses")
    })
}

/// Validates `instance` against `#/$defs/{definition}` of the Tasks
/// extension's schema (`CreateTaskResult`, `GetTaskResult`,
/// `TaskStatusNotification`, ...), panicking with every violation.
pub fn assert_valid_task(definition: &str, instance: &Value) {
    assert_valid_in("tasks", tasks_schema(), definition, instance);
}

/// The Skills extension's wire shapes, written from SEP-2640 (which ships
/// no schema yet): `tests/support/skills-schema.json`.
pub fn skills_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        serde_json::from_str(include_str!("../skills-schema.json"))
            .expect("the skills schema parses")
    })
}

/// Validates `instance` against `#/$defs/{definition}` of the Skills
/// schema (`ListSkillsResult`, `GetSkillResult`, `ReadDirectoryResult`,
/// `SkillsSettings`), panicking with every violation.
pub fn assert_valid_skills(definition: &str, instance: &Value) {
    assert_valid_in("skills", skills_schema(), definition, instance);
}

/// Validates `instance` against `#/$defs/{definition}` of `schema` (the
/// schema of `revision`), panicking with every violation.
pub(crate) fn assert_valid_in(
    revision: &'static str,
    schema: &'static Value,
    definition: &str,
    instance: &Value,
) {
    let errors = violations_in(revision, schema, definition, instance);
    assert!(
        errors.is_empty(),
        "not a valid {revision} `{definition}`:\n{}\ninstance: {instance:#}",
        errors.join("\n")
    );
}

/// How `instance` breaks `#/$defs/{definition}` of the spec schema (empty
/// when it conforms), for tests that count failures rather than stop at
/// the first.
pub fn violations(definition: &str, instance: &Value) -> Vec<String> {
    violations_in("2026-07-28", spec_schema(), definition, instance)
}

/// Every violation of `#/$defs/{definition}` of `schema` (the schema of
/// `revision`) by `instance`. Validators are compiled once per revision and
/// definition.
fn violations_in(
    revision: &'static str,
    schema: &'static Value,
    definition: &str,
    instance: &Value,
) -> Vec<String> {
    type Validators = Mutex<HashMap<(&'static str, String), &'static jsonschema::Validator>>;
    static VALIDATORS: OnceLock<Validators> = OnceLock::new();
    let validators = VALIDATORS.get_or_init(Default::default);
    let validator = *validators
        .lock()
        .unwrap()
        .entry((revision, definition.to_owned()))
        .or_insert_with(|| {
            let mut schema = schema.clone();
            assert!(
                schema["$defs"].get(definition).is_some(),
                "the {revision} schema has no definition `{definition}`"
            );
            schema["$ref"] = json!(format!("#/$defs/{definition}"));
            Box::leak(Box::new(
                jsonschema::draft202012::new(&schema).expect("schema.json compiles"),
            ))
        });
    validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// Validates a response frame: results against `result_definition` (for
/// example `CallToolResultResponse`), errors against `JSONRPCErrorResponse`
/// and, for MCP's own codes, their specific error definitions.
pub fn assert_valid_response(result_definition: &str, response: &Value) {
    if response.get("error").is_some() {
        assert_valid_error(response);
    } else {
        assert_valid(result_definition, response);
    }
}

/// Validates an error response, including the code-specific definitions.
pub fn assert_valid_error(response: &Value) {
    assert_valid("JSONRPCErrorResponse", response);
    let specific = match response["error"]["code"].as_i64() {
        Some(-32020) => Some("HeaderMismatchError"),
        Some(-32021) => Some("MissingRequiredClientCapabilityError"),
        Some(-32022) => Some("UnsupportedProtocolVersionError"),
        _ => None,
    };
    if let Some(definition) = specific {
        assert_valid(definition, response);
    }
    let error_definition = match response["error"]["code"].as_i64() {
        Some(-32700) => Some("ParseError"),
        Some(-32600) => Some("InvalidRequestError"),
        Some(-32601) => Some("MethodNotFoundError"),
        Some(-32602) => Some("InvalidParamsError"),
        Some(-32603) => Some("InternalError"),
        _ => None,
    };
    if let Some(definition) = error_definition {
        assert_valid(definition, &response["error"]);
    }
}

/// Validates a notification frame by its method.
pub fn assert_valid_notification(notification: &Value) {
    let definition = match notification["method"].as_str() {
        Some("notifications/progress") => "ProgressNotification",
        Some("notifications/message") => "LoggingMessageNotification",
        Some("notifications/tools/list_changed") => "ToolListChangedNotification",
        Some("notifications/prompts/list_changed") => "PromptListChangedNotification",
        Some("notifications/resources/list_changed") => "ResourceListChangedNotification",
        Some("notifications/resources/updated") => "ResourceUpdatedNotification",
        Some("notifications/subscriptions/acknowledged") => "SubscriptionsAcknowledgedNotification",
        other => panic!("unexpected notification method {other:?}"),
    };
    assert_valid(definition, notification);
}

/// The `_meta` of a plain modern request with the given client capabilities.
pub fn meta_with(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "test-client", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// The `_meta` of a plain modern request with no client capabilities.
pub fn meta() -> Value {
    meta_with(json!({}))
}

/// A request with `params` plus the standard `_meta`.
pub fn request(id: impl Into<Value>, method: &str, mut params: Value) -> String {
    if params.get("_meta").is_none() {
        params["_meta"] = meta();
    }
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params}).to_string()
}

/// `tools/call` of `name` with `arguments`.
pub fn call_tool(id: impl Into<Value>, name: &str, arguments: Value) -> String {
    request(
        id,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
}

/// Parses a frame.
pub fn parse(frame: &str) -> Value {
    serde_json::from_str(frame).unwrap_or_else(|e| panic!("not JSON ({e}): {frame}"))
}

/// The spec's example `examples/{path}` (for example
/// `CallToolResult/result-with-structured-content.json`).
pub fn spec_example(path: &str) -> Value {
    let full = format!(
        "{}/../../spec/2026-07-28/examples/{path}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"));
    serde_json::from_str(&text).expect("example parses")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_examples_validate_and_broken_messages_do_not() {
        assert_valid(
            "CallToolResult",
            &spec_example("CallToolResult/result-with-structured-content.json"),
        );
        assert_valid(
            "UnsupportedProtocolVersionError",
            &spec_example("UnsupportedProtocolVersionError/unsupported-version.json"),
        );
        let missing_result_type = json!({"content": []});
        assert!(
            std::panic::catch_unwind(|| assert_valid("CallToolResult", &missing_result_type))
                .is_err()
        );
    }
}

/// What `tracing` logs on this thread while the capture's guard lives, as
/// the default formatter writes it (no colours).
#[derive(Clone, Debug, Default)]
pub struct LogCapture(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl LogCapture {
    /// Starts capturing this thread's log lines; they stop when the guard
    /// is dropped.
    pub fn start() -> (LogCapture, tracing::subscriber::DefaultGuard) {
        let capture = LogCapture::default();
        let writer = capture.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        (capture, tracing::subscriber::set_default(subscriber))
    }

    /// Everything logged so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl std::io::Write for LogCapture {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
