//! Prompts for the `prompts-*` and `completion-complete` scenarios.

use mcp_runtime::{CompletionRequest, Content, PromptMessage, ResourceContents, prompt};

use crate::assets::PIXEL_PNG;

/// A prompt without arguments.
#[prompt]
fn test_simple_prompt() -> &'static str {
    "This is a simple prompt for testing."
}

/// A prompt that repeats its two arguments back.
#[prompt(complete(arg1 = complete_arg1))]
fn test_prompt_with_arguments(
    /// First test argument.
    arg1: String,
    /// Second test argument.
    arg2: String,
) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

/// Suggestions for `arg1` of `test_prompt_with_arguments`.
fn complete_arg1(request: &CompletionRequest) -> Vec<&'static str> {
    ["test", "testValue1", "value"]
        .into_iter()
        .filter(|value| value.starts_with(request.value()))
        .collect()
}

/// A prompt that embeds the resource it is given, then asks about it.
#[prompt]
fn test_prompt_with_embedded_resource(
    /// URI of the resource to embed.
    #[arg(rename = "resourceUri")]
    resource_uri: String,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(Content::resource(
            ResourceContents::text(&resource_uri, "Embedded resource content for testing.")
                .with_mime_type("text/plain"),
        )),
        PromptMessage::user("Please process the embedded resource above."),
    ]
}

/// A prompt with an image, then a question about it.
#[prompt]
fn test_prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(Content::image(PIXEL_PNG, "image/png")),
        PromptMessage::user("Please analyze the image above."),
    ]
}
