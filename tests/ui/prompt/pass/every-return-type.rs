use std::borrow::Cow;
use std::fmt;

use mcp_runtime::{GetPromptResult, PromptError, PromptMessage, prompt};

#[derive(Debug)]
struct MyError;

impl fmt::Display for MyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("my error")
    }
}

/// Owned text.
#[prompt]
fn owned() -> String {
    String::new()
}

/// Static text.
#[prompt]
fn borrowed() -> &'static str {
    ""
}

/// Either.
#[prompt]
fn cow() -> Cow<'static, str> {
    Cow::Borrowed("")
}

/// One message.
#[prompt]
fn message() -> PromptMessage {
    PromptMessage::assistant("Ready.")
}

/// A conversation.
#[prompt]
fn messages() -> Vec<PromptMessage> {
    vec![
        PromptMessage::user("Hi."),
        PromptMessage::assistant("Hello."),
    ]
}

/// The full result.
#[prompt]
fn full() -> GetPromptResult {
    GetPromptResult::new([PromptMessage::user("Go.")]).with_description("A prompt")
}

/// Fallible with a `String` error.
#[prompt]
fn fallible_string() -> Result<String, String> {
    Err("no".to_owned())
}

/// Fallible with a custom error, asynchronously.
#[prompt]
async fn fallible_custom() -> Result<Vec<PromptMessage>, MyError> {
    Err(MyError)
}

/// Fallible with a boxed error.
#[prompt]
fn fallible_boxed() -> Result<GetPromptResult, Box<dyn std::error::Error>> {
    Ok(GetPromptResult::new([]))
}

/// Fallible with the prompt's own error: an invalid argument.
#[prompt]
fn fallible_argument(days: u32) -> Result<String, PromptError> {
    if days == 0 {
        return Err(PromptError::invalid_argument("days", "at least one day"));
    }
    Ok(format!("{days} days"))
}

/// Fallible with the prompt's own error, asynchronously, around messages.
#[prompt]
async fn fallible_prompt_error() -> Result<Vec<PromptMessage>, PromptError> {
    Err(PromptError::failed("no messages"))
}

/// Through a type alias.
type Text = String;

/// Returns an alias.
#[prompt]
fn aliased() -> Text {
    Text::new()
}

fn main() {}
