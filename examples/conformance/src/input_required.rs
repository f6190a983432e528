//! Multi round-trip requests (`input-required-result-*` scenarios): tools
//! and a prompt that ask the client for input through `input_required`
//! results.
//!
//! Asks declared on parameters resolve together in one round, keyed by the
//! parameter's name, before the body runs. Asks made from the body through
//! `Input` take one round each, which is what a conversation over several
//! rounds needs, and can depend on the request's capabilities.

use std::cell::Cell;
use std::time::{SystemTime, UNIX_EPOCH};

use mcp_runtime::{
    ElicitForm, Elicitation, Input, PromptMessage, Root, SamplingRequest, SamplingResult, prompt,
    tool,
};

/// The user's name.
#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct NameForm {
    /// Your name.
    name: String,
}

/// A favourite colour.
#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct ColorForm {
    /// Your favourite colour.
    color: String,
}

/// A yes/no confirmation.
#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Confirm {
    /// Whether to go ahead.
    ok: bool,
}

/// Context for a prompt.
#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct ContextForm {
    /// What the prompt should be about.
    context: String,
}

/// Greets the user by name, asking for the name first (key `user_name`).
#[tool(annotations(read_only, open_world = false))]
fn test_input_required_result_elicitation(
    #[elicit("What is your name?")] user_name: Elicitation<NameForm>,
) -> Result<String, String> {
    match user_name {
        Elicitation::Accepted(NameForm { name }) => Ok(format!("Hello, {name}!")),
        Elicitation::Declined | Elicitation::Cancelled => {
            Err("The user did not give a name.".to_owned())
        }
    }
}

/// Asks the client's model a question (key `capital_question`) and returns
/// its answer.
#[tool(annotations(read_only, open_world = false))]
fn test_input_required_result_sampling(
    #[sample(prompt = "What is the capital of France?", max_tokens = 100)]
    capital_question: SamplingResult,
) -> String {
    format!("The model answered: {}", capital_question.text())
}

/// Lists the client's roots (key `client_roots`).
#[tool(annotations(read_only, open_world = false))]
fn test_input_required_result_list_roots(#[roots] client_roots: Vec<Root>) -> String {
    let uris: Vec<&str> = client_roots.iter().map(|root| root.uri.as_str()).collect();
    format!("The client has {} root(s): {}", uris.len(), uris.join(", "))
}

/// Asks for a confirmation in a later round than the one that started the
/// request, and reports `state-ok` when what the first round remembered
/// came back in the sealed `requestState`.
#[tool(annotations(read_only, open_world = false))]
async fn test_input_required_result_request_state(#[ctx] input: Input) -> Result<String, String> {
    // The closure runs only when nothing came back from an earlier round.
    let computed_now = Cell::new(false);
    let started_ms = input
        .remember(|| async {
            computed_now.set(true);
            unix_millis()
        })
        .await;
    let confirm = input.elicit::<Confirm>("Please confirm").await;
    if !matches!(confirm, Elicitation::Accepted(Confirm { ok: true })) {
        return Err("Not confirmed.".to_owned());
    }
    if computed_now.get() {
        return Err("Confirmed, but no requestState came back from the first round.".to_owned());
    }
    Ok(format!(
        "state-ok: confirmed; the request started at {started_ms} ms (Unix time)."
    ))
}

/// Asks for a name, a greeting from the client's model and the client's
/// roots, all in one round (keys `user_name`, `greeting`, `client_roots`).
#[tool(annotations(read_only, open_world = false))]
fn test_input_required_result_multiple_inputs(
    #[elicit("What is your name?")] user_name: Elicitation<NameForm>,
    #[sample(prompt = "Generate a greeting", max_tokens = 50)] greeting: SamplingResult,
    #[roots] client_roots: Vec<Root>,
) -> String {
    let name = user_name
        .accepted()
        .map_or_else(|| "stranger".to_owned(), |form| form.name);
    format!(
        "{} {name}! ({} root(s) shared)",
        greeting.text(),
        client_roots.len()
    )
}

/// Asks for a name, then (in a second round) a favourite colour.
#[tool(annotations(read_only, open_world = false))]
async fn test_input_required_result_multi_round(#[ctx] input: Input) -> Result<String, String> {
    let Some(NameForm { name }) = input
        .elicit::<NameForm>("Step 1: What is your name?")
        .await
        .accepted()
    else {
        return Err("The user did not give a name.".to_owned());
    };
    let Some(ColorForm { color }) = input
        .elicit::<ColorForm>("Step 2: What is your favorite color?")
        .await
        .accepted()
    else {
        return Err("The user did not give a colour.".to_owned());
    };
    Ok(format!("{name} likes {color}."))
}

/// Asks for a confirmation. Its `requestState` is sealed, so a client
/// that alters it gets a JSON-RPC error, never a result.
#[tool(annotations(read_only, open_world = false))]
fn test_input_required_result_tampered_state(
    #[elicit("Please confirm")] confirm: Elicitation<Confirm>,
) -> &'static str {
    match confirm {
        Elicitation::Accepted(Confirm { ok: true }) => "Confirmed.",
        _ => "Not confirmed.",
    }
}

/// Asks for input only in ways this request's client declared: the user
/// by elicitation if it can, else its model by sampling, else its roots.
#[tool(annotations(read_only, open_world = false))]
async fn test_input_required_result_capabilities(#[ctx] input: Input) -> String {
    if input.can_elicit() {
        return match input.elicit::<NameForm>("What is your name?").await {
            Elicitation::Accepted(NameForm { name }) => format!("Hello, {name}!"),
            _ => "The user did not give a name.".to_owned(),
        };
    }
    if input.can_sample() {
        let request = SamplingRequest::new(100).user("What is the capital of France?");
        return format!("The model answered: {}", input.sample(request).await.text());
    }
    if input.can_list_roots() {
        return format!("The client has {} root(s).", input.roots().await.len());
    }
    "The client declared no way to answer questions, so none were asked.".to_owned()
}

/// A prompt built from context the user gives (key `user_context`).
#[prompt]
fn test_input_required_result_prompt(
    #[elicit("What context should the prompt use?")] user_context: Elicitation<ContextForm>,
) -> Result<PromptMessage, String> {
    match user_context {
        Elicitation::Accepted(ContextForm { context }) => Ok(PromptMessage::user(format!(
            "Answer with this context in mind: {context}"
        ))),
        Elicitation::Declined | Elicitation::Cancelled => {
            Err("The user gave no context.".to_owned())
        }
    }
}

fn unix_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
