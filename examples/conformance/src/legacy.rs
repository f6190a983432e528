//! What the 2025-11-25 scenarios (served through the legacy adapter) look
//! up besides the shared tools: logging during a call, sampling and
//! elicitation with a message from the arguments, the form shapes of
//! SEP-1034 (defaults) and SEP-1330 (enums), and a subscribable resource.
//! Nothing here is era-specific: modern clients get the same asks as
//! `input_required` results.

use std::time::Duration;

use mcp_runtime::{ElicitForm, Elicitation, Input, Logger, SamplingRequest, resource, tool};
use serde::{Deserialize, Serialize};

/// Logs three messages at `info`, 50 ms apart, then answers.
#[tool(annotations(read_only, open_world = false))]
async fn test_tool_with_logging(#[ctx] log: Logger) -> &'static str {
    log.info("Tool execution started");
    tokio::time::sleep(Duration::from_millis(50)).await;
    log.info("Tool processing data");
    tokio::time::sleep(Duration::from_millis(50)).await;
    log.info("Tool execution completed");
    "Logged three messages."
}

/// Asks the client's model to answer `prompt`.
#[tool(annotations(read_only, open_world = false))]
async fn test_sampling(
    /// The prompt to send to the model.
    prompt: String,
    #[ctx] input: Input,
) -> String {
    let reply = input.sample(SamplingRequest::new(100).user(prompt)).await;
    format!("LLM response: {}", reply.text())
}

/// The user's details.
#[derive(Serialize, Deserialize, schemars::JsonSchema, ElicitForm)]
struct UserDetails {
    /// User's response
    username: String,
    /// User's email address
    email: String,
}

/// Asks the user for a name and an email address, showing `message`.
#[tool(annotations(read_only, open_world = false))]
async fn test_elicitation(
    /// The message to show the user.
    message: String,
    #[ctx] input: Input,
) -> String {
    format!(
        "User response: {}",
        describe(input.elicit::<UserDetails>(message).await)
    )
}

/// An account status.
#[derive(Serialize, Deserialize, schemars::JsonSchema, ElicitForm)]
#[serde(rename_all = "lowercase")]
enum Status {
    Active,
    Inactive,
    Pending,
}

/// A form whose every field has a default (SEP-1034).
#[derive(Serialize, Deserialize, schemars::JsonSchema, ElicitForm)]
struct Defaults {
    #[serde(default = "default_name")]
    name: String,
    #[serde(default = "default_age")]
    age: i32,
    #[serde(default = "default_score")]
    score: f64,
    #[serde(default = "default_status")]
    status: Status,
    #[serde(default = "default_verified")]
    verified: bool,
}

fn default_name() -> String {
    "John Doe".to_owned()
}
fn default_age() -> i32 {
    30
}
fn default_score() -> f64 {
    95.5
}
fn default_status() -> Status {
    Status::Active
}
fn default_verified() -> bool {
    true
}

/// Asks for a form whose fields all have defaults.
#[tool(annotations(read_only, open_world = false))]
async fn test_elicitation_sep1034_defaults(#[ctx] input: Input) -> String {
    let answer = input.elicit::<Defaults>("Please review your details").await;
    format!("Elicitation completed: {}", describe(answer))
}

/// Options without titles.
#[derive(Serialize, Deserialize, schemars::JsonSchema, ElicitForm)]
#[serde(rename_all = "lowercase")]
enum Plain {
    Option1,
    Option2,
    Option3,
}

/// Options with titles (the doc comments).
#[derive(Serialize, Deserialize, schemars::JsonSchema, ElicitForm)]
#[serde(rename_all = "lowercase")]
enum Titled {
    /// First Option
    Value1,
    /// Second Option
    Value2,
    /// Third Option
    Value3,
}

/// Choices with titles, for the multi-select.
#[derive(Serialize, Deserialize, schemars::JsonSchema, ElicitForm)]
#[serde(rename_all = "lowercase")]
enum TitledChoice {
    /// First Choice
    Value1,
    /// Second Choice
    Value2,
    /// Third Choice
    Value3,
}

/// Options titled the deprecated way, with `enumNames`.
#[derive(Serialize, Deserialize, schemars::JsonSchema, ElicitForm)]
#[serde(rename_all = "lowercase")]
enum Legacy {
    Opt1,
    Opt2,
    Opt3,
}

/// Every enum shape of SEP-1330.
#[derive(Serialize, Deserialize, schemars::JsonSchema, ElicitForm)]
#[serde(rename_all = "camelCase")]
struct Enums {
    untitled_single: Plain,
    titled_single: Titled,
    #[schemars(extend("enumNames" = ["Option One", "Option Two", "Option Three"]))]
    legacy_enum: Legacy,
    untitled_multi: Vec<Plain>,
    titled_multi: Vec<TitledChoice>,
}

/// Asks for a form with every kind of enum field.
#[tool(annotations(read_only, open_world = false))]
async fn test_elicitation_sep1330_enums(#[ctx] input: Input) -> String {
    let answer = input.elicit::<Enums>("Please choose").await;
    format!("Elicitation completed: {}", describe(answer))
}

/// A resource clients subscribe to (`resources-subscribe`).
#[resource(
    "test://watched-resource",
    name = "watched_resource",
    mime_type = "text/plain"
)]
fn watched_resource() -> &'static str {
    "A resource clients can subscribe to."
}

fn describe<T: Serialize>(answer: Elicitation<T>) -> String {
    match answer {
        Elicitation::Accepted(content) => format!(
            "action=accept, content={}",
            serde_json::to_string(&content).unwrap_or_default()
        ),
        Elicitation::Declined => "action=decline".to_owned(),
        Elicitation::Cancelled => "action=cancel".to_owned(),
    }
}
