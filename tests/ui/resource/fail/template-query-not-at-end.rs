use mcp_runtime::resource;

/// Open issues, with the query in the middle of the template.
#[resource("tracker://issues{?state}/open")]
fn issues(state: Option<String>) -> String {
    state.unwrap_or_default()
}

fn main() {}
