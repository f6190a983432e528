//! The quickstart server's tools, resources and prompts. They live in a
//! library so that tests link them too (`tests/test_client.rs`); the binary
//! in `main.rs` only serves them.

use std::time::Duration;

use mcp_runtime::{ElicitForm, Elicitation, Json, Progress, prompt, resource, tool};

/// Echoes the text back.
#[tool(annotations(read_only, open_world = false))]
pub fn echo(
    /// The text to echo.
    text: String,
) -> String {
    text
}

#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Sum {
    /// `a + b`.
    pub sum: i64,
}

/// Adds two integers.
#[tool(annotations(read_only, idempotent, open_world = false))]
pub fn add(a: i64, b: i64) -> Result<mcp_runtime::Structured<Sum>, String> {
    let sum = a
        .checked_add(b)
        .ok_or("the sum overflows a 64-bit integer")?;
    Ok(mcp_runtime::Structured::new(Sum { sum }).with_text(sum.to_string()))
}

/// Counts down from `from`, reporting progress every `delay_ms`
/// milliseconds, then says "liftoff".
#[tool(annotations(read_only, open_world = false))]
pub async fn countdown(
    /// Where to start (at most 100).
    from: u8,
    /// Milliseconds between steps (default 100, at most 1000).
    delay_ms: Option<u16>,
    #[ctx] progress: Progress,
) -> Result<String, String> {
    if from > 100 {
        return Err(format!("`from` must be at most 100, got {from}"));
    }
    let delay = Duration::from_millis(u64::from(delay_ms.unwrap_or(100).min(1000)));
    for done in 0..from {
        progress.report_message(
            f64::from(done),
            Some(f64::from(from)),
            &format!("{}...", from - done),
        );
        tokio::time::sleep(delay).await;
    }
    progress.report_total(f64::from(from), f64::from(from));
    Ok("liftoff".to_owned())
}

/// Divides `a` by `b`. Dividing by zero is a tool error the model can read.
#[tool(annotations(read_only, idempotent, open_world = false))]
pub fn divide(a: f64, b: f64) -> Result<Json<f64>, String> {
    if b == 0.0 {
        return Err("cannot divide by zero".to_owned());
    }
    Ok(Json(a / b))
}

/// The confirmation form `confirm_delete` shows the user.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema, ElicitForm)]
pub struct Confirm {
    /// Delete it for good?
    pub confirm: bool,
}

/// Deletes a file once the user confirms (a demo: nothing is touched).
///
/// The `#[elicit]` parameter is answered by the user before the body runs:
/// the first call returns `input_required` with the form, the retry carries
/// the answer, and the body runs once.
#[tool(annotations(destructive, idempotent, open_world = false))]
pub fn confirm_delete(
    /// The file to delete.
    path: String,
    #[elicit("Delete {path}?")] answer: Elicitation<Confirm>,
) -> Result<String, String> {
    match answer {
        Elicitation::Accepted(Confirm { confirm: true }) => Ok(format!("deleted {path}")),
        Elicitation::Accepted(Confirm { confirm: false }) => {
            Err(format!("kept {path}: deletion not confirmed"))
        }
        Elicitation::Declined | Elicitation::Cancelled => {
            Err(format!("kept {path}: the user declined"))
        }
    }
}

/// What this server is and how to use it.
#[resource("memo://readme", mime_type = "text/plain")]
pub fn readme() -> &'static str {
    "The quickstart server: tools to echo, add, divide and count down, memo \
     notes at memo://notes/{id}, and a `review` prompt."
}

/// A memo note by number (1 to 3).
#[resource("memo://notes/{id}", name = "note", mime_type = "text/plain")]
pub fn note(id: u32) -> Option<String> {
    let text = match id {
        1 => "Buy milk.",
        2 => "Call the plumber about the leak.",
        3 => "Ship the quickstart.",
        _ => return None,
    };
    Some(format!("Note {id}: {text}"))
}

/// Asks for a careful review of a topic.
#[prompt(title = "Review")]
pub fn review(
    /// What to review.
    topic: String,
) -> String {
    format!("Please review {topic} carefully: what works, what does not, and what to change first.")
}

/// What the server tells clients about itself.
pub const INSTRUCTIONS: &str = "A demo server: echo text, add integers, divide numbers, count down, \
     delete files after confirmation; read memo notes; get a review prompt.";
