use mcp_runtime::tool;

/// A flag given a value, then a list: each reported, the rest checked.
#[tool(blocking = true, name = "scan")]
fn scan() -> String {
    "scanned".to_owned()
}

/// The same in parentheses.
#[tool(blocking(pool = "io"))]
fn index() -> String {
    "indexed".to_owned()
}

fn main() {}
