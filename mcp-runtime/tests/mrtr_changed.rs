//! An answer is bound to the question it answered (issue 54): when the
//! data a confirmation shows changes between rounds (another client wrote
//! meanwhile), the handler asks a different question, the old answer is
//! not used, and the client is asked again, over stdio, over HTTP and in
//! process. An unchanged question still takes two rounds, and a question
//! that changes every round ends at the round limit. Every message is
//! validated against the spec's `schema.json`.
#![cfg(feature = "client")]

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use mcp_runtime::testing::{Elicited, TestClient};
use mcp_runtime::{
    ElicitForm, Elicitation, Input, KeyRing, Server, ServerBuilder, State, StdioOptions, tool,
};
use mcp_test_support::{assert_valid, assert_valid_error, meta_with, parse};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A stock level other clients change too.
#[derive(Clone, Debug, Default)]
struct Stock(Arc<AtomicI64>);

impl Stock {
    fn new(level: i64) -> Stock {
        Stock(Arc::new(AtomicI64::new(level)))
    }

    fn level(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }

    fn set(&self, level: i64) {
        self.0.store(level, Ordering::SeqCst);
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Confirm {
    /// Go ahead?
    ok: bool,
}

/// Changes the stock by `delta`, once the user confirms the new level.
/// The write is the confirmed one only because the answer is bound to the
/// question: the question shows the level this round read.
#[tool(annotations(destructive))]
async fn adjust_stock(
    delta: i64,
    #[ctx] stock: State<Stock>,
    #[ctx] input: Input,
) -> Result<String, String> {
    let now = stock.level();
    let after = now + delta;
    let question = format!("Change stock from {now} to {after}?");
    match input.elicit_as::<Confirm>("confirm", question).await {
        Elicitation::Accepted(Confirm { ok: true }) => {
            stock.set(after);
            Ok(format!("stock is {after}"))
        }
        _ => Err("unchanged".into()),
    }
}

/// Asks a new question on every round.
#[tool(annotations(destructive))]
async fn restless(#[ctx] input: Input) -> String {
    let round = input.round();
    let answer = input
        .elicit_as::<Confirm>("confirm", format!("Round {round}: go?"))
        .await;
    format!("{:?}", answer.accepted().map(|c| c.ok))
}

fn server(stock: &Stock) -> Server {
    ServerBuilder::new("stock", "1.0.0")
        .without_server_info_in_results()
        .request_state(
            mcp_runtime::RequestStateOptions::new()
                .keys(KeyRing::new([3; 32]))
                .max_rounds(4),
        )
        .state(stock.clone())
        .build()
        .unwrap()
}

/// `tools/call` of `name` from a client that answers forms, with `retry`
/// (`inputResponses`, `requestState`), validated.
fn call(id: i64, name: &str, arguments: Value, retry: &Value) -> String {
    let mut params = json!({"name": name, "arguments": arguments});
    params["_meta"] = meta_with(json!({"elicitation": {}}));
    for (key, value) in retry.as_object().unwrap() {
        params[key] = value.clone();
    }
    let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    assert_valid("CallToolRequest", &message);
    message.to_string()
}

fn adjust(id: i64, retry: &Value) -> String {
    call(id, "adjust_stock", json!({"delta": -5}), retry)
}

/// "yes" to the question asked under `confirm`, with `state`.
fn yes(state: &Value) -> Value {
    json!({
        "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}},
        "requestState": state
    })
}

/// The `input_required` result asking `message` under `confirm`, checked
/// exactly; its `requestState`.
fn asked(response: &Value, id: i64, message: &str) -> Value {
    assert_valid("CallToolResultResponse", response);
    let state = response["result"]["requestState"].clone();
    assert!(state.is_string(), "{response}");
    let form = json!({
        "type": "object",
        "properties": {"ok": {"type": "boolean", "description": "Go ahead?"}},
        "required": ["ok"]
    });
    assert_eq!(
        *response,
        json!({"jsonrpc": "2.0", "id": id, "result": {
            "resultType": "input_required",
            "inputRequests": {"confirm": {
                "method": "elicitation/create",
                "params": {"mode": "form", "message": message, "requestedSchema": form}
            }},
            "requestState": state
        }})
    );
    state
}

fn completed(response: &Value, id: i64, text: &str) {
    assert_valid("CallToolResultResponse", response);
    assert_eq!(
        *response,
        json!({"jsonrpc": "2.0", "id": id, "result": {
            "resultType": "complete",
            "content": [{"type": "text", "text": text}]
        }})
    );
}

/// The flow every transport runs: asked about 2 -> -3, the stock becomes
/// 1 before the answer comes back, so the client is asked about 1 -> -4,
/// and only that answer writes.
async fn changed_between_rounds(stock: &Stock, mut send: impl AsyncFnMut(String) -> Value) {
    let first = send(adjust(1, &json!({}))).await;
    let state = asked(&first, 1, "Change stock from 2 to -3?");
    stock.set(1);
    let second = send(adjust(2, &yes(&state))).await;
    let state = asked(&second, 2, "Change stock from 1 to -4?");
    assert_eq!(stock.level(), 1, "the first yes changed nothing");
    let third = send(adjust(3, &yes(&state))).await;
    completed(&third, 3, "stock is -4");
    assert_eq!(stock.level(), -4);
}

#[tokio::test]
async fn a_changed_question_is_asked_again_over_stdio() {
    let stock = Stock::new(2);
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_end);
    let (client_read, mut client_write) = tokio::io::split(client_end);
    let mut lines = BufReader::new(client_read).lines();
    let stdio = server(&stock);
    let serve = stdio.serve_streams(StdioOptions::new(), server_read, server_write);
    let client = async {
        changed_between_rounds(&stock, async |message: String| {
            client_write.write_all(message.as_bytes()).await.unwrap();
            client_write.write_all(b"\n").await.unwrap();
            let line = tokio::time::timeout(Duration::from_secs(5), lines.next_line());
            parse(&line.await.expect("an answer in time").unwrap().unwrap())
        })
        .await;
        // End of input: the server finishes.
        client_write.shutdown().await.unwrap();
    };
    let (served, ()) = tokio::join!(serve, client);
    served.expect("the server exits once input ends");
}

#[cfg(feature = "http")]
#[tokio::test]
async fn a_changed_question_is_asked_again_over_http() {
    use mcp_runtime::HttpOptions;
    use mcp_test_support::http;

    let stock = Stock::new(2);
    let served = server(&stock);
    let address = http::serve_in_thread(move |listener| async move {
        let forever = std::future::pending::<()>();
        served
            .serve_http(listener, HttpOptions::new(), forever)
            .await
            .expect("serves");
    });
    http::wait_listening(address).await;
    changed_between_rounds(&stock, async |message: String| {
        let reply = http::post(address, &message).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.header("content-type"), Some("application/json"));
        reply.json()
    })
    .await;
}

#[tokio::test]
async fn a_changed_question_is_asked_again_in_process() {
    let stock = Stock::new(2);
    let server = server(&stock);
    changed_between_rounds(&stock, async |message: String| {
        parse(&server.exchange(message).await.response.expect("a response"))
    })
    .await;
}

#[tokio::test]
async fn the_test_client_is_asked_again_and_confirms_what_it_saw() {
    let stock = Stock::new(2);
    let elsewhere = stock.clone();
    let shown = Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = shown.clone();
    let mut client = TestClient::with_server(server(&stock)).on_elicit(move |request| {
        record.lock().unwrap().push(request.message.clone());
        // Another client writes while this user reads the first question.
        if elsewhere.level() == 2 {
            elsewhere.set(1);
        }
        Elicited::Accept(json!({"ok": true}))
    });
    let called = client
        .call_tool_answering("adjust_stock", json!({"delta": -5}))
        .await;
    assert_eq!(called.rounds(), 3);
    called.assert_text("stock is -4");
    assert_eq!(
        *shown.lock().unwrap(),
        ["Change stock from 2 to -3?", "Change stock from 1 to -4?"]
    );
}

#[tokio::test]
async fn an_unchanged_question_takes_two_rounds() {
    let stock = Stock::new(2);
    let mut client = TestClient::with_server(server(&stock))
        .on_elicit(|_| Elicited::Accept(json!({"ok": true})));
    let called = client
        .call_tool_answering("adjust_stock", json!({"delta": -5}))
        .await;
    assert_eq!(called.rounds(), 2);
    called.assert_text("stock is -3");

    // The same, by hand: the answer to the question asked is used.
    let server = server(&stock);
    let first = parse(
        &server
            .exchange(adjust(1, &json!({})))
            .await
            .response
            .unwrap(),
    );
    let state = asked(&first, 1, "Change stock from -3 to -8?");
    let second = parse(
        &server
            .exchange(adjust(2, &yes(&state)))
            .await
            .response
            .unwrap(),
    );
    completed(&second, 2, "stock is -8");
}

#[tokio::test]
async fn a_question_that_changes_every_round_ends_at_the_round_limit() {
    // `max_rounds(4)`: four questions, each answered, then the error.
    let server = server(&Stock::default());
    let mut retry = json!({});
    for round in 1..=4 {
        let message = call(round, "restless", json!({}), &retry);
        let response = parse(&server.exchange(message).await.response.unwrap());
        let state = asked(&response, round, &format!("Round {round}: go?"));
        retry = yes(&state);
    }
    let message = call(5, "restless", json!({}), &retry);
    let response = parse(&server.exchange(message).await.response.unwrap());
    assert_valid_error(&response);
    assert_eq!(
        response,
        json!({"jsonrpc": "2.0", "id": 5, "error": {
            "code": -32602,
            "message": "This request needs more rounds of input than the server allows (4); start it again"
        }})
    );
}
