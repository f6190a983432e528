//! What the middleware tests share: the exact answers each layer gives,
//! checked the same way whatever carries them.

#![allow(dead_code, reason = "each test binary uses its own part")]

use mcp_test_support::{assert_valid_error, assert_valid_response, call_tool, request};
use serde_json::{Value, json};

/// A `tools/call` request with `id`.
pub(crate) fn call(id: u64, name: &str, arguments: Value) -> String {
    call_tool(id, name, arguments)
}

/// The stats method's request.
pub(crate) fn stats(id: u64, reset: bool) -> String {
    request(id, middleware::STATS_METHOD, json!({ "reset": reset }))
}

/// The answer to a call past `sleep`'s `TimeoutLayer`.
pub(crate) fn sleep_timed_out(id: u64) -> Value {
    error(
        id,
        -31_002,
        "Request timed out: tool sleep ran longer than its time limit",
    )
}

/// The answer to a call past `nap`'s own `timeout_ms`.
pub(crate) fn nap_timed_out(id: u64) -> Value {
    error(
        id,
        -31_002,
        "Request timed out: tool nap ran longer than its limit of 300 ms",
    )
}

/// The answer to a `render_now` the load shedder refused.
pub(crate) fn render_refused(id: u64) -> Value {
    error(
        id,
        -31_001,
        "Server busy: tool render_now is at its concurrency limit; retry later",
    )
}

/// The stats method's answer to `reset`.
pub(crate) fn reset_refused(id: u64) -> Value {
    error(id, -32_602, "this server does not reset its counts")
}

pub(crate) fn error(id: u64, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// A tool's text result, without `_meta`.
pub(crate) fn text_result(id: u64, text: &str, is_error: bool) -> Value {
    let mut result = json!({
        "resultType": "complete",
        "content": [{"type": "text", "text": text}],
    });
    if is_error {
        result["isError"] = json!(true);
    }
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// `response` with the result's `serverInfo` taken out of `_meta` (and
/// `_meta` itself when that leaves it empty), after checking the whole
/// against the schema: answers are compared without the server's version.
pub(crate) fn checked(response: Value, result: &str) -> Value {
    if response.get("error").is_some() {
        assert_valid_error(&response);
        return response;
    }
    assert_valid_response(result, &response);
    let mut response = response;
    if let Some(meta) = response["result"]["_meta"].as_object_mut() {
        meta.remove("io.modelcontextprotocol/serverInfo");
        if meta.is_empty() {
            response["result"].as_object_mut().unwrap().remove("_meta");
        }
    }
    response
}

/// A reports tool's stamped result.
pub(crate) fn stamped(id: u64, text: &str) -> Value {
    let mut answer = text_result(id, text, false);
    answer["result"]["_meta"] = json!({"example.com/layer": "reports"});
    answer
}
