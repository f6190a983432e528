//! Multi round-trip requests through the dispatcher: every kind of ask,
//! several asks in a round, flows over three rounds, every way a retry can
//! be wrong, every way a `requestState` can be forged or stale, and the
//! stricter rules for tools a repeat could change things with (single-use
//! states, answers only with the state of the round that asked). Every
//! message is validated against the spec's `schema.json`.
//!
//! The handlers that only read are annotated `read_only`, so that their
//! states can be replayed and their answers sent up front; those without
//! annotations get the spec's defaults (destructive, not idempotent).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, UNIX_EPOCH};

use mcp_runtime::{
    ElicitForm, Elicitation, Input, KeyRing, Root, SamplingRequest, SamplingResult, Server,
    ServerBuilder, UrlElicitation, prompt, resource, tool,
};
use mcp_test_support::{assert_valid, assert_valid_error, meta_with, parse};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------
// Handlers

/// A name.
#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Name {
    /// Your name.
    name: String,
}

/// A colour.
#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Colour {
    colour: String,
}

/// A yes or no.
#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Confirm {
    ok: bool,
}

fn elicited<T>(answer: Elicitation<T>, show: impl FnOnce(T) -> String) -> String {
    match answer {
        Elicitation::Accepted(value) => show(value),
        Elicitation::Declined => "declined".to_owned(),
        Elicitation::Cancelled => "cancelled".to_owned(),
    }
}

/// Greets the user by the name they give.
#[tool(annotations(read_only))]
fn greet_user(#[elicit("What is your name?")] user_name: Elicitation<Name>) -> String {
    elicited(user_name, |Name { name }| format!("Hello, {name}!"))
}

/// Signs in to a service out of band.
#[tool(annotations(read_only))]
fn connect(
    service: String,
    #[elicit_url(
        message = "Sign in to {service}",
        url = "https://auth.example.com/connect/{service}"
    )]
    login: UrlElicitation,
) -> String {
    format!("{service}: {login:?}")
}

/// Summarizes text with the client's model.
#[tool(annotations(read_only))]
fn summarize(
    text: String,
    #[sample(prompt = "Summarize: {text}", max_tokens = 50, system = "Be brief.")]
    summary: SamplingResult,
) -> String {
    format!("{} (by {})", summary.text(), summary.model)
}

/// Lists the client's roots.
#[tool(annotations(read_only))]
fn show_roots(#[roots] roots: Vec<Root>) -> String {
    roots
        .iter()
        .map(|root| format!("{} {}", root.uri, root.name.as_deref().unwrap_or("-")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Asks three things at once.
#[tool(annotations(read_only))]
fn onboard(
    #[elicit("What is your name?")] user_name: Elicitation<Name>,
    #[sample(prompt = "Write a greeting")] greeting: SamplingResult,
    #[roots] client_roots: Vec<Root>,
) -> String {
    format!(
        "{} / {} / {} roots",
        elicited(user_name, |n| n.name),
        greeting.text(),
        client_roots.len()
    )
}

/// How often `plan_trip` ran its expensive first step.
static PLANS_STARTED: AtomicUsize = AtomicUsize::new(0);

/// Plans a trip over three rounds: the second question depends on the
/// first answer.
#[tool]
async fn plan_trip(days: u32, #[ctx] input: Input) -> Result<String, String> {
    let ticket = input
        .remember(|| async { PLANS_STARTED.fetch_add(1, Ordering::SeqCst) + 1000 })
        .await;
    let Some(Name { name }) = input.elicit::<Name>("Who is travelling?").await.accepted() else {
        return Err("no traveller".into());
    };
    let Some(Colour { colour }) = input
        .elicit::<Colour>(format!(
            "{name}, which colour should the {days}-day trip be?"
        ))
        .await
        .accepted()
    else {
        return Err("no colour".into());
    };
    Ok(format!("ticket {ticket}: {name}, {days} days, {colour}"))
}

/// Asks by elicitation when it can, else by sampling.
#[tool]
async fn adaptive(#[ctx] input: Input) -> String {
    if input.can_elicit() {
        elicited(input.elicit::<Name>("Your name?").await, |n| n.name)
    } else if input.can_sample() {
        input
            .sample(SamplingRequest::new(10).user("Invent a name"))
            .await
            .text()
    } else {
        "anonymous".to_owned()
    }
}

/// Never asks.
#[tool]
fn plain() -> &'static str {
    "plain"
}

/// A prompt that asks for context first.
#[prompt]
fn contextual(
    #[elicit("What should the answer consider?")] user_context: Elicitation<Colour>,
) -> String {
    elicited(user_context, |c| format!("Consider {}.", c.colour))
}

/// A vault entry, read after the user unlocks it.
#[resource("vault://entries/{entry}", mime_type = "text/plain")]
fn vault(
    entry: String,
    #[elicit("Unlock {entry}?")] unlock: Elicitation<Confirm>,
) -> Result<String, String> {
    match unlock {
        Elicitation::Accepted(Confirm { ok: true }) => Ok(format!("secret of {entry}")),
        _ => Err(format!("{entry} stays locked")),
    }
}

// ---------------------------------------------------------------------------
// Harness

const KEY: [u8; 32] = [7; 32];
const START: u64 = 1_900_000_000;

/// A server sealing with `keys`, whose clock reads `now` (seconds).
fn server_with(keys: KeyRing, now: &Arc<AtomicU64>) -> Server {
    let now = Arc::clone(now);
    ServerBuilder::new("mrtr", "1.0.0")
        .without_server_info_in_results()
        .request_state(
            mcp_runtime::RequestStateOptions::new()
                .keys(keys)
                .ttl(Duration::from_secs(300))
                .clock(move || UNIX_EPOCH + Duration::from_secs(now.load(Ordering::SeqCst))),
        )
        .build()
        .unwrap()
}

fn server() -> Server {
    server_with(KeyRing::new(KEY), &Arc::new(AtomicU64::new(START)))
}

fn all_capabilities() -> Value {
    json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}})
}

/// A request with `params` (plus `_meta` with `capabilities`), validated
/// against the spec's definition of its method.
fn message(id: i64, method: &str, params: Value, capabilities: Value) -> String {
    let request = unchecked_message(id, method, params, capabilities);
    let definition = match method {
        "tools/call" => "CallToolRequest",
        "prompts/get" => "GetPromptRequest",
        "resources/read" => "ReadResourceRequest",
        _ => "JSONRPCRequest",
    };
    assert_valid(definition, &parse(&request));
    request
}

/// A request that breaks the spec on purpose.
fn unchecked_message(id: i64, method: &str, mut params: Value, capabilities: Value) -> String {
    params["_meta"] = meta_with(capabilities);
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn tool_call(name: &str, arguments: Value, retry: Value) -> Value {
    let mut params = json!({"name": name, "arguments": arguments});
    for (key, value) in retry.as_object().unwrap() {
        params[key] = value.clone();
    }
    params
}

/// Sends one request and returns the response, validated.
async fn send(server: &Server, message: String) -> Value {
    let exchange = server.exchange(message).await;
    let response = parse(&exchange.response.expect("a response"));
    if response.get("error").is_some() {
        assert_valid_error(&response);
        return response;
    }
    let result = &response["result"];
    if result["resultType"] == "input_required" {
        assert_valid("InputRequiredResult", result);
        assert_valid("InputRequests", &result["inputRequests"]);
        assert!(result.get("ttlMs").is_none() && result.get("cacheScope").is_none());
    }
    response
}

async fn call(server: &Server, name: &str, arguments: Value, retry: Value, caps: Value) -> Value {
    let params = tool_call(name, arguments, retry);
    checked_call(server, message(1, "tools/call", params, caps)).await
}

/// A `tools/call` whose retry fields break the spec on purpose.
async fn bad_call(
    server: &Server,
    name: &str,
    arguments: Value,
    retry: Value,
    caps: Value,
) -> Value {
    let params = tool_call(name, arguments, retry);
    checked_call(server, unchecked_message(1, "tools/call", params, caps)).await
}

async fn checked_call(server: &Server, message: String) -> Value {
    let response = send(server, message).await;
    if response.get("result").is_some() {
        assert_valid("CallToolResultResponse", &response);
    }
    response
}

fn state_of(response: &Value) -> String {
    let state = response["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("no requestState in {response}"));
    assert!(state.starts_with("v2."), "{state}");
    state.to_owned()
}

fn text_of(response: &Value) -> &str {
    assert_eq!(response["result"]["resultType"], "complete", "{response}");
    response["result"]["content"][0]["text"].as_str().unwrap()
}

fn accept(content: Value) -> Value {
    let answer = json!({"action": "accept", "content": content});
    assert_valid("ElicitResult", &answer);
    answer
}

fn sampled(text: &str) -> Value {
    let answer = json!({
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": "test-model",
        "stopReason": "endTurn"
    });
    assert_valid("CreateMessageResult", &answer);
    answer
}

fn roots() -> Value {
    let answer = json!({"roots": [{"uri": "file:///test/root", "name": "Test Root"}]});
    assert_valid("ListRootsResult", &answer);
    answer
}

fn name_form() -> Value {
    json!({
        "type": "object",
        "properties": {"name": {"type": "string", "description": "Your name."}},
        "required": ["name"]
    })
}

fn error_of(response: &Value) -> (i64, &str) {
    let error = &response["error"];
    (
        error["code"].as_i64().unwrap(),
        error["message"].as_str().unwrap(),
    )
}

const INVALID_STATE: &str = "Invalid requestState: it is malformed, expired, or does not belong to this request; retry without it";

// ---------------------------------------------------------------------------
// One ask of each kind

#[tokio::test]
async fn form_elicitation_round_trip() {
    let server = server();
    let caps = json!({"elicitation": {}});
    let round = call(&server, "greet_user", json!({}), json!({}), caps.clone()).await;
    assert_eq!(round["id"], 1);
    let state = state_of(&round);
    assert_eq!(
        round["result"],
        json!({
            "resultType": "input_required",
            "inputRequests": {"user_name": {
                "method": "elicitation/create",
                "params": {"mode": "form", "message": "What is your name?", "requestedSchema": name_form()}
            }},
            "requestState": state
        })
    );
    assert_valid(
        "ElicitRequestFormParams",
        &round["result"]["inputRequests"]["user_name"]["params"],
    );

    let retry = json!({"inputResponses": {"user_name": accept(json!({"name": "Alice"}))}, "requestState": state});
    let done = call(&server, "greet_user", json!({}), retry, caps).await;
    assert_eq!(
        done["result"],
        json!({"resultType": "complete", "content": [{"type": "text", "text": "Hello, Alice!"}]})
    );
}

#[tokio::test]
async fn url_elicitation_interpolates_arguments() {
    let server = server();
    let caps = json!({"elicitation": {"url": {}}});
    let args = json!({"service": "github"});
    let round = call(&server, "connect", args.clone(), json!({}), caps.clone()).await;
    let request = &round["result"]["inputRequests"]["login"];
    assert_eq!(
        *request,
        json!({"method": "elicitation/create", "params": {
            "mode": "url",
            "message": "Sign in to github",
            "url": "https://auth.example.com/connect/github"
        }})
    );
    assert_valid("ElicitRequestURLParams", &request["params"]);
    for (action, seen) in [
        ("accept", "Accepted"),
        ("decline", "Declined"),
        ("cancel", "Cancelled"),
    ] {
        let retry = json!({"inputResponses": {"login": {"action": action}}, "requestState": state_of(&round)});
        let done = call(&server, "connect", args.clone(), retry, caps.clone()).await;
        assert_eq!(text_of(&done), format!("github: {seen}"));
    }
}

#[tokio::test]
async fn sampling_round_trip() {
    let server = server();
    let caps = json!({"sampling": {}});
    let args = json!({"text": "a long story"});
    let round = call(&server, "summarize", args.clone(), json!({}), caps.clone()).await;
    let request = &round["result"]["inputRequests"]["summary"];
    assert_eq!(
        *request,
        json!({"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "Summarize: a long story"}}],
            "maxTokens": 50,
            "systemPrompt": "Be brief."
        }})
    );
    assert_valid("CreateMessageRequestParams", &request["params"]);
    let retry =
        json!({"inputResponses": {"summary": sampled("Short.")}, "requestState": state_of(&round)});
    let done = call(&server, "summarize", args, retry, caps).await;
    assert_eq!(text_of(&done), "Short. (by test-model)");
}

#[tokio::test]
async fn roots_round_trip() {
    let server = server();
    let caps = json!({"roots": {}});
    let round = call(&server, "show_roots", json!({}), json!({}), caps.clone()).await;
    assert_eq!(
        round["result"]["inputRequests"],
        json!({"roots": {"method": "roots/list"}})
    );
    let retry = json!({"inputResponses": {"roots": roots()}, "requestState": state_of(&round)});
    let done = call(&server, "show_roots", json!({}), retry, caps).await;
    assert_eq!(text_of(&done), "file:///test/root Test Root");
}

#[tokio::test]
async fn prompts_and_resources_can_ask_too() {
    let server = server();
    let caps = json!({"elicitation": {}});
    let get = |retry: Value| {
        let mut params = json!({"name": "contextual"});
        for (key, value) in retry.as_object().unwrap() {
            params[key] = value.clone();
        }
        message(1, "prompts/get", params, json!({"elicitation": {}}))
    };
    let round = send(&server, get(json!({}))).await;
    assert_valid("GetPromptResultResponse", &round);
    assert_eq!(
        round["result"]["inputRequests"]["user_context"]["params"]["message"],
        "What should the answer consider?"
    );
    let retry = json!({"inputResponses": {"user_context": accept(json!({"colour": "blue"}))}, "requestState": state_of(&round)});
    let done = send(&server, get(retry)).await;
    assert_valid("GetPromptResultResponse", &done);
    assert_eq!(
        done["result"]["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Consider blue."}}])
    );

    let read = |retry: Value| {
        let mut params = json!({"uri": "vault://entries/db"});
        for (key, value) in retry.as_object().unwrap() {
            params[key] = value.clone();
        }
        message(2, "resources/read", params, caps.clone())
    };
    let round = send(&server, read(json!({}))).await;
    assert_valid("ReadResourceResultResponse", &round);
    assert_eq!(
        round["result"]["inputRequests"]["unlock"]["params"]["message"],
        "Unlock db?"
    );
    let retry = json!({"inputResponses": {"unlock": accept(json!({"ok": true}))}, "requestState": state_of(&round)});
    let done = send(&server, read(retry)).await;
    assert_valid("ReadResourceResultResponse", &done);
    assert_eq!(done["result"]["contents"][0]["text"], "secret of db");
}

// ---------------------------------------------------------------------------
// Several asks, several rounds

#[tokio::test]
async fn several_asks_go_out_in_one_round() {
    let server = server();
    let round = call(&server, "onboard", json!({}), json!({}), all_capabilities()).await;
    let requests = &round["result"]["inputRequests"];
    let methods: Vec<(&str, &str)> = requests
        .as_object()
        .unwrap()
        .iter()
        .map(|(key, request)| (key.as_str(), request["method"].as_str().unwrap()))
        .collect();
    assert_eq!(
        methods,
        [
            ("user_name", "elicitation/create"),
            ("greeting", "sampling/createMessage"),
            ("client_roots", "roots/list")
        ]
    );
    assert_eq!(requests["greeting"]["params"]["maxTokens"], 1024);

    // Answering two of three asks again for the third only; the state
    // carries the two answers.
    let partial = json!({
        "inputResponses": {"user_name": accept(json!({"name": "Ada"})), "greeting": sampled("Hi")},
        "requestState": state_of(&round)
    });
    let second = call(&server, "onboard", json!({}), partial, all_capabilities()).await;
    assert_eq!(
        second["result"]["inputRequests"],
        json!({"client_roots": {"method": "roots/list"}})
    );
    let rest =
        json!({"inputResponses": {"client_roots": roots()}, "requestState": state_of(&second)});
    let done = call(&server, "onboard", json!({}), rest, all_capabilities()).await;
    assert_eq!(text_of(&done), "Ada / Hi / 1 roots");

    // All at once, without any state: one request completes.
    let all = json!({"inputResponses": {
        "user_name": accept(json!({"name": "Bo"})), "greeting": sampled("Yo"), "client_roots": roots()
    }});
    let done = call(&server, "onboard", json!({}), all, all_capabilities()).await;
    assert_eq!(text_of(&done), "Bo / Yo / 1 roots");
}

#[tokio::test]
async fn three_rounds_carry_answers_and_work_done_in_the_state() {
    let server = server();
    let caps = json!({"elicitation": {}});
    let args = json!({"days": 3});
    let before = PLANS_STARTED.load(Ordering::SeqCst);

    let first = call(&server, "plan_trip", args.clone(), json!({}), caps.clone()).await;
    assert_eq!(
        first["result"]["inputRequests"]["elicitation_2"]["params"]["message"],
        "Who is travelling?"
    );
    let state1 = state_of(&first);

    let retry = json!({"inputResponses": {"elicitation_2": accept(json!({"name": "Alice"}))}, "requestState": state1});
    let second = call(&server, "plan_trip", args.clone(), retry, caps.clone()).await;
    assert_eq!(
        second["result"]["inputRequests"],
        json!({"elicitation_3": {"method": "elicitation/create", "params": {
            "mode": "form",
            "message": "Alice, which colour should the 3-day trip be?",
            "requestedSchema": {"type": "object", "properties": {"colour": {"type": "string"}}, "required": ["colour"]}
        }}})
    );
    let state2 = state_of(&second);
    assert_ne!(state1, state2);

    // Round three sends only the newest answer: the name is in the state.
    let retry = json!({"inputResponses": {"elicitation_3": accept(json!({"colour": "blue"}))}, "requestState": state2});
    let done = call(&server, "plan_trip", args, retry, caps).await;
    let ticket = 1000 + before;
    assert_eq!(
        text_of(&done),
        format!("ticket {ticket}: Alice, 3 days, blue")
    );
    // The remembered step ran once across the three rounds.
    assert_eq!(PLANS_STARTED.load(Ordering::SeqCst), before + 1);
}

#[tokio::test]
async fn optional_asks_follow_this_requests_capabilities() {
    let server = server();
    let by_form = call(
        &server,
        "adaptive",
        json!({}),
        json!({}),
        json!({"elicitation": {}}),
    )
    .await;
    let methods: Vec<_> = by_form["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .values()
        .map(|r| r["method"].clone())
        .collect();
    assert_eq!(methods, [json!("elicitation/create")]);

    let by_sampling = call(
        &server,
        "adaptive",
        json!({}),
        json!({}),
        json!({"sampling": {}}),
    )
    .await;
    let methods: Vec<_> = by_sampling["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .values()
        .map(|r| r["method"].clone())
        .collect();
    assert_eq!(methods, [json!("sampling/createMessage")]);

    let neither = call(&server, "adaptive", json!({}), json!({}), json!({})).await;
    assert_eq!(text_of(&neither), "anonymous");
}

#[tokio::test]
async fn round_limit_ends_long_flows() {
    let server = ServerBuilder::new("mrtr", "1.0.0")
        .without_server_info_in_results()
        .request_state(
            mcp_runtime::RequestStateOptions::new()
                .keys(KeyRing::new(KEY))
                .max_rounds(1),
        )
        .build()
        .unwrap();
    let caps = json!({"elicitation": {}});
    let args = json!({"days": 1});
    let first = call(&server, "plan_trip", args.clone(), json!({}), caps.clone()).await;
    let retry = json!({"inputResponses": {"elicitation_2": accept(json!({"name": "A"}))}, "requestState": state_of(&first)});
    let second = call(&server, "plan_trip", args, retry, caps).await;
    assert_eq!(
        error_of(&second),
        (
            -32602,
            "This request needs more rounds of input than the server allows (1); start it again"
        )
    );
}

// ---------------------------------------------------------------------------
// What a retry can get wrong

#[tokio::test]
async fn a_missing_answer_is_asked_again_and_extra_keys_are_ignored() {
    let server = server();
    let caps = json!({"elicitation": {}});
    let wrong_key = json!({"inputResponses": {"wrong_key": accept(json!({"name": "X"}))}});
    let again = call(&server, "greet_user", json!({}), wrong_key, caps.clone()).await;
    assert_eq!(again["result"]["resultType"], "input_required");
    assert_eq!(
        again["result"]["inputRequests"]["user_name"]["method"],
        "elicitation/create"
    );

    let extra = json!({"inputResponses": {
        "user_name": accept(json!({"name": "Alice"})),
        "unknown_extra_key": {"action": "accept", "content": {"x": 1}},
        "another_unexpected": "value"
    }});
    let done = bad_call(&server, "greet_user", json!({}), extra, caps).await;
    assert_eq!(text_of(&done), "Hello, Alice!");
}

#[tokio::test]
async fn decline_and_cancel_reach_the_handler() {
    let server = server();
    let caps = json!({"elicitation": {}});
    for (action, text) in [("decline", "declined"), ("cancel", "cancelled")] {
        let retry = json!({"inputResponses": {"user_name": {"action": action}}});
        let done = call(&server, "greet_user", json!({}), retry, caps.clone()).await;
        assert_eq!(text_of(&done), text);
    }
}

#[tokio::test]
async fn answers_of_the_wrong_shape_are_invalid_params() {
    let server = server();
    let cases = [
        (
            "greet_user",
            json!({}),
            json!({"user_name": 12345}),
            "Invalid input response: inputResponses.user_name: not an elicitation result: expected an object",
        ),
        (
            "greet_user",
            json!({}),
            json!({"user_name": {"action": "accept", "content": {"name": 5}}}),
            "Invalid input response: inputResponses.user_name: the submitted form does not fit: `name`: invalid type: integer `5`, expected a string",
        ),
        (
            "greet_user",
            json!({}),
            json!({"user_name": {"action": "accept"}}),
            "Invalid input response: inputResponses.user_name: accepted without `content`",
        ),
        (
            "greet_user",
            json!({}),
            json!({"user_name": {"action": "maybe"}}),
            "Invalid input response: inputResponses.user_name: not an elicitation result: unknown variant `maybe`, expected one of `accept`, `decline`, `cancel`",
        ),
        (
            "summarize",
            json!({"text": "t"}),
            json!({"summary": {"role": "assistant"}}),
            "Invalid input response: inputResponses.summary: not a sampling result: missing field `content`",
        ),
        (
            "show_roots",
            json!({}),
            json!({"roots": [{"uri": "file:///x"}]}),
            "Invalid input response: inputResponses.roots: not a roots result: expected an object",
        ),
    ];
    for (tool, args, responses, message) in cases {
        let retry = json!({"inputResponses": responses});
        let response = bad_call(&server, tool, args, retry, all_capabilities()).await;
        assert_eq!(error_of(&response), (-32602, message), "{tool} {response}");
    }
}

#[tokio::test]
async fn malformed_retry_fields_are_invalid_params() {
    let server = server();
    let cases = [
        (
            json!({"inputResponses": null}),
            "Invalid params: `inputResponses` must be an object mapping request keys to responses",
        ),
        (
            json!({"inputResponses": ["user_name"]}),
            "Invalid params: `inputResponses` must be an object mapping request keys to responses",
        ),
        (
            json!({"inputResponses": "user_name"}),
            "Invalid params: `inputResponses` must be an object mapping request keys to responses",
        ),
        (
            json!({"requestState": 7}),
            "Invalid params: `requestState` must be a string",
        ),
        (
            json!({"requestState": null}),
            "Invalid params: `requestState` must be a string",
        ),
    ];
    for (retry, message) in cases {
        let response = bad_call(
            &server,
            "greet_user",
            json!({}),
            retry.clone(),
            all_capabilities(),
        )
        .await;
        assert_eq!(error_of(&response), (-32602, message), "{retry}");
    }
}

// ---------------------------------------------------------------------------
// Missing capabilities

#[tokio::test]
async fn missing_capabilities_are_named_before_anything_runs() {
    let server = server();
    let cases = [
        (
            "greet_user",
            json!({}),
            json!({}),
            json!({"elicitation": {}}),
        ),
        // URL mode only: form must be asked for explicitly.
        (
            "greet_user",
            json!({}),
            json!({"elicitation": {"url": {}}}),
            json!({"elicitation": {"form": {}}}),
        ),
        (
            "connect",
            json!({"service": "s"}),
            json!({}),
            json!({"elicitation": {"url": {}}}),
        ),
        // An empty elicitation object means form only.
        (
            "connect",
            json!({"service": "s"}),
            json!({"elicitation": {}}),
            json!({"elicitation": {"url": {}}}),
        ),
        (
            "summarize",
            json!({"text": "t"}),
            json!({"elicitation": {}}),
            json!({"sampling": {}}),
        ),
        (
            "show_roots",
            json!({}),
            json!({"sampling": {}}),
            json!({"roots": {}}),
        ),
        // Every missing capability of a handler, in one error.
        (
            "onboard",
            json!({}),
            json!({"roots": {}}),
            json!({"elicitation": {}, "sampling": {}}),
        ),
    ];
    for (tool, args, caps, required) in cases {
        let response = call(&server, tool, args, json!({}), caps.clone()).await;
        assert_eq!(
            response["error"],
            json!({"code": -32021, "message": "Missing required client capability", "data": {"requiredCapabilities": required}}),
            "{tool} with {caps}"
        );
    }
}

// ---------------------------------------------------------------------------
// Forged and stale state

async fn started(server: &Server, tool: &str, args: Value) -> String {
    state_of(&call(server, tool, args, json!({}), all_capabilities()).await)
}

async fn retry_with_state(server: &Server, tool: &str, args: Value, state: &str) -> Value {
    let retry = json!({
        "inputResponses": {"user_name": accept(json!({"name": "Mallory"})), "summary": sampled("x")},
        "requestState": state
    });
    call(server, tool, args, retry, all_capabilities()).await
}

#[tokio::test]
async fn tampered_state_is_refused() {
    let server = server();
    let state = started(&server, "greet_user", json!({})).await;
    let mut forged = Vec::new();
    // Flip one character in each part of the token.
    for index in [3, state.len() / 2, state.len() - 1] {
        let mut bytes = state.clone().into_bytes();
        bytes[index] = if bytes[index] == b'A' { b'B' } else { b'A' };
        forged.push(String::from_utf8(bytes).unwrap());
    }
    forged.push(format!("{state}-TAMPERED"));
    // The same token under the previous format's version.
    forged.push(state.replacen("v2.", "v1.", 1));
    forged.push(state[..state.len() - 10].to_owned());
    forged.push(String::new());
    forged.push("v2.".to_owned());
    forged.push("not base64 at all!".to_owned());
    forged.push(format!("v2.{}", "A".repeat(70_000)));
    for state in forged {
        let response = retry_with_state(&server, "greet_user", json!({}), &state).await;
        assert_eq!(
            error_of(&response),
            (-32602, INVALID_STATE),
            "{}",
            &state[..state.len().min(40)]
        );
    }
}

#[tokio::test]
async fn state_is_bound_to_its_request() {
    let server = server();
    let summary = started(&server, "summarize", json!({"text": "one"})).await;
    // Another tool.
    let response = retry_with_state(&server, "greet_user", json!({}), &summary).await;
    assert_eq!(error_of(&response), (-32602, INVALID_STATE));
    // The same tool with other arguments.
    let response = retry_with_state(&server, "summarize", json!({"text": "two"}), &summary).await;
    assert_eq!(error_of(&response), (-32602, INVALID_STATE));
    // The same arguments in another order and spacing are the same request.
    let state = started(&server, "connect", json!({"service": "x"})).await;
    let retry = json!({"inputResponses": {"login": {"action": "accept"}}, "requestState": state});
    let done = call(
        &server,
        "connect",
        json!({"service": "x"}),
        retry,
        all_capabilities(),
    )
    .await;
    assert_eq!(text_of(&done), "x: Accepted");
    // The same arguments on another method: a prompt named like a tool.
    let response = send(
        &server,
        message(
            3,
            "prompts/get",
            json!({"name": "contextual", "requestState": summary}),
            all_capabilities(),
        ),
    )
    .await;
    assert_eq!(error_of(&response), (-32602, INVALID_STATE));
}

#[tokio::test]
async fn expired_state_is_refused() {
    let now = Arc::new(AtomicU64::new(START));
    let server = server_with(KeyRing::new(KEY), &now);
    let state = started(&server, "summarize", json!({"text": "t"})).await;
    now.store(START + 299, Ordering::SeqCst);
    let response = retry_with_state(&server, "summarize", json!({"text": "t"}), &state).await;
    assert_eq!(text_of(&response), "x (by test-model)");
    now.store(START + 300, Ordering::SeqCst);
    let response = retry_with_state(&server, "summarize", json!({"text": "t"}), &state).await;
    assert_eq!(error_of(&response), (-32602, INVALID_STATE));
}

#[tokio::test]
async fn rotated_keys_open_old_state_until_dropped() {
    let now = Arc::new(AtomicU64::new(START));
    let old = server_with(KeyRing::new([1; 32]), &now);
    let state = started(&old, "summarize", json!({"text": "t"})).await;

    // The new signing key, still trusting the old one.
    let rotating = server_with(KeyRing::new([2; 32]).with_verification_key([1; 32]), &now);
    let response = retry_with_state(&rotating, "summarize", json!({"text": "t"}), &state).await;
    assert_eq!(text_of(&response), "x (by test-model)");
    // States it seals carry the new key.
    let fresh = started(&rotating, "summarize", json!({"text": "t"})).await;
    let response = retry_with_state(&old, "summarize", json!({"text": "t"}), &fresh).await;
    assert_eq!(error_of(&response), (-32602, INVALID_STATE));

    // The old key rotated out.
    let rotated = server_with(KeyRing::new([2; 32]), &now);
    let response = retry_with_state(&rotated, "summarize", json!({"text": "t"}), &state).await;
    assert_eq!(error_of(&response), (-32602, INVALID_STATE));
    let response = retry_with_state(&rotated, "summarize", json!({"text": "t"}), &fresh).await;
    assert_eq!(text_of(&response), "x (by test-model)");
}

#[tokio::test]
async fn single_use_state_cannot_be_replayed() {
    let server = ServerBuilder::new("mrtr", "1.0.0")
        .without_server_info_in_results()
        .request_state(
            mcp_runtime::RequestStateOptions::new()
                .keys(KeyRing::new(KEY))
                .single_use_everywhere(),
        )
        .build()
        .unwrap();
    let state = started(&server, "summarize", json!({"text": "t"})).await;
    let first = retry_with_state(&server, "summarize", json!({"text": "t"}), &state).await;
    assert_eq!(text_of(&first), "x (by test-model)");
    let replay = retry_with_state(&server, "summarize", json!({"text": "t"}), &state).await;
    assert_eq!(error_of(&replay), (-32602, INVALID_STATE));
}

#[tokio::test]
async fn state_hides_its_content() {
    let server = server();
    let first = call(
        &server,
        "plan_trip",
        json!({"days": 2}),
        json!({}),
        all_capabilities(),
    )
    .await;
    let retry = json!({"inputResponses": {"elicitation_2": accept(json!({"name": "Zebedee"}))}, "requestState": state_of(&first)});
    let second = call(
        &server,
        "plan_trip",
        json!({"days": 2}),
        retry,
        all_capabilities(),
    )
    .await;
    let state = state_of(&second);
    let decoded = base64_decode(&state[3..]);
    assert!(!String::from_utf8_lossy(&decoded).contains("Zebedee"));
    assert!(!state.contains("Zebedee"));
}

fn base64_decode(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::new();
    for byte in text.bytes() {
        let value = ALPHABET.iter().position(|&c| c == byte).unwrap() as u32;
        bits = (bits << 6) | value;
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Methods that cannot ask

#[tokio::test]
async fn list_and_other_methods_never_ask() {
    let server = server();
    let retry = json!({"inputResponses": {"user_name": accept(json!({"name": "A"}))}, "requestState": "v1.garbage"});
    for (method, definition) in [
        ("tools/list", "ListToolsResultResponse"),
        ("prompts/list", "ListPromptsResultResponse"),
        ("resources/list", "ListResourcesResultResponse"),
        (
            "resources/templates/list",
            "ListResourceTemplatesResultResponse",
        ),
        ("server/discover", "DiscoverResultResponse"),
    ] {
        for params in [json!({}), retry.clone()] {
            let response = send(
                &server,
                unchecked_message(1, method, params, all_capabilities()),
            )
            .await;
            assert_valid(definition, &response);
            assert_eq!(response["result"]["resultType"], "complete", "{method}");
            assert!(response["result"].get("inputRequests").is_none());
        }
    }
    // A tool that never asks ignores answers and state alike.
    let done = bad_call(
        &server,
        "plain",
        json!({}),
        json!({"inputResponses": {"x": 1}}),
        json!({}),
    )
    .await;
    assert_eq!(text_of(&done), "plain");
}

#[tokio::test]
async fn the_first_round_needs_no_ids_from_the_client() {
    // The retry is a new request: any id works, and the result carries it.
    let server = server();
    let caps = json!({"elicitation": {}});
    let round = send(
        &server,
        message(
            41,
            "tools/call",
            tool_call("greet_user", json!({}), json!({})),
            caps.clone(),
        ),
    )
    .await;
    assert_eq!(round["id"], 41);
    let retry = json!({"inputResponses": {"user_name": accept(json!({"name": "Id"}))}, "requestState": state_of(&round)});
    let done = send(
        &server,
        message(
            42,
            "tools/call",
            tool_call("greet_user", json!({}), retry),
            caps,
        ),
    )
    .await;
    assert_eq!(done["id"], 42);
    assert_eq!(text_of(&done), "Hello, Id!");
}

/// Which version of `shifty` is deployed: the second asks in another order.
static SHIFTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Asks a name then a colour; after a "redeploy", the other way round.
#[tool]
async fn shifty(#[ctx] input: Input) -> String {
    let round = input.round();
    if SHIFTED.load(Ordering::SeqCst) {
        let colour = elicited(input.elicit::<Colour>("Colour?").await, |c| c.colour);
        let name = elicited(input.elicit::<Name>("Name?").await, |n| n.name);
        format!("round {round}: {name} {colour}")
    } else {
        let name = elicited(input.elicit::<Name>("Name?").await, |n| n.name);
        let colour = elicited(input.elicit::<Colour>("Colour?").await, |c| c.colour);
        format!("round {round}: {name} {colour}")
    }
}

#[tokio::test]
async fn answers_from_an_older_deployment_are_asked_again_not_misread() {
    let server = server();
    let caps = json!({"elicitation": {}});
    let first = call(&server, "shifty", json!({}), json!({}), caps.clone()).await;
    let retry = json!({"inputResponses": {"elicitation_1": accept(json!({"name": "Ada"}))}, "requestState": state_of(&first)});
    let second = call(&server, "shifty", json!({}), retry, caps.clone()).await;
    assert_eq!(
        second["result"]["inputRequests"]["elicitation_2"]["params"]["message"],
        "Colour?"
    );

    // Redeployed between rounds: the first question is now the colour. The
    // recorded name does not fit it, so it is asked again.
    SHIFTED.store(true, Ordering::SeqCst);
    let retry = json!({"inputResponses": {"elicitation_2": accept(json!({"colour": "red"}))}, "requestState": state_of(&second)});
    let third = call(&server, "shifty", json!({}), retry, caps.clone()).await;
    assert_eq!(
        third["result"]["inputRequests"]["elicitation_1"]["params"]["message"],
        "Colour?"
    );
    // Likewise the colour recorded under the second key does not fit the
    // name question that now has that key.
    let retry = json!({"inputResponses": {"elicitation_1": accept(json!({"colour": "blue"}))}, "requestState": state_of(&third)});
    let fourth = call(&server, "shifty", json!({}), retry, caps.clone()).await;
    assert_eq!(
        fourth["result"]["inputRequests"]["elicitation_2"]["params"]["message"],
        "Name?"
    );
    let retry = json!({"inputResponses": {"elicitation_2": accept(json!({"name": "Bo"}))}, "requestState": state_of(&fourth)});
    let done = call(&server, "shifty", json!({}), retry, caps).await;
    assert_eq!(text_of(&done), "round 5: Bo blue");
}

// ---------------------------------------------------------------------------
// Tools a repeat could change things with

/// What the effectful tools below did, one line per effect, so that a test
/// can count the effects of its own calls (tests run in parallel; each
/// uses its own paths).
static EFFECTS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

fn effect(line: String) -> String {
    EFFECTS.lock().unwrap().push(line.clone());
    line
}

fn effects(line: &str) -> usize {
    EFFECTS
        .lock()
        .unwrap()
        .iter()
        .filter(|l| *l == line)
        .count()
}

fn confirmed(sure: Elicitation<Confirm>) -> bool {
    matches!(sure, Elicitation::Accepted(Confirm { ok: true }))
}

/// Deletes a file once the user confirms.
#[tool(annotations(destructive))]
fn delete_file(path: String, #[elicit("Delete {path}?")] sure: Elicitation<Confirm>) -> String {
    if confirmed(sure) {
        effect(format!("deleted {path}"))
    } else {
        format!("kept {path}")
    }
}

/// Appends a line once the user confirms: not destructive, but each call
/// adds one more.
#[tool(annotations(destructive = false))]
fn append_line(path: String, #[elicit("Append to {path}?")] sure: Elicitation<Confirm>) -> String {
    if confirmed(sure) {
        effect(format!("appended to {path}"))
    } else {
        format!("left {path}")
    }
}

/// Erases a file once the user confirms; no annotations, so the spec's
/// defaults apply (destructive, not idempotent).
#[tool]
fn erase(path: String, #[elicit("Erase {path}?")] sure: Elicitation<Confirm>) -> String {
    if confirmed(sure) {
        effect(format!("erased {path}"))
    } else {
        format!("kept {path}")
    }
}

/// Sets a flag once the user confirms: setting it again changes nothing.
#[tool(annotations(destructive = false, idempotent))]
fn set_flag(path: String, #[elicit("Flag {path}?")] sure: Elicitation<Confirm>) -> String {
    if confirmed(sure) {
        effect(format!("flagged {path}"))
    } else {
        format!("unflagged {path}")
    }
}

/// Purges a cache once the user confirms; a client may retry the same
/// state (the opt-out).
#[tool(annotations(destructive), replayable_state)]
fn purge_cache(path: String, #[elicit("Purge {path}?")] sure: Elicitation<Confirm>) -> String {
    if confirmed(sure) {
        effect(format!("purged {path}"))
    } else {
        format!("kept {path}")
    }
}

/// Wipes a disk after two questions, the second asked in a later round.
#[tool(annotations(destructive))]
async fn wipe(#[ctx] input: Input) -> String {
    let Some(Name { name: disk }) = input.elicit::<Name>("Which disk?").await.accepted() else {
        return "nothing wiped".to_owned();
    };
    if !confirmed(input.elicit::<Confirm>(format!("Wipe {disk}?")).await) {
        return format!("kept {disk}");
    }
    effect(format!("wiped {disk}"))
}

/// Sends `tools/call` and returns the response frame exactly as written.
async fn wire(server: &Server, id: i64, name: &str, arguments: Value, retry: Value) -> String {
    let message = message(
        id,
        "tools/call",
        tool_call(name, arguments, retry),
        all_capabilities(),
    );
    server.exchange(message).await.response.expect("a response")
}

fn replayed(id: i64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"{INVALID_STATE}"}}}}"#
    )
}

fn yes(key: &str, state: &str) -> Value {
    json!({"inputResponses": {key: accept(json!({"ok": true}))}, "requestState": state})
}

/// The `input_required` result asking `key` to confirm `message`.
fn asks_to_confirm(response: &Value, key: &str, message: &str) -> String {
    let state = state_of(response);
    assert_eq!(
        response["result"],
        json!({
            "resultType": "input_required",
            "inputRequests": {key: {"method": "elicitation/create", "params": {
                "mode": "form",
                "message": message,
                "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
            }}},
            "requestState": state
        })
    );
    state
}

#[tokio::test]
async fn replaying_the_state_of_a_tool_that_changes_things_is_refused() {
    let server = server();
    // Destructive; additive but not idempotent; without annotations.
    for (tool, verb, done) in [
        ("delete_file", "Delete", "deleted"),
        ("append_line", "Append to", "appended to"),
        ("erase", "Erase", "erased"),
    ] {
        let path = format!("/tmp/replayed-{tool}");
        let args = json!({"path": path});
        let first = call(&server, tool, args.clone(), json!({}), all_capabilities()).await;
        let state = asks_to_confirm(&first, "sure", &format!("{verb} {path}?"));
        let retry = yes("sure", &state);
        let outcome = format!("{done} {path}");
        assert_eq!(
            wire(&server, 2, tool, args.clone(), retry.clone()).await,
            format!(
                r#"{{"jsonrpc":"2.0","id":2,"result":{{"resultType":"complete","content":[{{"type":"text","text":"{outcome}"}}]}}}}"#
            )
        );
        // The same retry again (a replay, or a client retrying blindly):
        // refused as any state that does not belong to the request is.
        assert_eq!(
            wire(&server, 3, tool, args.clone(), retry).await,
            replayed(3)
        );
        assert_eq!(effects(&outcome), 1, "{tool}");
    }
}

#[tokio::test]
async fn answers_sent_up_front_are_not_used_by_a_tool_that_changes_things() {
    let server = server();
    let args = json!({"path": "/tmp/up-front"});
    // Without any state: the question is asked, the body does not run. An
    // answer that is not used is not read either (the malformed one is
    // not a `-32602`, as an unknown key's is not).
    for answer in [accept(json!({"ok": true})), json!(12345)] {
        let up_front = json!({"inputResponses": {"sure": answer}});
        let asked = bad_call(
            &server,
            "delete_file",
            args.clone(),
            up_front,
            all_capabilities(),
        )
        .await;
        asks_to_confirm(&asked, "sure", "Delete /tmp/up-front?");
    }
    assert_eq!(effects("deleted /tmp/up-front"), 0);
    // Answered with the state of the round that asked it: done.
    let first = call(
        &server,
        "delete_file",
        args.clone(),
        json!({}),
        all_capabilities(),
    )
    .await;
    let retry = yes("sure", &state_of(&first));
    let done = call(&server, "delete_file", args, retry, all_capabilities()).await;
    assert_eq!(text_of(&done), "deleted /tmp/up-front");

    // With the state of a round that asked something else: the second
    // question's answer, sent with the first's, is not used.
    let first = call(&server, "wipe", json!({}), json!({}), all_capabilities()).await;
    assert_eq!(
        first["result"]["inputRequests"]["elicitation_1"]["params"]["message"],
        "Which disk?"
    );
    let both = json!({
        "inputResponses": {
            "elicitation_1": accept(json!({"name": "sdz"})),
            "elicitation_2": accept(json!({"ok": true}))
        },
        "requestState": state_of(&first)
    });
    let second = call(&server, "wipe", json!({}), both, all_capabilities()).await;
    let state = asks_to_confirm(&second, "elicitation_2", "Wipe sdz?");
    assert_eq!(effects("wiped sdz"), 0);
    let done = call(
        &server,
        "wipe",
        json!({}),
        yes("elicitation_2", &state),
        all_capabilities(),
    )
    .await;
    assert_eq!(text_of(&done), "wiped sdz");
}

/// A [`ReplayGuard`] that counts what it is asked.
#[derive(Clone, Default)]
struct CountingGuard {
    asked: Arc<AtomicUsize>,
    inner: Arc<mcp_runtime::mrtr::InMemoryReplayGuard>,
}

impl mcp_runtime::mrtr::ReplayGuard for CountingGuard {
    fn first_use<'a>(
        &'a self,
        state: mcp_runtime::mrtr::StateUse<'a>,
        now: std::time::SystemTime,
    ) -> mcp_runtime::mrtr::GuardFuture<'a> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        self.inner.first_use(state, now)
    }
}

#[tokio::test]
async fn states_of_tools_safe_to_repeat_stay_replayable() {
    // A configured guard takes the default's place; it does not make
    // every state single use.
    let guard = CountingGuard::default();
    let server = ServerBuilder::new("mrtr", "1.0.0")
        .without_server_info_in_results()
        .request_state(mcp_runtime::RequestStateOptions::new().keys(KeyRing::new(KEY)))
        .with(mcp_runtime::plugin::from_fn(|server| {
            server.replay_guard(guard.clone());
        }))
        .build()
        .unwrap();
    // Read-only, and non-destructive idempotent: replays complete.
    let first = call(
        &server,
        "greet_user",
        json!({}),
        json!({}),
        all_capabilities(),
    )
    .await;
    let retry = json!({"inputResponses": {"user_name": accept(json!({"name": "Ann"}))}, "requestState": state_of(&first)});
    for _ in 0..2 {
        let done = call(
            &server,
            "greet_user",
            json!({}),
            retry.clone(),
            all_capabilities(),
        )
        .await;
        assert_eq!(text_of(&done), "Hello, Ann!");
    }
    let args = json!({"path": "/tmp/flag"});
    let first = call(
        &server,
        "set_flag",
        args.clone(),
        json!({}),
        all_capabilities(),
    )
    .await;
    let retry = yes("sure", &state_of(&first));
    for _ in 0..2 {
        let done = call(
            &server,
            "set_flag",
            args.clone(),
            retry.clone(),
            all_capabilities(),
        )
        .await;
        assert_eq!(text_of(&done), "flagged /tmp/flag");
    }
    // Their answers may come up front.
    let up_front = json!({"inputResponses": {"sure": accept(json!({"ok": false}))}});
    let done = call(&server, "set_flag", args, up_front, all_capabilities()).await;
    assert_eq!(text_of(&done), "unflagged /tmp/flag");
    assert_eq!(guard.asked.load(Ordering::SeqCst), 0);

    // A destructive tool's states go through the configured guard.
    let args = json!({"path": "/tmp/guarded"});
    let first = call(
        &server,
        "delete_file",
        args.clone(),
        json!({}),
        all_capabilities(),
    )
    .await;
    let retry = yes("sure", &state_of(&first));
    assert_eq!(
        text_of(
            &call(
                &server,
                "delete_file",
                args.clone(),
                retry.clone(),
                all_capabilities()
            )
            .await
        ),
        "deleted /tmp/guarded"
    );
    assert_eq!(
        wire(&server, 9, "delete_file", args, retry).await,
        replayed(9)
    );
    assert_eq!(guard.asked.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn replayable_state_lets_a_destructive_tool_be_retried() {
    let server = server();
    let args = json!({"path": "/tmp/cache"});
    let first = call(
        &server,
        "purge_cache",
        args.clone(),
        json!({}),
        all_capabilities(),
    )
    .await;
    let retry = yes("sure", &state_of(&first));
    for id in [2, 3] {
        assert_eq!(
            wire(&server, id, "purge_cache", args.clone(), retry.clone()).await,
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"complete","content":[{{"type":"text","text":"purged /tmp/cache"}}]}}}}"#
            )
        );
    }
    assert_eq!(effects("purged /tmp/cache"), 2);
    // Its questions are still asked before they are answered.
    let up_front = json!({"inputResponses": {"sure": accept(json!({"ok": true}))}});
    let asked = call(&server, "purge_cache", args, up_front, all_capabilities()).await;
    asks_to_confirm(&asked, "sure", "Purge /tmp/cache?");
    assert_eq!(effects("purged /tmp/cache"), 2);
}
