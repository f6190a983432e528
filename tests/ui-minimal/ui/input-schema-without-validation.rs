use mcp_runtime::tool;
use serde_json::{Value, json};

fn order_schema() -> Value {
    json!({"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]})
}

/// Orders an item.
#[tool(input_schema = order_schema)]
fn order(item: String) -> String {
    item
}

fn main() {}
