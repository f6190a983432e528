//! A user crate with the strictest lints we know of. If any macro expansion
//! triggers a warning here, the workspace build (and clippy in CI) fails.
#![deny(warnings)]
#![deny(clippy::all, clippy::pedantic)]
#![deny(unused_qualifications, unused_results, unreachable_pub, missing_docs)]
#![deny(missing_debug_implementations, unsafe_code, trivial_casts)]
#![deny(unused_import_braces, unused_lifetimes, single_use_lifetimes)]
#![deny(rust_2018_idioms, let_underscore_drop, non_ascii_idents)]

use mcp_runtime::middleware::{self, BoxError, Invocation, Next, Output};
use mcp_runtime::{CancellationToken, Context, Json, Logger, Progress, prompt, resource, tool};

/// Structured output.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Total {
    /// The total.
    pub total: i64,
}

/// Sums numbers.
#[tool(title = "Sum", annotations(read_only, idempotent, open_world = false))]
#[must_use]
pub fn sum(
    /// The numbers to add.
    numbers: Vec<i64>,
) -> Json<Total> {
    Json(Total {
        total: numbers.into_iter().sum(),
    })
}

/// Uses every kind of context parameter.
///
/// # Errors
/// When the request was cancelled.
#[tool(
    name = "strict.context",
    icon(src = "https://example.com/icon.png", mime_type = "image/png", sizes = ["48x48"], theme = "dark"),
    meta = r#"{"com.example/kind": "demo"}"#
)]
pub async fn with_context(
    #[ctx] ctx: &Context,
    #[ctx] progress: Progress,
    #[ctx] logger: Logger,
    #[ctx] cancel: CancellationToken,
    #[arg(rename = "label", description = "A label.")] label_text: Option<String>,
) -> Result<String, String> {
    progress.report(1.0);
    logger.info("working");
    std::future::ready(()).await;
    if cancel.is_cancelled() {
        return Err("cancelled".to_owned());
    }
    Ok(format!(
        "{} {}",
        ctx.method(),
        label_text.unwrap_or_default()
    ))
}

/// Takes no arguments.
#[tool]
#[must_use]
pub fn nothing() -> &'static str {
    "nothing"
}

/// Passes every call on.
async fn pass(call: Invocation, next: Next<Invocation>) -> Result<Output, BoxError> {
    next.run(call).await
}

/// Has its own layer and time limit.
#[tool(layer = middleware::from_fn(pass), timeout_ms = 250)]
#[must_use]
pub fn limited() -> &'static str {
    "limited"
}

/// A resource with its own layer and time limit.
#[resource("strict://limited", layer = middleware::from_fn(pass), timeout_ms = 250)]
#[must_use]
pub fn limited_resource() -> &'static str {
    "limited"
}

/// A prompt with its own layer and time limit.
#[prompt(layer = middleware::from_fn(pass), timeout_ms = 250)]
#[must_use]
pub fn limited_prompt() -> &'static str {
    "limited"
}
