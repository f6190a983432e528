//! Tools, prompts and resources have separate namespaces: one name may be
//! used by one of each in the same module.

use mcp_runtime::{prompt, resource, tool};

/// The tool.
#[tool]
fn review(topic: String) -> String {
    format!("Reviewed {topic}")
}

/// The prompt, with the tool's name.
#[prompt(name = "review")]
fn review_prompt(topic: String) -> String {
    format!("Please review {topic}")
}

/// The resource, with the tool's name.
#[resource("memo://review", name = "review")]
fn review_resource() -> &'static str {
    "How reviews work"
}

fn main() {}
