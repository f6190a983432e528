use mcp_runtime::{CallToolResult, tool};

fn receipt_schema() -> &'static str {
    "{}"
}

/// Issues a receipt.
#[tool(output_schema = receipt_schema)]
fn receipt(item: String) -> CallToolResult {
    CallToolResult::success([item.into()])
}

/// Also issues a receipt.
#[tool(output_schema = "receipt.json")]
fn receipt_again(item: String) -> CallToolResult {
    CallToolResult::success([item.into()])
}

/// Issues two receipts.
#[tool(output_schema = receipt_schema, output_schema = receipt_schema)]
fn receipts(item: String) -> CallToolResult {
    CallToolResult::success([item.into()])
}

fn main() {}
