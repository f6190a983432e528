//! `#[tool(input_schema = f)]`: a hand-written schema is published exactly
//! as written and enforced (feature `schema-validation`: the workspace's
//! test run has it), before the parameters parse the call.
#![cfg(all(feature = "client", feature = "schema-validation"))]

use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_runtime::testing::TestClient;
use mcp_runtime::tool;
use mcp_test_support::assert_valid;
use serde_json::{Value, json};

/// How many times the server called [`schema`].
static CALLS: AtomicUsize = AtomicUsize::new(0);

fn schema() -> Value {
    CALLS.fetch_add(1, Ordering::SeqCst);
    written()
}

fn written() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"size": {"$anchor": "size", "type": "string", "enum": ["S", "L"]}},
        "properties": {"size": {"$ref": "#/$defs/size"}, "note": {"type": "string"}},
        "required": ["size"],
        "if": {"properties": {"size": {"const": "L"}}},
        "then": {"required": ["note"]},
        "additionalProperties": false
    })
}

#[derive(Debug, serde::Deserialize)]
enum Size {
    S,
    L,
}

/// Orders a shirt.
#[tool(input_schema = schema)]
fn shirt(size: Size, note: Option<String>) -> String {
    format!("{size:?} {}", note.unwrap_or_default())
}

#[tokio::test]
async fn the_schema_is_published_verbatim_and_enforced() {
    let mut client = TestClient::new();
    let tools = client.list_tools().await;
    let listed = serde_json::to_value(&tools[0]).unwrap();
    assert_valid("Tool", &listed);
    assert_eq!(listed["inputSchema"], written());
    // Checked at startup and kept: what is listed is what was checked.
    assert_eq!(client.list_tools().await, tools);
    assert_eq!(CALLS.load(Ordering::SeqCst), 1);
    client
        .call_tool("shirt", json!({"size": "L", "note": "blue"}))
        .await
        .assert_text("L blue");
    client
        .call_tool("shirt", json!({"size": "M"}))
        .await
        .assert_tool_error(
            r#"Invalid arguments for tool shirt: `size`: "M" is not one of "S" or "L""#,
        );
    client
        .call_tool("shirt", json!({"size": "S", "colour": "red"}))
        .await
        .assert_tool_error("Invalid arguments for tool shirt: `colour`: unknown field `colour`: the schema allows no other fields");
    // What the parameters alone would take: `if`/`then` needs a note for L.
    client
        .call_tool("shirt", json!({"size": "L"}))
        .await
        .assert_tool_error("Invalid arguments for tool shirt: missing field `note`");
}
