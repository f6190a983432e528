//! Inline asks under keys the handler names (`input.elicit_as("close",
//! ..)` and the `_as` form of every ask): the key on the wire, answers
//! found under it, and each misuse of a key answered with `-32603` naming
//! it. Every message is validated against the spec's `schema.json`.

use mcp_runtime::{
    ElicitForm, Elicitation, Input, KeyRing, SamplingRequest, Server, ServerBuilder, tool,
};
use mcp_test_support::{assert_valid, assert_valid_error, meta_with, parse};
use serde_json::{Value, json};

/// A yes or no.
#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Confirm {
    ok: bool,
}

/// Closes an issue once the user confirms, under the key `close`.
#[tool]
async fn close_issue(id: u32, #[ctx] input: Input) -> Result<String, String> {
    let answer = input
        .elicit_as::<Confirm>("close", format!("Close #{id}?"))
        .await;
    match answer.accepted() {
        Some(Confirm { ok: true }) => Ok(format!("closed #{id}")),
        _ => Err("kept open".into()),
    }
}

/// Asks one of each other kind, each under its own key.
#[tool(annotations(read_only))]
async fn every_kind(#[ctx] input: Input) -> String {
    let login = input
        .elicit_url_as("login", "Sign in", "https://auth.example.com/login")
        .await;
    let summary = input
        .sample_as("summary", SamplingRequest::new(20).user("Summarize"))
        .await;
    let roots = input.roots_as("workspace").await;
    format!("{login:?} / {} / {} roots", summary.text(), roots.len())
}

/// Asks the same named question twice: one answer serves both.
#[tool(annotations(read_only))]
async fn ask_twice(#[ctx] input: Input) -> String {
    let first = input.elicit_as::<Confirm>("sure", "Sure?").await;
    let second = input.elicit_as::<Confirm>("sure", "Sure?").await;
    format!(
        "{:?} {:?}",
        first.accepted().map(|c| c.ok),
        second.accepted().map(|c| c.ok)
    )
}

/// An empty key.
#[tool(annotations(read_only))]
async fn empty_key(#[ctx] input: Input) -> String {
    format!("{}", input.roots_as("").await.len())
}

/// A key the runtime could generate for an unnamed ask.
#[tool(annotations(read_only))]
async fn generated_key(#[ctx] input: Input) -> String {
    let answer = input.elicit_as::<Confirm>("elicitation_1", "Sure?").await;
    format!("{:?}", answer.accepted().map(|c| c.ok))
}

/// An inline ask under a declared ask's key.
#[tool(annotations(read_only))]
async fn declared_clash(
    #[elicit("Sure?")] sure: Elicitation<Confirm>,
    #[ctx] input: Input,
) -> String {
    let again = input.elicit_as::<Confirm>("sure", "Again?").await;
    format!(
        "{:?} {:?}",
        sure.accepted().is_some(),
        again.accepted().is_some()
    )
}

/// Two questions under one key: the form, with two messages. The answer
/// to the first must not stand for the second.
#[tool(annotations(read_only))]
async fn two_messages_one_key(#[ctx] input: Input) -> String {
    let first = input.elicit_as::<Confirm>("sure", "Sure?").await;
    let second = input.elicit_as::<Confirm>("sure", "Really sure?").await;
    format!(
        "{:?} {:?}",
        first.accepted().is_some(),
        second.accepted().is_some()
    )
}

/// Two different asks under one key.
#[tool(annotations(read_only))]
async fn two_asks_one_key(#[ctx] input: Input) -> String {
    let answer = input.elicit_as::<Confirm>("x", "Sure?").await;
    let roots = input.roots_as("x").await;
    format!("{:?} {}", answer.accepted().is_some(), roots.len())
}

fn server() -> Server {
    ServerBuilder::new("mrtr-named", "1.0.0")
        .without_server_info_in_results()
        .request_state(mcp_runtime::RequestStateOptions::new().keys(KeyRing::new([9; 32])))
        .build()
        .unwrap()
}

/// `tools/call` of `name` with `retry` (`inputResponses`, `requestState`)
/// from a client that can answer every kind of ask; the response,
/// validated.
async fn call(server: &Server, name: &str, arguments: Value, retry: Value) -> Value {
    let mut params = json!({"name": name, "arguments": arguments});
    params["_meta"] =
        meta_with(json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}));
    for (key, value) in retry.as_object().unwrap() {
        params[key] = value.clone();
    }
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    assert_valid("CallToolRequest", &request);
    let exchange = server.exchange(request.to_string()).await;
    let response = parse(&exchange.response.expect("a response"));
    if response.get("error").is_some() {
        assert_valid_error(&response);
    } else {
        assert_valid("CallToolResultResponse", &response);
    }
    response
}

fn accept(ok: bool) -> Value {
    json!({"action": "accept", "content": {"ok": ok}})
}

fn confirm_form() -> Value {
    json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})
}

#[tokio::test]
async fn a_named_elicitation_goes_out_and_is_answered_under_its_key() {
    let server = server();
    let round = call(&server, "close_issue", json!({"id": 7}), json!({})).await;
    let state = round["result"]["requestState"].as_str().unwrap();
    assert_eq!(
        round["result"],
        json!({
            "resultType": "input_required",
            "inputRequests": {"close": {
                "method": "elicitation/create",
                "params": {"mode": "form", "message": "Close #7?", "requestedSchema": confirm_form()}
            }},
            "requestState": state
        })
    );
    let retry = json!({"inputResponses": {"close": accept(true)}, "requestState": state});
    assert_eq!(
        call(&server, "close_issue", json!({"id": 7}), retry).await["result"],
        json!({"resultType": "complete", "content": [{"type": "text", "text": "closed #7"}]})
    );
}

#[tokio::test]
async fn every_kind_of_inline_ask_can_be_named() {
    let server = server();
    let round = call(&server, "every_kind", json!({}), json!({})).await;
    assert_eq!(
        round["result"]["inputRequests"],
        json!({"login": {
            "method": "elicitation/create",
            "params": {"mode": "url", "message": "Sign in", "url": "https://auth.example.com/login"}
        }})
    );
    let answers = json!({"inputResponses": {
        "login": {"action": "accept"},
        "summary": {"role": "assistant", "content": {"type": "text", "text": "short"}, "model": "m", "stopReason": "endTurn"},
        "workspace": {"roots": [{"uri": "file:///w"}]}
    }});
    assert_eq!(
        call(&server, "every_kind", json!({}), answers).await["result"]["content"][0]["text"],
        "Accepted / short / 1 roots"
    );
}

#[tokio::test]
async fn a_named_ask_asked_twice_takes_one_answer() {
    let server = server();
    let answers = json!({"inputResponses": {"sure": accept(true)}});
    assert_eq!(
        call(&server, "ask_twice", json!({}), answers).await["result"]["content"][0]["text"],
        "Some(true) Some(true)"
    );
}

#[tokio::test]
async fn a_misused_key_is_an_internal_error_naming_it() {
    let server = server();
    let cases = [
        (
            "empty_key",
            json!({}),
            "Internal error: an inline ask's key cannot be empty; name it after what it asks, such as `confirm_close`",
        ),
        (
            "generated_key",
            json!({}),
            "Internal error: the inline ask key `elicitation_1` has the form of a generated key (`elicitation_1`, `sampling_2`, `roots_3`, `memo_4`); choose another name",
        ),
        (
            "declared_clash",
            json!({"inputResponses": {"sure": accept(true)}}),
            "Internal error: the inline ask key `sure` is taken by the `#[elicit]` parameter `sure`; give the inline ask another key",
        ),
        (
            "two_asks_one_key",
            json!({"inputResponses": {"x": accept(true)}}),
            "Internal error: the inline ask key `x` names two different asks; give each its own key",
        ),
        (
            "two_messages_one_key",
            json!({"inputResponses": {"sure": accept(true)}}),
            "Internal error: the inline ask key `sure` names two different asks; give each its own key",
        ),
    ];
    for (tool, retry, message) in cases {
        assert_eq!(
            call(&server, tool, json!({}), retry).await,
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": message}}),
            "{tool}"
        );
    }
}
