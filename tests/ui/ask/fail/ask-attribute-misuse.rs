use mcp_runtime::{Elicitation, ElicitForm, Root, SamplingResult, tool};

#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Confirm {
    ok: bool,
}

/// Every way to get an ask attribute wrong.
#[tool]
fn misuse(
    #[elicit] a: Elicitation<Confirm>,
    #[elicit(msg = "x")] b: Elicitation<Confirm>,
    #[elicit_url(message = "only a message")] c: mcp_runtime::UrlElicitation,
    #[sample(max_tokens = 0, prompt = "p")] d: SamplingResult,
    #[sample(max_tokens = 5)] e: SamplingResult,
    #[roots(all)] f: Vec<Root>,
    #[elicit("x")]
    #[roots]
    g: Vec<Root>,
    #[ctx]
    #[roots]
    h: Vec<Root>,
    #[arg(rename = "i2")]
    #[roots]
    i: Vec<Root>,
) -> String {
    let _ = (a, b, c, d, e, f, g, h, i);
    String::new()
}

fn main() {}
