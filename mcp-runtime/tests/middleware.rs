//! Item layers beyond tools: resource reads (a template's, a timed-out
//! one), prompts, multi round-trip requests through a stack, the order of
//! the levels, a retry, a layer answering the wrong kind, and selections
//! that select nothing.

#![cfg(all(feature = "http", feature = "client"))]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_runtime::middleware::{self, BoxError, Invocation, Next, Output, Request, Response};
use mcp_runtime::testing::{Elicited, TestClient};
use mcp_runtime::{
    BuildError, CallToolResult, Elicitation, ErrorObject, Items, Server, ServerBuilder, State,
    prompt, resource, tool,
};
use mcp_test_support::{assert_valid_response, parse, request};
use serde_json::{Value, json};

/// What the layers saw, in order.
#[derive(Clone, Debug, Default)]
struct Seen(Arc<Mutex<Vec<String>>>);

impl Seen {
    fn push(&self, line: String) {
        self.0.lock().unwrap().push(line);
    }

    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// Records the invocation, passes it on, records the outcome.
async fn outer(call: Invocation, next: Next<Invocation>) -> Result<Output, BoxError> {
    record("outer", call, next).await
}

async fn middle(call: Invocation, next: Next<Invocation>) -> Result<Output, BoxError> {
    record("middle", call, next).await
}

async fn inner(call: Invocation, next: Next<Invocation>) -> Result<Output, BoxError> {
    record("inner", call, next).await
}

async fn record(level: &str, call: Invocation, next: Next<Invocation>) -> Result<Output, BoxError> {
    let seen = call.context().state::<Seen>().cloned().unwrap();
    let what = format!(
        "{level} {} {} {}{}",
        call.kind().as_str(),
        call.name(),
        call.uri().map(|uri| format!("{uri} ")).unwrap_or_default(),
        call.arguments()
    );
    seen.push(what);
    let answer = next.run(call).await;
    let outcome = match &answer {
        Ok(Output::InputRequired) => "input_required".to_owned(),
        Ok(output) if output.is_tool_error() => "tool_error".to_owned(),
        Ok(_) => "ok".to_owned(),
        Err(error) => format!("error {error}"),
    };
    seen.push(format!("{level} {outcome}"));
    answer
}

/// Confirms, then says so.
#[tool(layer = middleware::from_fn(inner))]
fn confirm(what: String, #[elicit("Really {what}?")] answer: Elicitation<Confirmation>) -> String {
    match answer {
        Elicitation::Accepted(Confirmation { yes: true }) => format!("did {what}"),
        _ => format!("kept {what}"),
    }
}

/// The confirmation form.
#[derive(serde::Deserialize, schemars::JsonSchema, mcp_runtime::ElicitForm)]
struct Confirmation {
    /// Go ahead?
    yes: bool,
}

/// A memo by id.
#[resource("memo://{id}", group = "memos")]
fn memo(id: u32) -> String {
    format!("memo {id}")
}

/// A memo that takes too long.
#[resource("slow://memo", timeout_ms = 50)]
async fn slow_memo() -> String {
    tokio::time::sleep(Duration::from_secs(5)).await;
    "late".to_owned()
}

/// Greets `name`.
#[prompt(layer = middleware::from_fn(inner))]
fn greeting(name: String) -> String {
    format!("Hello, {name}!")
}

/// Counts its runs.
#[tool]
fn counted(#[ctx] runs: State<Runs>) -> String {
    let mut runs = runs.0.0.lock().unwrap();
    *runs += 1;
    format!("run {runs}")
}

#[derive(Clone, Debug, Default)]
struct Runs(Arc<Mutex<u32>>);

/// Runs the rest of the stack twice: a retry layer's shape.
async fn twice(call: Invocation, next: Next<Invocation>) -> Result<Output, BoxError> {
    next.clone().run(call.clone()).await?;
    next.run(call).await
}

/// Answers every call with a tool's result, whatever the item.
async fn wrong_kind(_: Invocation, _: Next<Invocation>) -> Result<Output, BoxError> {
    Ok(Output::Tool(CallToolResult::success([])))
}

fn server() -> (Server, Seen) {
    let seen = Seen::default();
    let server = ServerBuilder::new("middleware", "0.1.0")
        .without_server_info_in_results()
        .state(seen.clone())
        .state(Runs::default())
        .layer(middleware::from_fn(outer))
        .layer_on(
            Items::group("memos").with(Items::tool("confirm")),
            middleware::from_fn(middle),
        )
        .layer_on(Items::tool("counted"), middleware::from_fn(twice))
        .build()
        .unwrap();
    (server, seen)
}

async fn answer(server: &Server, message: String, result: &str) -> Value {
    let response = parse(&server.exchange(message).await.response.unwrap());
    assert_valid_response(result, &response);
    response
}

#[tokio::test]
async fn layers_run_outermost_first_around_a_templates_read() {
    let (server, seen) = server();
    let read = request(1, "resources/read", json!({"uri": "memo://7"}));
    let response = answer(&server, read, "ReadResourceResultResponse").await;
    assert_eq!(
        response["result"]["contents"],
        json!([{"uri": "memo://7", "text": "memo 7"}])
    );
    assert_eq!(
        seen.take(),
        [
            "outer resource memo://{id} memo://7 {}",
            "middle resource memo://{id} memo://7 {}",
            "middle ok",
            "outer ok",
        ]
    );
}

#[tokio::test]
async fn a_resources_timeout_ms_answers_minus_31002() {
    let (server, seen) = server();
    let read = request(2, "resources/read", json!({"uri": "slow://memo"}));
    let response = answer(&server, read, "ReadResourceResultResponse").await;
    assert_eq!(
        response,
        json!({"jsonrpc": "2.0", "id": 2, "error": {
            "code": -31_002,
            "message": "Request timed out: resource slow://memo ran longer than its limit of 50 ms",
        }})
    );
    let message =
        "Request timed out: resource slow://memo ran longer than its limit of 50 ms (-31002)";
    assert_eq!(
        seen.take(),
        [
            "outer resource slow://memo slow://memo {}".to_owned(),
            format!("outer error {message}"),
        ]
    );
}

#[tokio::test]
async fn a_prompts_own_layer_is_inside_the_servers() {
    let (server, seen) = server();
    let get = request(
        3,
        "prompts/get",
        json!({"name": "greeting", "arguments": {"name": "Ada"}}),
    );
    let response = answer(&server, get, "GetPromptResultResponse").await;
    let text = &response["result"]["messages"][0]["content"]["text"];
    assert_eq!(text, "Hello, Ada!");
    assert_eq!(
        seen.take(),
        [
            r#"outer prompt greeting {"name":"Ada"}"#,
            r#"inner prompt greeting {"name":"Ada"}"#,
            "inner ok",
            "outer ok",
        ]
    );
}

#[tokio::test]
async fn each_round_of_a_multi_round_trip_call_runs_the_stack() {
    let (server, seen) = server();
    let mut client =
        TestClient::with_server(server).on_elicit(|_| Elicited::Accept(json!({"yes": true})));
    let called = client
        .call_tool_answering("confirm", json!({"what": "the deploy"}))
        .await;
    let result = called.complete();
    assert_eq!(result.content[0].as_text(), Some("did the deploy"));
    let arguments = r#"{"what":"the deploy"}"#;
    let round = |outcome: &str| {
        vec![
            format!("outer tool confirm {arguments}"),
            format!("middle tool confirm {arguments}"),
            format!("inner tool confirm {arguments}"),
            format!("inner {outcome}"),
            format!("middle {outcome}"),
            format!("outer {outcome}"),
        ]
    };
    assert_eq!(seen.take(), [round("input_required"), round("ok")].concat());
}

#[tokio::test]
async fn a_retry_layer_runs_the_handler_again() {
    let (server, _) = server();
    let call = mcp_test_support::call_tool(4, "counted", json!({}));
    let response = answer(&server, call, "CallToolResultResponse").await;
    assert_eq!(response["result"]["content"][0]["text"], "run 2");
}

#[tokio::test]
async fn a_layer_answering_another_kind_of_item_is_an_internal_error() {
    let server = ServerBuilder::new("middleware", "0.1.0")
        .state(Seen::default())
        .state(Runs::default())
        .layer_on(
            Items::resource("memo://{id}"),
            middleware::from_fn(wrong_kind),
        )
        .build()
        .unwrap();
    let read = request(5, "resources/read", json!({"uri": "memo://1"}));
    let response = answer(&server, read, "ReadResourceResultResponse").await;
    assert_eq!(
        response,
        json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32_603, "message": "Internal error"}})
    );
}

#[test]
fn a_selection_that_selects_nothing_stops_the_build() {
    let error = ServerBuilder::new("middleware", "0.1.0")
        .state(Seen::default())
        .state(Runs::default())
        .layer_on(Items::tool("nope"), middleware::from_fn(outer))
        .build()
        .expect_err("refused");
    let BuildError::Items(message) = &error else {
        panic!("{error:?}");
    };
    assert!(
        message.starts_with("a layer's selection: `Items::tool(nope)` matches no linked item"),
        "{message}"
    );
    let method = ServerBuilder::new("middleware", "0.1.0")
        .state(Seen::default())
        .state(Runs::default())
        .layer_on(Items::method("tasks/get"), middleware::from_fn(outer))
        .build();
    assert!(method.is_err(), "a server without tasks has no tasks/get");
}

/// Records every request and its outcome; closes `prompts/list`.
async fn gate(request: Request, next: Next<Request>) -> Result<Response, BoxError> {
    let seen = request.state::<Seen>().cloned().unwrap();
    seen.push(format!("request {} {}", request.method(), request.id()));
    if request.method() == "prompts/list" {
        seen.push("request refused".to_owned());
        return Err(ErrorObject::new(-31_500, "prompts are closed today").into());
    }
    let answer = next.run(request).await;
    let outcome = match &answer {
        Ok(response) if response.json().contains("\"isError\":true") => "tool_error".to_owned(),
        Ok(_) => "ok".to_owned(),
        Err(error) => format!("error {error}"),
    };
    seen.push(format!("request {outcome}"));
    answer
}

fn gated() -> (Server, Seen) {
    let seen = Seen::default();
    let server = ServerBuilder::new("middleware", "0.1.0")
        .without_server_info_in_results()
        .state(seen.clone())
        .state(Runs::default())
        .request_layer(middleware::from_fn(gate))
        .layer(middleware::from_fn(outer))
        .build()
        .unwrap();
    (server, seen)
}

#[tokio::test]
async fn a_request_layer_sees_every_request_and_wraps_the_item_layers() {
    let (server, seen) = gated();
    let call = mcp_test_support::call_tool(1, "counted", json!({}));
    let response = answer(&server, call, "CallToolResultResponse").await;
    assert_eq!(response["result"]["content"][0]["text"], "run 1");
    let list = request(2, "tools/list", json!({}));
    let listed = answer(&server, list, "ListToolsResultResponse").await;
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 2);
    let unknown = request(3, "nope/nothing", json!({}));
    let missing = answer(&server, unknown, "JSONRPCResultResponse").await;
    assert_eq!(missing["error"]["code"], -32_601);
    assert_eq!(
        seen.take(),
        [
            "request tools/call 1",
            "outer tool counted {}",
            "outer ok",
            "request ok",
            "request tools/list 2",
            "request ok",
            "request nope/nothing 3",
            "request error Method not found: nope/nothing (-32601)",
        ]
    );
}

#[tokio::test]
async fn a_request_layer_answers_early_with_its_error() {
    let (server, seen) = gated();
    let list = request(4, "prompts/list", json!({}));
    let refused = answer(&server, list, "ListPromptsResultResponse").await;
    assert_eq!(
        refused,
        json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -31_500, "message": "prompts are closed today"}})
    );
    assert_eq!(seen.take(), ["request prompts/list 4", "request refused"]);
    // A request without `_meta` is answered before any layer sees it.
    let bare = r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#;
    let exchange = server.exchange(bare).await;
    assert_eq!(parse(&exchange.response.unwrap())["error"]["code"], -32_602);
    assert!(seen.take().is_empty());
}

#[tokio::test]
async fn request_layers_answer_alike_over_http_and_stdio() {
    let seen = Seen::default();
    let shared = seen.clone();
    let address = mcp_test_support::http::serve_in_thread(move |listener| async move {
        let server = ServerBuilder::new("middleware", "0.1.0")
            .without_server_info_in_results()
            .state(shared)
            .state(Runs::default())
            .request_layer(middleware::from_fn(gate))
            .build()
            .unwrap();
        let options = mcp_runtime::HttpOptions::new();
        let _ = server
            .serve_http(listener, options, std::future::pending())
            .await;
    });
    let list = request(6, "prompts/list", json!({}));
    let refused = mcp_test_support::http::post(address, &list).await;
    assert_eq!(refused.status.as_u16(), 400);
    let closed = json!({"jsonrpc": "2.0", "id": 6, "error": {"code": -31_500, "message": "prompts are closed today"}});
    assert_eq!(refused.json(), closed);
    let tools = request(7, "tools/list", json!({}));
    let listed = mcp_test_support::http::post(address, &tools).await;
    assert_eq!(listed.status.as_u16(), 200);
    assert_valid_response("ListToolsResultResponse", &listed.json());
    assert_eq!(
        seen.take(),
        [
            "request prompts/list 6",
            "request refused",
            "request tools/list 7",
            "request ok"
        ]
    );

    // stdio, in process.
    let (server, seen) = gated();
    let (client, served) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(served);
    let serving = server.serve_streams(mcp_runtime::StdioOptions::new(), read, write);
    let talking = async move {
        use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
        let (output, mut input) = tokio::io::split(client);
        let mut lines = tokio::io::BufReader::new(output).lines();
        let list = request(8, "prompts/list", json!({}));
        input
            .write_all(format!("{list}\n").as_bytes())
            .await
            .unwrap();
        let line = lines.next_line().await.unwrap().unwrap();
        drop(input);
        parse(&line)
    };
    let (served, answer) = tokio::join!(serving, talking);
    served.unwrap();
    let closed = json!({"jsonrpc": "2.0", "id": 8, "error": {"code": -31_500, "message": "prompts are closed today"}});
    assert_eq!(answer, closed);
    assert_eq!(seen.take(), ["request prompts/list 8", "request refused"]);
}
