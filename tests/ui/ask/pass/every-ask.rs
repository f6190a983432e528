//! Every declared ask, on every kind of handler, plus dynamic asks.

use mcp_runtime::{
    ElicitForm, Elicitation, Input, Root, SamplingRequest, SamplingResult, UrlElicitation,
    prompt, resource, tool,
};

#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
enum Size {
    Small,
    Large,
}

#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Order {
    /// How many.
    #[schemars(range(min = 1, max = 10))]
    count: u8,
    price: f64,
    gift: Option<bool>,
    #[schemars(email)]
    email: String,
    size: Size,
    extras: Vec<Size>,
    note: Option<String>,
}

/// Orders with every kind of ask.
#[tool]
async fn order(
    item: String,
    #[elicit("How many {item}?")] order: Elicitation<Order>,
    #[elicit(message = "Confirm {item}")] again: Elicitation<Order>,
    #[elicit_url(message = "Pay for {item}", url = "https://pay.example.com/{item}")]
    paid: UrlElicitation,
    #[sample(prompt = "Describe {item}", max_tokens = 64, system = "Be brief about {item}.")]
    description: SamplingResult,
    #[sample(prompt = "Name it")] name: SamplingResult,
    #[roots] roots: Vec<Root>,
    #[ctx] input: Input,
) -> String {
    let _ = (order, again, paid, description, name, roots);
    let more = input
        .sample(SamplingRequest::new(10).system("s").user("u").temperature(0.5))
        .await;
    let form = input.elicit::<Order>("more?").await;
    let _ = (more, form, input.roots().await, input.elicit_url("m", "https://x").await);
    item
}

/// A prompt that asks.
#[prompt]
fn ask_prompt(topic: String, #[elicit("About {topic}?")] order: Elicitation<Order>) -> String {
    let _ = order;
    topic
}

/// A resource that asks.
#[resource("shop://orders/{id}")]
fn ask_resource(id: u32, #[roots] roots: Vec<Root>) -> String {
    format!("{id} {}", roots.len())
}

fn main() {}
