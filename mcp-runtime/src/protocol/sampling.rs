//! Sampled content (`sampling/createMessage` requests and results): the
//! blocks of a message, read the same way by the client and by the
//! server's multi round-trip requests.

use serde::{Deserialize, Serialize};

use super::JsonObject;
use super::content::{AudioContent, ImageContent, TextContent};

/// One block of a sampled message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SamplingContent {
    /// Text.
    Text(TextContent),
    /// An image.
    Image(ImageContent),
    /// Audio.
    Audio(AudioContent),
    /// The model wants to call one of the request's tools.
    ToolUse(JsonObject),
    /// A tool's result, in follow-up requests.
    ToolResult(JsonObject),
}

/// A message's content as the wire has it, one block or a list: always a
/// list here.
pub(crate) fn one_or_many<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Vec<SamplingContent>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        Many(Vec<SamplingContent>),
        One(SamplingContent),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::Many(many) => many,
        OneOrMany::One(one) => vec![one],
    })
}

/// The text of a message's text blocks, joined.
pub(crate) fn text_of(blocks: &[SamplingContent]) -> String {
    blocks
        .iter()
        .filter_map(|block| match block {
            SamplingContent::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect()
}
