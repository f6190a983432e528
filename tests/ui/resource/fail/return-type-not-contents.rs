use mcp_runtime::resource;

/// A counter.
#[resource("memo://counter")]
fn counter() -> i32 {
    42
}

fn main() {}
