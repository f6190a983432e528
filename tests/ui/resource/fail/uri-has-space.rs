use mcp_runtime::resource;

/// The shopping list.
#[resource("memo://shopping list")]
fn shopping() -> &'static str {
    "milk"
}

fn main() {}
