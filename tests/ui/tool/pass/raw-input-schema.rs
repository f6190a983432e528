//! A hand-written input schema: parameters need only `Deserialize`.

use mcp_runtime::tool;
use serde_json::{Value, json};

fn order_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"item": {"type": "string"}, "count": {"type": "integer", "minimum": 1}},
        "required": ["item"],
        "additionalProperties": false
    })
}

#[derive(serde::Deserialize)]
struct Count(u32);

/// Orders an item.
#[tool(input_schema = order_schema)]
fn order(
    /// Still documented in the code.
    item: String,
    #[arg(description = "ignored: the schema is written by hand")] count: Option<Count>,
) -> String {
    format!("{item} x{}", count.map_or(1, |c| c.0))
}

fn main() {}
