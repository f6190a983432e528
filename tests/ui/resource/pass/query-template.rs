use mcp_runtime::{CompletionRequest, resource};

/// Issues, filtered by any of the query's variables.
#[resource("tracker://issues{?state,label,limit}", complete(state = states))]
fn issues(state: Option<String>, label: Option<String>, limit: Option<u32>) -> String {
    format!("{state:?} {label:?} {limit:?}")
}

fn states(_request: &CompletionRequest) -> Vec<&'static str> {
    vec!["open", "closed"]
}

/// A path variable, then a query started and continued.
#[resource("tracker://{project}/issues{?state}{&label}")]
async fn project_issues(
    project: String,
    state: Option<String>,
    #[arg(rename = "label")] by_label: Option<String>,
) -> String {
    format!("{project} {state:?} {by_label:?}")
}

/// The query starts in the literal text.
#[resource("tracker://search?kind=issue{&q}")]
fn search(q: Option<String>) -> String {
    q.unwrap_or_default()
}

fn main() {}
