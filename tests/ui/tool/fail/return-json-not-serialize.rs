use mcp_runtime::{Json, tool};

struct Sum {
    sum: i64,
}

/// Adds two numbers.
#[tool]
fn add(a: i64, b: i64) -> Json<Sum> {
    Json(Sum { sum: a + b })
}

fn main() {}
