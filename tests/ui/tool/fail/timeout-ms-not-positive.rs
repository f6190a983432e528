use mcp_runtime::tool;

/// Zero would time out every call.
#[tool(timeout_ms = 0)]
fn zero() -> String {
    String::new()
}

/// Negative.
#[tool(timeout_ms = -5)]
fn negative() -> String {
    String::new()
}

/// Milliseconds are whole.
#[tool(timeout_ms = 2.5)]
fn fractional() -> String {
    String::new()
}

/// Too large for a `u64`.
#[tool(timeout_ms = 18446744073709551616)]
fn huge() -> String {
    String::new()
}

fn main() {}
