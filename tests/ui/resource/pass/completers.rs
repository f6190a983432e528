use mcp_runtime::{Completion, CompletionRequest, resource};

/// A synchronous completer borrows the request.
fn owners(request: &CompletionRequest) -> Vec<String> {
    ["alice", "bob"]
        .into_iter()
        .filter(|o| o.starts_with(request.value()))
        .map(str::to_owned)
        .collect()
}

/// An asynchronous completer owns it and may use the values already chosen.
async fn repositories(request: CompletionRequest) -> Completion {
    let owner = request.resolved("owner").unwrap_or("alice").to_owned();
    Completion::new([format!("{owner}/tools"), format!("{owner}/notes")])
        .with_total(2)
        .with_has_more(false)
}

/// Static strings.
fn branches(_request: &CompletionRequest) -> Vec<&'static str> {
    vec!["main", "dev"]
}

/// A fallible completer.
fn fallible(request: &CompletionRequest) -> Result<Vec<String>, String> {
    if request.argument() == "path" {
        Ok(vec!["src".to_owned()])
    } else {
        Err("unexpected argument".to_owned())
    }
}

mod completers {
    pub(crate) async fn numbers(_request: mcp_runtime::CompletionRequest) -> Vec<String> {
        vec!["1".to_owned()]
    }
}

/// Every variable with a completer, by plain name or path.
#[resource(
    "repo://{owner}/{name}/{branch}/{+path}",
    complete(owner = owners, name = repositories, branch = branches),
    complete(path = fallible)
)]
fn file(owner: String, name: String, branch: String, path: String) -> String {
    format!("{owner}/{name}@{branch}:{path}")
}

/// A completer through a module path.
#[resource("memo://notes/{id}", complete(id = completers::numbers))]
fn note(id: u64) -> String {
    id.to_string()
}

fn main() {}
