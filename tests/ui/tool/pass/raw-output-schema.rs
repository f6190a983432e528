//! A hand-written output schema, for a tool that writes its own
//! `structuredContent`.

use mcp_runtime::{CallToolResult, Content, tool};
use serde_json::{Value, json};

fn receipt_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"item": {"type": "string"}, "total": {"type": "number", "minimum": 0}},
        "required": ["item", "total"]
    })
}

/// Issues a receipt.
#[tool(output_schema = receipt_schema, annotations(read_only))]
fn receipt(item: String) -> CallToolResult {
    CallToolResult::success([Content::text(format!("{item}: 3.50"))])
        .with_structured_content(json!({"item": item, "total": 3.5}))
}

fn main() {}
