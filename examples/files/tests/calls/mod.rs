//! The params of the example's calls, shared by the tests that make them.

use mcp_test_support::meta_with;
use serde_json::{Value, json};

/// The params of a `write_file` call of `content` to `path`, from a client
/// that can answer questions, with `extra` params (the answers) added.
pub(crate) fn write(path: &str, content: &str, extra: Value) -> Value {
    let mut params = json!({
        "name": "write_file",
        "arguments": {"path": path, "content": content},
        "_meta": meta_with(json!({"elicitation": {}})),
    });
    if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
        params.extend(extra.clone());
    }
    params
}
