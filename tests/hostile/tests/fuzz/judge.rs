//! Whether an answer is well formed: one JSON-RPC 2.0 message (a response
//! with exactly one of `result` and `error`, or a notification), conforming
//! to the spec's `schema.json` for the method asked; and what a request
//! lets its answer be, read the way the server reads it.

use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};

/// What a sent message says about its answer, read leniently, as the server
/// reads an envelope: members other than the one asked for may hold
/// anything, even text a full parse refuses (a lone surrogate), and a
/// repeated member makes the whole unreadable.
pub(crate) struct Sent {
    /// `id`, if the message is an object with one (`null` included).
    pub(crate) id: Option<Value>,
    pub(crate) method: Option<String>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl Sent {
    pub(crate) fn read(message: &[u8]) -> Sent {
        #[derive(Deserialize)]
        struct Id {
            #[serde(default, deserialize_with = "present")]
            id: Option<Value>,
        }
        #[derive(Deserialize)]
        struct Method {
            #[serde(default, deserialize_with = "present")]
            method: Option<Value>,
        }
        // Only objects are messages (a struct would also read an array).
        let object = message.trim_ascii_start().first() == Some(&b'{');
        let id = object
            .then(|| serde_json::from_slice::<Id>(message).ok())
            .flatten()
            .and_then(|read| read.id);
        let method = object
            .then(|| serde_json::from_slice::<Method>(message).ok())
            .flatten()
            .and_then(|read| read.method?.as_str().map(str::to_owned));
        Sent { id, method }
    }

    /// The id an answer must carry (or `null`), if the message has a valid
    /// one: a string or a 64-bit signed integer.
    pub(crate) fn answerable(&self) -> Option<&Value> {
        self.id.as_ref().filter(|id| id.is_string() || id.is_i64())
    }
}

/// A well-formed message from the server.
#[derive(Debug)]
pub(crate) enum Message {
    /// A response: its id (`Null` when absent) and, for an error, the code.
    Response {
        id: Value,
        code: Option<i64>,
    },
    Notification,
}

/// Reads one message the server sent and checks it; `method_of` gives the
/// method of the request an id answers, so that a result is checked
/// against that method's result schema.
pub(crate) fn message(
    bytes: &[u8],
    method_of: impl Fn(&Value) -> Option<String>,
) -> Result<Message, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8".to_owned())?;
    let value: Value = serde_json::from_str(text).map_err(|error| format!("not JSON ({error})"))?;
    let Value::Object(members) = &value else {
        return Err("not a JSON object".into());
    };
    if members.get("jsonrpc") != Some(&json!("2.0")) {
        return Err("`jsonrpc` is not \"2.0\"".into());
    }
    if members.contains_key("method") {
        return notification(&value);
    }
    let id = members.get("id").cloned().unwrap_or(Value::Null);
    if !(id.is_null() || id.is_string() || id.is_i64()) {
        return Err("`id` is not a string, an integer or null".into());
    }
    if let Some(extra) = members
        .keys()
        .find(|key| !matches!(key.as_str(), "jsonrpc" | "id" | "result" | "error"))
    {
        return Err(format!("an unexpected member `{extra}`"));
    }
    match (members.get("result"), members.get("error")) {
        (Some(_), None) if id.is_null() => Err("a result without an id".into()),
        (Some(Value::Object(_)), None) => {
            let definition =
                method_of(&id).map_or("JSONRPCResultResponse", |method| result_definition(&method));
            conform(definition, &value)?;
            Ok(Message::Response { id, code: None })
        }
        (None, Some(Value::Object(error))) => {
            let code = error
                .get("code")
                .and_then(Value::as_i64)
                .ok_or("the error's `code` is not an integer")?;
            if !error.get("message").is_some_and(Value::is_string) {
                return Err("the error's `message` is not a string".into());
            }
            conform("JSONRPCErrorResponse", &value)?;
            if let Some(definition) = error_definition(code) {
                conform(definition, &value)?;
            }
            Ok(Message::Response {
                id,
                code: Some(code),
            })
        }
        (Some(_), Some(_)) => Err("both `result` and `error`".into()),
        (None, None) => Err("neither `result` nor `error`".into()),
        _ => Err("a `result` or `error` that is not an object".into()),
    }
}

fn notification(value: &Value) -> Result<Message, String> {
    if value.get("id").is_some() {
        return Err("a request from the server (it sends none in this era)".into());
    }
    let definition = match value["method"].as_str() {
        Some("notifications/progress") => "ProgressNotification",
        Some("notifications/message") => "LoggingMessageNotification",
        other => return Err(format!("an unexpected notification {other:?}")),
    };
    conform(definition, value)?;
    Ok(Message::Notification)
}

fn result_definition(method: &str) -> &'static str {
    match method {
        "server/discover" => "DiscoverResultResponse",
        "tools/list" => "ListToolsResultResponse",
        "tools/call" => "CallToolResultResponse",
        "resources/list" => "ListResourcesResultResponse",
        "resources/templates/list" => "ListResourceTemplatesResultResponse",
        "resources/read" => "ReadResourceResultResponse",
        "prompts/list" => "ListPromptsResultResponse",
        "prompts/get" => "GetPromptResultResponse",
        "completion/complete" => "CompleteResultResponse",
        _ => "JSONRPCResultResponse",
    }
}

/// The definition a response with MCP's own error `code` must also meet.
fn error_definition(code: i64) -> Option<&'static str> {
    Some(match code {
        -32020 => "HeaderMismatchError",
        -32021 => "MissingRequiredClientCapabilityError",
        -32022 => "UnsupportedProtocolVersionError",
        _ => return None,
    })
}

/// Checks `instance` against `#/$defs/{definition}` of the spec's schema
/// (the first three violations, if any).
fn conform(definition: &str, instance: &Value) -> Result<(), String> {
    let errors = mcp_test_support::violations(definition, instance);
    match errors.is_empty() {
        true => Ok(()),
        false => Err(format!(
            "not a valid `{definition}`: {}",
            errors[..errors.len().min(3)].join("; ")
        )),
    }
}
