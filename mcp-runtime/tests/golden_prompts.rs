//! Golden transcripts for prompts and completion: listing, getting with and
//! without arguments, every argument error, completers for prompt arguments
//! and template variables, and the 100-value limit.

use mcp_runtime::{
    Completion, CompletionRequest, Content, GetPromptResult, PromptError, PromptMessage,
    ResourceContents, Server, ServerBuilder, prompt, resource,
};
use mcp_test_support::{assert_valid, assert_valid_error, parse, request, spec_example};
use serde_json::{Value, json};

/// A simple prompt without arguments.
#[prompt(name = "test_simple_prompt")]
fn simple() -> &'static str {
    "This is a simple prompt for testing."
}

/// A prompt with arguments.
#[prompt(
    name = "test_prompt_with_arguments",
    title = "With arguments",
    complete(arg1 = complete_arg1),
    icon(src = "https://example.com/review-icon.svg", mime_type = "image/svg+xml", sizes = ["any"])
)]
fn with_arguments(
    /// First test argument.
    arg1: String,
    /// Second test argument.
    arg2: Option<String>,
    /// How many times.
    #[arg(rename = "repeatCount")]
    repeat: Option<u8>,
) -> String {
    let times = usize::from(repeat.unwrap_or(1));
    format!(
        "Prompt with arguments: arg1='{arg1}', arg2='{}'",
        arg2.unwrap_or_default()
    )
    .repeat(times)
}

fn complete_arg1(request: &CompletionRequest) -> Vec<String> {
    let prefix = match request.resolved("arg2") {
        Some(other) => format!("{other}-"),
        None => String::new(),
    };
    ["test1", "test2", "other"]
        .into_iter()
        .filter(|v| v.starts_with(request.value()))
        .map(|v| format!("{prefix}{v}"))
        .collect()
}

/// Code review, as in the spec's example.
#[prompt]
fn code_review(code: String) -> GetPromptResult {
    GetPromptResult::new([PromptMessage::user(format!(
        "Please review this Python code:\n{code}"
    ))])
    .with_description("Code review prompt")
}

/// Rich content.
#[prompt(name = "rich")]
fn rich(#[arg(rename = "resourceUri")] uri: String) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(Content::resource(
            ResourceContents::text(uri, "Embedded.").with_mime_type("text/plain"),
        )),
        PromptMessage::assistant(Content::image([1u8, 2, 3], "image/png")),
        PromptMessage::user("Describe both."),
    ]
}

/// Fails.
#[prompt]
fn failing() -> Result<String, String> {
    Err("no inspiration".into())
}

/// Plans a trip; refuses lengths it cannot plan as the argument's fault.
#[prompt]
fn plan_trip(
    #[arg(rename = "tripDays")] days: u32,
    destination: Option<String>,
) -> Result<String, PromptError> {
    if !(1..=14).contains(&days) {
        return Err(PromptError::invalid_argument(
            "tripDays",
            "must be from 1 to 14 days",
        ));
    }
    match destination.as_deref() {
        Some("Atlantis") => Err(PromptError::failed("no maps of Atlantis")),
        other => Ok(format!(
            "Plan a {days}-day trip to {}.",
            other.unwrap_or("anywhere")
        )),
    }
}

/// A template with completable variables.
#[resource("langs://{language}/{version}", complete(language = complete_language, version = complete_version))]
fn language(language: String, version: String) -> String {
    format!("{language} {version}")
}

async fn complete_language(request: CompletionRequest) -> Vec<&'static str> {
    ["python", "pytorch", "pyside", "rust"]
        .into_iter()
        .filter(|l| l.starts_with(request.value()))
        .collect()
}

/// More values than fit in one answer.
fn complete_version(_request: &CompletionRequest) -> Completion {
    Completion::new((0..250).map(|n| format!("1.{n}")))
}

fn server() -> Server {
    ServerBuilder::new("golden", "1.0.0")
        .without_server_info_in_results()
        .build()
        .unwrap()
}

async fn send(message: String, definition: &str) -> Value {
    let exchange = server().exchange(message).await;
    let response = parse(&exchange.response.unwrap());
    if response.get("error").is_some() {
        assert_valid_error(&response);
    } else {
        assert_valid(definition, &response);
    }
    response
}

async fn get(params: Value) -> Value {
    send(request(1, "prompts/get", params), "GetPromptResultResponse").await
}

async fn complete(params: Value) -> Value {
    send(
        request(1, "completion/complete", params),
        "CompleteResultResponse",
    )
    .await
}

#[tokio::test]
async fn prompts_are_listed_with_their_arguments() {
    let response = send(
        request(1, "prompts/list", json!({})),
        "ListPromptsResultResponse",
    )
    .await;
    let prompts = response["result"]["prompts"].as_array().unwrap();
    let names: Vec<&str> = prompts
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "code_review",
            "failing",
            "plan_trip",
            "rich",
            "test_prompt_with_arguments",
            "test_simple_prompt"
        ]
    );
    assert_eq!(
        prompts[4],
        json!({
            "name": "test_prompt_with_arguments",
            "title": "With arguments",
            "description": "A prompt with arguments.",
            "arguments": [
                {"name": "arg1", "description": "First test argument.", "required": true},
                {"name": "arg2", "description": "Second test argument."},
                {"name": "repeatCount", "description": "How many times."}
            ],
            "icons": [{"src": "https://example.com/review-icon.svg", "mimeType": "image/svg+xml", "sizes": ["any"]}]
        })
    );
    assert_eq!(
        prompts[5],
        json!({"name": "test_simple_prompt", "description": "A simple prompt without arguments."})
    );
    for prompt in prompts {
        assert_valid("Prompt", prompt);
    }
}

#[tokio::test]
async fn getting_prompts() {
    assert_eq!(
        get(json!({"name": "test_simple_prompt"})).await["result"],
        json!({"resultType": "complete", "messages": [{"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}]})
    );
    assert_eq!(
        get(json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "testValue1", "arg2": "testValue2"}})).await["result"]["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='testValue1', arg2='testValue2'"
    );
    assert_eq!(
        get(json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "repeatCount": "2"}})).await["result"]["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='a', arg2=''Prompt with arguments: arg1='a', arg2=''"
    );
    assert_eq!(
        get(json!({"name": "code_review", "arguments": {"code": "def hello():\n    print('world')"}})).await["result"],
        spec_example("GetPromptResult/code-review-prompt.json")
    );
    assert_eq!(
        get(json!({"name": "rich", "arguments": {"resourceUri": "test://example-resource"}})).await
            ["result"]["messages"],
        json!([
            {"role": "user", "content": {"type": "resource", "resource": {"uri": "test://example-resource", "mimeType": "text/plain", "text": "Embedded."}}},
            {"role": "assistant", "content": {"type": "image", "data": "AQID", "mimeType": "image/png"}},
            {"role": "user", "content": {"type": "text", "text": "Describe both."}}
        ])
    );
}

#[tokio::test]
async fn argument_errors_are_invalid_params_naming_the_argument() {
    let cases = [
        (
            json!({"name": "invalid_prompt_name"}),
            "Unknown prompt: invalid_prompt_name",
        ),
        (
            json!({"name": "test_prompt_with_arguments"}),
            "Missing required argument `arg1` for prompt test_prompt_with_arguments",
        ),
        (
            json!({"name": "test_prompt_with_arguments", "arguments": {"arg2": "x"}}),
            "Missing required argument `arg1` for prompt test_prompt_with_arguments",
        ),
        (
            json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "x", "arg3": "y"}}),
            "Unknown argument `arg3` for prompt test_prompt_with_arguments; expected `arg1`, `arg2`, `repeatCount`",
        ),
        (
            json!({"name": "test_simple_prompt", "arguments": {"x": "y"}}),
            "Unknown argument `x` for prompt test_simple_prompt; it takes no arguments",
        ),
        (
            json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": 5}}),
            "Invalid argument `arg1` for prompt test_prompt_with_arguments: prompt arguments are strings",
        ),
        (
            json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "x", "repeatCount": "many"}}),
            "Invalid argument `repeatCount` for prompt test_prompt_with_arguments: invalid digit found in string",
        ),
        (
            json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "x", "repeatCount": "300"}}),
            "Invalid argument `repeatCount` for prompt test_prompt_with_arguments: number too large to fit in target type",
        ),
        (json!({}), "Invalid params: missing field `name`"),
        // Refused by the prompt itself, with `PromptError::invalid_argument`.
        (
            json!({"name": "plan_trip", "arguments": {"tripDays": "30"}}),
            "Invalid argument `tripDays` for prompt plan_trip: must be from 1 to 14 days",
        ),
    ];
    for (params, message) in cases {
        assert_eq!(
            get(params.clone()).await,
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": message}}),
            "{params}"
        );
    }
    assert_eq!(
        get(json!({"name": "invalid_prompt_name"})).await["error"],
        spec_example("InvalidParamsError/unknown-prompt.json")
    );
}

#[tokio::test]
async fn a_failing_prompt_is_an_error_with_its_message() {
    assert_eq!(
        get(json!({"name": "failing"})).await["error"],
        json!({"code": -32603, "message": "Prompt failing failed: no inspiration"})
    );
    assert_eq!(
        get(
            json!({"name": "plan_trip", "arguments": {"tripDays": "3", "destination": "Atlantis"}})
        )
        .await,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "Prompt plan_trip failed: no maps of Atlantis"}})
    );
}

#[tokio::test]
async fn a_prompt_returning_prompt_error_renders_when_it_succeeds() {
    assert_eq!(
        get(json!({"name": "plan_trip", "arguments": {"tripDays": "3"}})).await,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "messages": [
            {"role": "user", "content": {"type": "text", "text": "Plan a 3-day trip to anywhere."}}
        ]}})
    );
}

#[tokio::test]
async fn completion_of_prompt_arguments_sees_resolved_arguments() {
    let response = complete(json!({
        "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
        "argument": {"name": "arg1", "value": "test"}
    }))
    .await;
    assert_eq!(
        response["result"],
        json!({"resultType": "complete", "completion": {"values": ["test1", "test2"]}})
    );
    let response = complete(json!({
        "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
        "argument": {"name": "arg1", "value": "o"},
        "context": {"arguments": {"arg2": "x"}}
    }))
    .await;
    assert_eq!(
        response["result"]["completion"]["values"],
        json!(["x-other"])
    );
    // An argument with no completer completes to nothing.
    let response = complete(json!({
        "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
        "argument": {"name": "arg2", "value": "a"}
    }))
    .await;
    assert_eq!(response["result"]["completion"], json!({"values": []}));
}

#[tokio::test]
async fn completion_of_template_variables_is_bounded_to_100() {
    let response = complete(json!({
        "ref": {"type": "ref/resource", "uri": "langs://{language}/{version}"},
        "argument": {"name": "language", "value": "py"}
    }))
    .await;
    assert_eq!(
        response["result"]["completion"]["values"],
        json!(["python", "pytorch", "pyside"])
    );
    let response = complete(json!({
        "ref": {"type": "ref/resource", "uri": "langs://{language}/{version}"},
        "argument": {"name": "version", "value": ""}
    }))
    .await;
    let completion = &response["result"]["completion"];
    assert_eq!(completion["values"].as_array().unwrap().len(), 100);
    assert_eq!(completion["values"][0], "1.0");
    assert_eq!(completion["total"], 250);
    assert_eq!(completion["hasMore"], true);
}

#[tokio::test]
async fn completion_errors() {
    let cases = [
        (
            json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "a", "value": ""}}),
            "Unknown prompt: nope",
        ),
        (
            json!({"ref": {"type": "ref/prompt", "name": "test_simple_prompt"}, "argument": {"name": "a", "value": ""}}),
            "Unknown argument `a` for prompt test_simple_prompt; it takes no arguments",
        ),
        (
            json!({"ref": {"type": "ref/resource", "uri": "langs://x/y"}, "argument": {"name": "language", "value": ""}}),
            "Unknown resource template: langs://x/y",
        ),
        (
            json!({"ref": {"type": "ref/resource", "uri": "langs://{language}/{version}"}, "argument": {"name": "edition", "value": ""}}),
            "Unknown variable `edition` for resource template langs://{language}/{version}",
        ),
        (
            json!({"ref": {"type": "ref/other"}, "argument": {"name": "a", "value": ""}}),
            "Invalid params: `ref.type`: unknown variant `ref/other`, expected `ref/prompt` or `ref/resource`",
        ),
        (
            json!({"ref": {"type": "ref/prompt", "name": "code_review"}}),
            "Invalid params: missing field `argument`",
        ),
    ];
    for (params, message) in cases {
        assert_eq!(
            complete(params.clone()).await,
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": message}}),
            "{params}"
        );
    }
}

#[tokio::test]
async fn discover_advertises_prompts_resources_and_completions() {
    let response = send(
        request(1, "server/discover", json!({})),
        "DiscoverResultResponse",
    )
    .await;
    assert_eq!(
        response["result"]["capabilities"],
        json!({"resources": {}, "prompts": {}, "completions": {}})
    );
}
