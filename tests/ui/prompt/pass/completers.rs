use mcp_runtime::{Completion, CompletionRequest, prompt};

/// A synchronous completer borrows the request.
fn topics(request: &CompletionRequest) -> Vec<String> {
    ["naming", "errors", "tests"]
        .into_iter()
        .filter(|t| t.starts_with(request.value()))
        .map(str::to_owned)
        .collect()
}

/// An asynchronous completer owns it.
async fn styles(request: CompletionRequest) -> Completion {
    let topic = request.resolved("topic").unwrap_or_default().to_owned();
    Completion::new([format!("{topic}: brief"), format!("{topic}: thorough")])
}

/// Static strings, fallibly.
async fn languages(_request: CompletionRequest) -> Result<Vec<&'static str>, std::io::Error> {
    Ok(vec!["rust", "python"])
}

/// Completers for required, optional and renamed arguments.
#[prompt(complete(topic = topics, style = styles), complete(lang = languages))]
fn review(
    topic: String,
    style: Option<String>,
    #[arg(rename = "lang")] language: String,
) -> String {
    format!("Review {topic} in {language} ({style:?})")
}

fn main() {}
