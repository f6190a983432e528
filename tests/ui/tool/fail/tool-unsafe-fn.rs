use mcp_runtime::tool;

/// Reads memory.
#[tool]
unsafe fn peek(address: u64) -> String {
    address.to_string()
}

fn main() {}
