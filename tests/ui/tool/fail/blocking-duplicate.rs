use mcp_runtime::tool;

/// Given twice.
#[tool(blocking, name = "scan", blocking)]
fn scan() -> String {
    "scanned".to_owned()
}

fn main() {}
