use mcp_runtime::resource;

/// Issues by state and label, without a parameter for the label.
#[resource("tracker://issues{?state,label}")]
fn issues(state: Option<String>) -> String {
    state.unwrap_or_default()
}

fn main() {}
