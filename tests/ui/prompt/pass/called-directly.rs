//! The function stays as written: ordinary code calls it with its own
//! signature, `.await` included, and `#[ctx]`/`#[arg]` leave no trace.

use mcp_runtime::{Context, PromptMessage, prompt};

/// Reviews.
#[prompt]
fn review(topic: String, style: Option<String>) -> String {
    format!("{topic} {style:?}")
}

/// Reviews later.
#[prompt]
pub async fn review_later(
    #[arg(rename = "subject")] topic: String,
) -> Result<PromptMessage, String> {
    Ok(PromptMessage::user(topic))
}

/// Uses the context.
#[prompt]
fn with_context(#[ctx] ctx: &Context, topic: String) -> String {
    format!("{topic} {}", ctx.method())
}

#[allow(dead_code)] // compiled, not run: the point is that these calls type-check
async fn callers(ctx: &Context) {
    let text: String = review("naming".to_owned(), None);
    let later: Result<PromptMessage, String> = review_later("errors".to_owned()).await;
    let with: String = with_context(ctx, "tests".to_owned());
    let pointer: fn(String, Option<String>) -> String = review;
    let _ = (text, later, with, pointer);
}

fn main() {}
