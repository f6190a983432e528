//! Tools that return each kind of content block (`tools-call-*`
//! scenarios), plus the tool error and the progress tool.

use std::time::Duration;

use mcp_runtime::{Content, Progress, ResourceContents, tool};

use crate::assets::{PIXEL_PNG, SILENCE_WAV};

/// Returns one text block. The suite calls it without an `arguments` key,
/// which the runtime reads as `{}`.
#[tool(annotations(read_only, open_world = false))]
fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Returns one image block: a 1x1 PNG.
#[tool(annotations(read_only, open_world = false))]
fn test_image_content() -> Content {
    Content::image(PIXEL_PNG, "image/png")
}

/// Returns one audio block: a short silent WAV.
#[tool(annotations(read_only, open_world = false))]
fn test_audio_content() -> Content {
    Content::audio(SILENCE_WAV, "audio/wav")
}

/// Returns one embedded text resource.
#[tool(annotations(read_only, open_world = false))]
fn test_embedded_resource() -> Content {
    Content::resource(
        ResourceContents::text(
            "test://embedded-resource",
            "This is an embedded resource content.",
        )
        .with_mime_type("text/plain"),
    )
}

/// Returns text, an image and an embedded JSON resource in one result.
#[tool(annotations(read_only, open_world = false))]
fn test_multiple_content_types() -> Vec<Content> {
    vec![
        Content::text("Multiple content types test:"),
        Content::image(PIXEL_PNG, "image/png"),
        Content::resource(
            ResourceContents::text(
                "test://mixed-content-resource",
                r#"{"test":"data","value":123}"#,
            )
            .with_mime_type("application/json"),
        ),
    ]
}

/// Always fails: a tool execution error (`isError: true`) the model can
/// read, not a JSON-RPC error.
#[tool(annotations(read_only, open_world = false))]
fn test_error_handling() -> Result<String, String> {
    Err("This tool intentionally returns an error for testing".to_owned())
}

/// Reports progress 0, 50 and 100 (of 100), 50 ms apart, then finishes.
/// Progress goes out only when the request carries a `progressToken`, on
/// the same response stream, before the result.
#[tool(annotations(read_only, open_world = false))]
async fn test_tool_with_progress(#[ctx] progress: Progress) -> &'static str {
    for step in [0.0, 50.0, 100.0] {
        progress.report_total(step, 100.0);
        if step < 100.0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    "Progress reported: 0, 50 and 100 of 100."
}
