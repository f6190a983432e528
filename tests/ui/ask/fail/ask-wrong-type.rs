use mcp_runtime::{Elicitation, SamplingResult, tool};

/// Mixes up its asks.
#[tool]
fn confused(
    #[elicit("Name?")] name: String,
    #[sample(prompt = "Hi")] reply: Elicitation<String>,
    #[roots] roots: Vec<String>,
    #[elicit_url(message = "Go", url = "https://x")] visit: SamplingResult,
) -> String {
    let _ = (reply, roots, visit);
    name
}

fn main() {}
