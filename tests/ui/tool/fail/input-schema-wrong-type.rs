use mcp_runtime::tool;

fn order_schema() -> String {
    "{}".to_owned()
}

/// Orders an item.
#[tool(input_schema = order_schema)]
fn order(item: String) -> String {
    item
}

/// Also orders an item.
#[tool(input_schema = "schema.json")]
fn order_again(item: String) -> String {
    item
}

fn main() {}
