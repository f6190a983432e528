use mcp_runtime::tool;

#[doc = include_str!("include-doc.md")]
#[tool]
fn define(word: String) -> String {
    word
}

/// Intro line from a doc comment.
#[doc = include_str!("include-doc.md")]
/// Closing line.
#[tool]
fn define_more(word: String) -> String {
    word
}

fn main() {}
