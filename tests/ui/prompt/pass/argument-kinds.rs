use std::str::FromStr;

use mcp_runtime::{PromptValue, prompt};

/// A local `FromStr` type made a prompt argument with `impl PromptValue`.
enum Tone {
    Kind,
    Blunt,
}

impl FromStr for Tone {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "kind" => Ok(Tone::Kind),
            "blunt" => Ok(Tone::Blunt),
            other => Err(format!("unknown tone {other}")),
        }
    }
}

impl PromptValue for Tone {}

/// Every way of declaring an argument.
#[prompt]
#[allow(clippy::too_many_arguments, clippy::needless_pass_by_value)]
fn review(
    /// What to review.
    topic: String,
    /// How to phrase it, if it matters.
    style: Option<String>,
    /// At most this many points.
    limit: u32,
    depth: Option<i64>,
    strict: bool,
    #[arg(rename = "maxLength", description = "Longest answer.")] max_length: Option<usize>,
    #[arg(rename = "marker")] bullet: char,
    ratio: f64,
    tone: Option<Tone>,
    r#type: String,
    mut notes: String,
    _unused: Option<bool>,
    #[allow(unused_variables)] extra: Option<u8>,
) -> String {
    notes.push('.');
    let tone = match tone {
        Some(Tone::Kind) | None => "kind",
        Some(Tone::Blunt) => "blunt",
    };
    format!(
        "{topic} {style:?} {limit} {depth:?} {strict} {max_length:?} {bullet} {ratio} {tone} {type} {notes}",
        type = r#type
    )
}

/// No arguments at all.
#[prompt]
fn greeting() -> &'static str {
    "Say hello."
}

fn main() {}
