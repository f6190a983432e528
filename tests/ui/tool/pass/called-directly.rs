//! The function stays as written: ordinary code calls it with its own
//! signature, `.await` included, and `#[ctx]`/`#[arg]` leave no trace.

use mcp_runtime::{Progress, tool};

/// Adds.
#[tool]
fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

/// Adds later.
#[tool]
pub async fn add_later(#[arg(rename = "left")] a: i64, b: i64) -> Result<String, String> {
    Ok((a + b).to_string())
}

/// Reports progress.
#[tool]
async fn with_progress(#[ctx] progress: Progress) -> &'static str {
    progress.report(1.0);
    "done"
}

#[allow(dead_code)] // compiled, not run: the point is that these calls type-check
async fn callers() {
    let sum: String = add(1, 2);
    let later: Result<String, String> = add_later(1, 2).await;
    let pointer: fn(i64, i64) -> String = add;
    let future = with_progress;
    let _ = (sum, later, pointer, future);
}

fn main() {}
