//! Schemas that cannot lie: a hand-written input schema is enforced on
//! every call (feature `schema-validation`), and a hand-written output
//! schema checks `structuredContent` in debug builds and tests (feature
//! `debug-checks`); this crate turns both on.

use mcp_runtime::{CallToolResult, Content, ServerBuilder, tool};
use mcp_test_support::{assert_valid, assert_valid_error, call_tool, parse, request};
use serde_json::{Value, json};

fn order_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "item": {"type": "string", "minLength": 1},
            "count": {"type": "integer", "minimum": 1, "maximum": 10},
            "lines": {"type": "array", "items": {
                "type": "object",
                "properties": {"sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]+$"}},
                "required": ["sku"]
            }}
        },
        "required": ["item"],
        "additionalProperties": false
    })
}

/// Orders an item. The parameters are looser than the schema: only the
/// schema stands between a bad call and this function.
#[tool(input_schema = order_schema)]
fn order(item: String, count: Option<i64>, lines: Option<Vec<Value>>) -> String {
    format!(
        "{item} x{} ({} lines)",
        count.unwrap_or(1),
        lines.map_or(0, |l| l.len())
    )
}

fn receipt_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"item": {"type": "string"}, "total": {"type": "number", "minimum": 0}},
        "required": ["item", "total"]
    })
}

/// Issues a receipt, whose `structuredContent` the output schema describes
/// (a negative total breaks it).
#[tool(output_schema = receipt_schema, annotations(read_only))]
fn receipt(item: String, total: f64) -> CallToolResult {
    CallToolResult::success([Content::text(format!("{item}: {total}"))])
        .with_structured_content(json!({"item": item, "total": total}))
}

async fn call(name: &str, arguments: Value) -> Value {
    let server = ServerBuilder::new("schemas", "1.0.0").build().unwrap();
    let response = server.exchange(call_tool(1, name, arguments)).await;
    parse(&response.response.unwrap())
}

async fn tool_error(arguments: Value) -> String {
    let response = call("order", arguments).await;
    assert_valid("CallToolResultResponse", &response);
    assert_eq!(response["result"]["isError"], true, "{response}");
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_hand_written_input_schema_is_enforced_naming_the_field() {
    // The call the audit found reaching a handler whose schema required
    // something else.
    assert_eq!(
        tool_error(json!({"name": "x"})).await,
        "Invalid arguments for tool order: `name`: unknown field `name`: the schema allows no other fields"
    );
    assert_eq!(
        tool_error(json!({})).await,
        "Invalid arguments for tool order: missing field `item`"
    );
    assert_eq!(
        tool_error(json!({"item": "pen", "count": 11})).await,
        "Invalid arguments for tool order: `count`: 11 is greater than the maximum of 10"
    );
    assert_eq!(
        tool_error(json!({"item": "pen", "lines": [{"sku": "PEN-1"}, {"sku": "pen"}]})).await,
        r#"Invalid arguments for tool order: `lines[1].sku`: "pen" does not match "^[A-Z]{3}-[0-9]+$""#
    );
    let ok = call(
        "order",
        json!({"item": "pen", "count": 2, "lines": [{"sku": "PEN-1"}]}),
    )
    .await;
    assert_valid("CallToolResultResponse", &ok);
    assert_eq!(
        ok["result"],
        json!({"resultType": "complete", "content": [{"type": "text", "text": "pen x2 (1 lines)"}],
               "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "schemas", "version": "1.0.0"}}})
    );
}

#[tokio::test]
async fn hand_written_schemas_are_published_as_written() {
    let server = ServerBuilder::new("schemas", "1.0.0").build().unwrap();
    let list = parse(
        &server
            .exchange(request(1, "tools/list", json!({})))
            .await
            .response
            .unwrap(),
    );
    assert_valid("ListToolsResultResponse", &list);
    let tools = list["result"]["tools"].as_array().unwrap();
    assert_eq!(tools[0]["name"], "order");
    assert_eq!(tools[0]["inputSchema"], order_schema());
    assert_eq!(tools[1]["name"], "receipt");
    assert_eq!(tools[1]["outputSchema"], receipt_schema());
}

#[tokio::test]
async fn a_hand_written_output_schema_checks_structured_content() {
    let ok = call("receipt", json!({"item": "pen", "total": 3.5})).await;
    assert_valid("CallToolResultResponse", &ok);
    assert_eq!(
        ok["result"]["structuredContent"],
        json!({"item": "pen", "total": 3.5})
    );
    let broken = call("receipt", json!({"item": "pen", "total": -1})).await;
    assert_valid_error(&broken);
    assert_eq!(broken["error"]["code"], -32603);
    assert_eq!(
        broken["error"]["message"],
        "Internal error: the structuredContent of tool receipt does not match its outputSchema at /total: -1.0 is less than the minimum of 0 (checked in debug builds)"
    );
}

#[tokio::test]
async fn a_runtime_tool_with_a_hand_written_schema_is_enforced_too() {
    use mcp_runtime::catalog::{Catalog, RuntimeTool};
    let catalog = Catalog::new();
    let server = ServerBuilder::new("schemas", "1.0.0")
        .catalog(&catalog)
        .build()
        .unwrap();
    let proxy = RuntimeTool::with_schema(
        "proxy.order",
        order_schema(),
        |args: Value, _ctx| async move { format!("forwarded {args}") },
    );
    catalog.add_tool(proxy).unwrap();
    let call = |arguments| server.exchange(call_tool(1, "proxy.order", arguments));
    let refused = parse(
        &call(json!({"item": "pen", "count": 0}))
            .await
            .response
            .unwrap(),
    );
    assert_valid("CallToolResultResponse", &refused);
    assert_eq!(refused["result"]["isError"], true);
    assert_eq!(
        refused["result"]["content"][0]["text"],
        "Invalid arguments for tool proxy.order: `count`: 0 is less than the minimum of 1"
    );
    let forwarded = parse(&call(json!({"item": "pen"})).await.response.unwrap());
    assert_eq!(
        forwarded["result"]["content"][0]["text"],
        r#"forwarded {"item":"pen"}"#
    );
    // A schema that does not compile is refused when the tool is added.
    let broken = RuntimeTool::with_schema(
        "broken",
        json!({"type": "object", "minProperties": "two"}),
        |_: Value, _ctx| async { "never" },
    );
    let error = catalog.add_tool(broken).unwrap_err().to_string();
    assert!(
        error.starts_with("`broken`: the schema does not compile"),
        "{error}"
    );
}
