use std::borrow::Cow;
use std::fmt;

use mcp_runtime::{CallToolResult, Content, Json, Structured, tool};

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

#[derive(Debug)]
struct MyError;

impl fmt::Display for MyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("my error")
    }
}

/// Owned text.
#[tool]
fn owned() -> String {
    String::new()
}

/// Static text.
#[tool]
fn borrowed() -> &'static str {
    ""
}

/// Either.
#[tool]
fn cow() -> Cow<'static, str> {
    Cow::Borrowed("")
}

/// One block.
#[tool]
fn content() -> Content {
    Content::text("one")
}

/// Several blocks.
#[tool]
fn contents() -> Vec<Content> {
    vec![Content::text("one"), Content::text("two")]
}

/// The full result.
#[tool]
fn full() -> CallToolResult {
    CallToolResult::success([Content::text("done")])
}

/// Structured output.
#[tool]
fn json() -> Json<Sum> {
    Json(Sum { sum: 1 })
}

/// Structured output with chosen text.
#[tool]
fn structured() -> Structured<Sum> {
    Structured::new(Sum { sum: 1 }).with_text("1")
}

/// Fallible with a `String` error.
#[tool]
fn fallible_string() -> Result<String, String> {
    Err("no".to_owned())
}

/// Fallible with a custom error.
#[tool]
async fn fallible_custom() -> Result<Json<Sum>, MyError> {
    Err(MyError)
}

/// Fallible with a boxed error.
#[tool]
fn fallible_boxed() -> Result<Vec<Content>, Box<dyn std::error::Error>> {
    Ok(Vec::new())
}

/// Through a type alias.
type Text = String;

/// Returns an alias.
#[tool]
fn aliased() -> Text {
    Text::new()
}

fn main() {}
