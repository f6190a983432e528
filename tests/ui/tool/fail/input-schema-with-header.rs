use mcp_runtime::tool;
use serde_json::{Value, json};

fn region_schema() -> Value {
    json!({"type": "object", "properties": {"region": {"type": "string"}}})
}

/// Deploys to a region.
#[tool(input_schema = region_schema)]
fn deploy(#[arg(header = "Region")] region: String) -> String {
    region
}

fn main() {}
