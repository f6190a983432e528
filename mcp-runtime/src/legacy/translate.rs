//! Modern answers back into legacy shapes.
//!
//! The result objects of both eras are the same except for the members the
//! modern revision added at the top level (`resultType`, and the cache
//! hints `ttlMs`/`cacheScope` of lists); error codes differ where the
//! legacy revision had its own (resource not found is `-32002` there).

use serde_json::{Map, Value};

use crate::protocol::{ErrorObject, error_code};

/// The legacy code for "resource not found".
pub(crate) const RESOURCE_NOT_FOUND: i32 = -32002;

/// Top-level result members that only the modern revision defines (an
/// extension's own `resultType`, anything but `complete`, is its result's
/// content and stays).
const MODERN_ONLY: [&str; 2] = ["ttlMs", "cacheScope"];

/// What a modern answer turned out to be.
#[derive(Debug)]
pub(crate) enum Answer {
    /// A finished result, already in legacy shape.
    Complete(Map<String, Value>),
    /// The handler needs input: the asks by key, and the state to send
    /// back with the answers.
    InputRequired {
        requests: Map<String, Value>,
        state: Option<Value>,
    },
    /// An error, already in legacy terms.
    Error(ErrorObject),
}

/// Reads a modern response frame for a request of `method`.
pub(crate) fn answer(method: &str, frame: &[u8]) -> Answer {
    let Ok(Value::Object(mut frame)) = serde_json::from_slice::<Value>(frame) else {
        return Answer::Error(ErrorObject::internal_error());
    };
    if let Some(error) = frame.remove("error") {
        return Answer::Error(error_back(method, error));
    }
    let Some(Value::Object(mut result)) = frame.remove("result") else {
        return Answer::Error(ErrorObject::internal_error());
    };
    if result.get("resultType").and_then(Value::as_str) == Some("input_required") {
        let requests = match result.remove("inputRequests") {
            Some(Value::Object(requests)) => requests,
            _ => Map::new(),
        };
        return Answer::InputRequired {
            requests,
            state: result.remove("requestState"),
        };
    }
    if result.get("resultType").and_then(Value::as_str) == Some("complete") {
        result.remove("resultType");
    }
    for member in MODERN_ONLY {
        result.remove(member);
    }
    drop_non_object_structure(method, &mut result);
    Answer::Complete(result)
}

/// The legacy revisions type a tool's `outputSchema` and a result's
/// `structuredContent` as objects; the modern one lets a tool return any
/// JSON value (a number, an array). For legacy clients such a schema and
/// such content are left out: the text content still carries the value
/// (their SDKs refuse the whole list otherwise; found by the MCP
/// Inspector v1 against the quickstart's `divide`).
fn drop_non_object_structure(method: &str, result: &mut Map<String, Value>) {
    let is_object_schema =
        |schema: &Value| schema.get("type").and_then(Value::as_str) == Some("object");
    match method {
        "tools/list" => {
            let tools = result.get_mut("tools").and_then(Value::as_array_mut);
            for tool in tools.into_iter().flatten().filter_map(Value::as_object_mut) {
                if tool
                    .get("outputSchema")
                    .is_some_and(|s| !is_object_schema(s))
                {
                    tool.remove("outputSchema");
                }
            }
        }
        "tools/call"
            if result
                .get("structuredContent")
                .is_some_and(|c| !c.is_object()) =>
        {
            result.remove("structuredContent");
        }
        _ => {}
    }
}

/// A modern error object in legacy terms.
fn error_back(method: &str, error: Value) -> ErrorObject {
    let Ok(mut error) = serde_json::from_value::<ErrorObject>(error) else {
        return ErrorObject::internal_error();
    };
    // The modern revision reports an unknown resource as `-32602` with the
    // URI in `data`; the legacy revisions used `-32002`.
    let names_uri = error
        .data
        .as_ref()
        .is_some_and(|data| data.get("uri").is_some());
    if method == "resources/read" && error.code == error_code::INVALID_PARAMS && names_uri {
        error.code = RESOURCE_NOT_FOUND;
    }
    error
}

/// An ask of an `input_required` result as the legacy server-to-client
/// request for `version`: `(method, params)`.
pub(crate) fn ask_to_request(ask: &Value, version: &str) -> Option<(String, Option<Value>)> {
    let method = ask.get("method")?.as_str()?.to_owned();
    let mut params = ask.get("params").cloned();
    // `mode` arrived with URL elicitation in 2025-11-25; older clients only
    // know forms and may refuse a member they do not expect.
    if method == "elicitation/create"
        && version != "2025-11-25"
        && let Some(Value::Object(params)) = &mut params
        && params.get("mode").and_then(Value::as_str) == Some("form")
    {
        params.remove("mode");
    }
    Some((method, params))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn frame(value: Value) -> Vec<u8> {
        serde_json::to_vec(&value).unwrap()
    }

    #[test]
    fn modern_members_are_dropped() {
        let Answer::Complete(result) = answer(
            "tools/list",
            &frame(json!({"jsonrpc": "2.0", "id": 1, "result": {
                "resultType": "complete", "tools": [], "ttlMs": 5, "cacheScope": "public"
            }})),
        ) else {
            panic!()
        };
        assert_eq!(Value::Object(result), json!({"tools": []}));
        let Answer::Complete(result) = answer(
            "com.example/ping",
            &frame(json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "pong", "n": 1}})),
        ) else {
            panic!()
        };
        assert_eq!(
            Value::Object(result),
            json!({"resultType": "pong", "n": 1}),
            "an extension's own result type is content"
        );
    }

    #[test]
    fn structure_that_is_not_an_object_is_left_out_for_legacy_clients() {
        let list = json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "tools": [
            {"name": "divide", "inputSchema": {"type": "object"}, "outputSchema": {"type": "number"}},
            {"name": "add", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}}
        ]}});
        let Answer::Complete(result) = answer("tools/list", &frame(list)) else {
            panic!()
        };
        assert_eq!(
            Value::Object(result),
            json!({"tools": [
                {"name": "divide", "inputSchema": {"type": "object"}},
                {"name": "add", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}}
            ]})
        );
        for (structured, kept) in [
            (json!(0.5), false),
            (json!([1]), false),
            (json!({"sum": 1}), true),
        ] {
            let call = json!({"jsonrpc": "2.0", "id": 1, "result": {
                "resultType": "complete", "content": [], "structuredContent": structured
            }});
            let Answer::Complete(result) = answer("tools/call", &frame(call)) else {
                panic!()
            };
            assert_eq!(
                result.contains_key("structuredContent"),
                kept,
                "{structured}"
            );
        }
    }

    #[test]
    fn resource_not_found_gets_the_legacy_code() {
        let modern = json!({"jsonrpc": "2.0", "id": 1, "error": {
            "code": -32602, "message": "Resource not found: x://y", "data": {"uri": "x://y"}
        }});
        let Answer::Error(error) = answer("resources/read", &frame(modern.clone())) else {
            panic!()
        };
        assert_eq!(error.code, -32002);
        let Answer::Error(error) = answer("prompts/get", &frame(modern)) else {
            panic!()
        };
        assert_eq!(error.code, -32602);
    }

    #[test]
    fn input_required_is_recognised() {
        let Answer::InputRequired { requests, state } = answer(
            "tools/call",
            &frame(json!({"jsonrpc": "2.0", "id": 1, "result": {
                "resultType": "input_required",
                "inputRequests": {"k": {"method": "roots/list"}},
                "requestState": "s"
            }})),
        ) else {
            panic!()
        };
        assert_eq!(requests["k"]["method"], "roots/list");
        assert_eq!(state, Some(json!("s")));
    }

    #[test]
    fn form_mode_is_dropped_for_clients_before_it() {
        let ask =
            json!({"method": "elicitation/create", "params": {"mode": "form", "message": "m"}});
        let (_, params) = ask_to_request(&ask, "2025-06-18").unwrap();
        assert_eq!(params, Some(json!({"message": "m"})));
        let (_, params) = ask_to_request(&ask, "2025-11-25").unwrap();
        assert_eq!(params, Some(json!({"mode": "form", "message": "m"})));
    }
}
