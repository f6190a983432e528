use mcp_runtime::{CompletionRequest, prompt};

fn topics(_request: &CompletionRequest) -> Vec<String> {
    vec!["naming".to_owned()]
}

/// Overridden by `description`.
#[prompt(
    name = "code-review",
    title = "Code review",
    description = "Reviews a topic.",
    icon(
        src = "https://example.com/review.png",
        mime_type = "image/png",
        sizes = ["48x48"],
        theme = "light"
    ),
    icon(src = "data:image/svg+xml;base64,PHN2Zy8+", sizes = ["any"], theme = "dark"),
    meta = r#"{"com.example/owner": "docs"}"#,
    complete(topic = topics),
    crate = ::mcp_runtime
)]
fn review(topic: String) -> String {
    format!("Review {topic}")
}

/// Prompt names may use characters tool names may not.
#[prompt(name = "résumé/review:v2")]
fn resume() -> &'static str {
    "Review my résumé."
}

fn main() {}
