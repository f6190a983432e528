//! The function stays as written: ordinary code calls it with its own
//! signature, `.await` included, and `#[ctx]`/`#[arg]` leave no trace.

use mcp_runtime::{Context, resource};

/// The readme.
#[resource("memo://readme")]
fn readme() -> &'static str {
    "# Readme"
}

/// A note.
#[resource("memo://notes/{id}")]
pub async fn note(id: u64) -> Option<String> {
    Some(id.to_string())
}

/// A tag.
#[resource("memo://tags/{tag}")]
fn tag(#[arg(rename = "tag")] name: String, #[ctx] ctx: &Context) -> String {
    format!("{name} {}", ctx.method())
}

#[allow(dead_code)] // compiled, not run: the point is that these calls type-check
async fn callers(ctx: &Context) {
    let text: &'static str = readme();
    let found: Option<String> = note(1).await;
    let tagged: String = tag("x".to_owned(), ctx);
    let pointer: fn() -> &'static str = readme;
    let _ = (text, found, tagged, pointer);
}

fn main() {}
