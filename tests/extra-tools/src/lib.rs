//! Tools that live in a library crate. A binary that links this crate
//! serves them without naming them anywhere.

use mcp_runtime::tool;

/// Reverses the text.
#[tool]
pub fn reverse(text: String) -> String {
    text.chars().rev().collect()
}

pub mod nested {
    //! Tools in a nested module register the same way.

    /// Upper-cases the text.
    #[mcp_runtime::tool(name = "library.shout")]
    pub async fn shout(text: String) -> String {
        text.to_uppercase()
    }
}
