use mcp_runtime::resource;

/// Issues by label, continuing a query that never started.
#[resource("tracker://issues{&label}")]
fn issues(label: Option<String>) -> String {
    label.unwrap_or_default()
}

fn main() {}
