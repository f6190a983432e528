//! What a request layer reads without parsing (`Request::name`,
//! `Request::uri`, `Response::is_tool_error`), what a notification
//! observer sees, on stdio and HTTP, and what a request observer sees of
//! every request: its start, and its answer or its abandonment.

#![cfg(feature = "http")]

use std::sync::{Arc, Mutex};

use mcp_runtime::middleware::{
    self, BoxError, ClientNotification, Finished, Next, ObservedRequest, Request, RequestObserver,
    Response,
};
use mcp_runtime::{CallToolResult, Server, ServerBuilder, TransportKind, resource, tool};
use mcp_test_support::request;
use mcp_test_support::stdio::{InMemory, served};
use serde_json::json;

/// What the layer and the observer saw, in order.
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

/// Always fails, as a tool: `isError`.
#[tool]
fn refuses() -> CallToolResult {
    CallToolResult::error("no")
}

/// Always works.
#[tool]
fn works() -> String {
    "yes".to_owned()
}

/// A note.
#[resource("note://today")]
fn today() -> String {
    "a note".to_owned()
}

/// Records the name or URI and whether the answer is a tool's error.
async fn named(request: Request, next: Next<Request>) -> Result<Response, BoxError> {
    let seen = request.state::<Seen>().cloned().unwrap();
    let target = request.name().or_else(|| request.uri());
    let line = format!("{} {}", request.method(), target.unwrap_or_default());
    let answer = next.run(request).await?;
    seen.push(format!("{line} tool_error={}", answer.is_tool_error()));
    Ok(answer)
}

fn observed(seen: &Seen) -> Server {
    let observer = seen.clone();
    ServerBuilder::new("observers", "0.1.0")
        .state(seen.clone())
        .request_layer(middleware::from_fn(named))
        .with(mcp_runtime::plugin::notification_observer(
            move |n: &ClientNotification<'_>| {
                let transport = match n.source().transport() {
                    TransportKind::Stdio => "stdio",
                    TransportKind::Http => "http",
                    _ => "other",
                };
                observer.push(format!(
                    "{transport} {} {} {:?}",
                    n.method(),
                    n.params().unwrap_or("-"),
                    n.traceparent()
                ));
            },
        ))
        .build()
        .unwrap()
}

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn cancelled() -> String {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
           "params": {"requestId": 9, "_meta": {"traceparent": TRACEPARENT}}})
    .to_string()
}

#[tokio::test]
async fn a_layer_reads_names_and_tool_errors_and_observers_see_stdio_notifications() {
    let seen = Seen::default();
    let server = observed(&seen);
    let (mut client, (read, write)) = InMemory::pair();
    let serving = server.serve_streams(mcp_runtime::StdioOptions::new(), read, write);
    let talking = async move {
        let messages = [
            cancelled(),
            mcp_test_support::call_tool(1, "refuses", json!({})),
            mcp_test_support::call_tool(2, "works", json!({})),
            request(3, "resources/read", json!({"uri": "note://today"})),
            r#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#.to_owned(),
        ];
        for message in messages {
            client.send(&message).await;
            if message.contains("\"id\"") {
                let answer = client.receive().await;
                assert!(answer.get("result").is_some(), "{answer}");
            }
        }
        client.close().await;
    };
    let ((), ()) = tokio::join!(served(serving), talking);
    assert_eq!(
        seen.take(),
        [
            format!(
                r#"stdio notifications/cancelled {{"requestId":9,"_meta":{{"traceparent":"{TRACEPARENT}"}}}} Some("{TRACEPARENT}")"#
            ),
            "tools/call refuses tool_error=true".to_owned(),
            "tools/call works tool_error=false".to_owned(),
            "resources/read note://today tool_error=false".to_owned(),
            "stdio notifications/whatever - None".to_owned(),
        ]
    );
}

#[tokio::test]
async fn observers_see_http_notifications_which_are_accepted() {
    let seen = Seen::default();
    let shared = seen.clone();
    let address = mcp_test_support::http::serve_in_thread(move |listener| async move {
        let options = mcp_runtime::HttpOptions::new();
        let _ = observed(&shared)
            .serve_http(listener, options, std::future::pending())
            .await;
    });
    let accepted = mcp_test_support::http::post(address, &cancelled()).await;
    assert_eq!(accepted.status.as_u16(), 202);
    assert_eq!(
        seen.take(),
        [format!(
            r#"http notifications/cancelled {{"requestId":9,"_meta":{{"traceparent":"{TRACEPARENT}"}}}} Some("{TRACEPARENT}")"#
        )]
    );
}

#[test]
fn an_observer_that_panics_costs_nothing_but_its_report() {
    let server = ServerBuilder::new("observers", "0.1.0")
        .with(mcp_runtime::plugin::notification_observer(
            |_: &ClientNotification<'_>| panic!("observer bug"),
        ))
        .build()
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (mut client, (read, write)) = InMemory::pair();
        let serving = server.serve_streams(mcp_runtime::StdioOptions::new(), read, write);
        let talking = async move {
            client.send(&cancelled()).await;
            client.send(&request(1, "tools/list", json!({}))).await;
            let answer = client.receive().await;
            client.close().await;
            answer
        };
        let ((), answer) = tokio::join!(served(serving), talking);
        assert_eq!(answer["id"], 1);
        assert!(answer["result"]["tools"].is_array(), "{answer}");
    });
}

/// Never answers: the client cancels it.
#[tool]
async fn waits() -> String {
    std::future::pending::<()>().await;
    unreachable!("nothing wakes it")
}

/// Records every request it sees start, end, or end unanswered.
struct Recorder(Seen);

fn line(request: &ObservedRequest<'_>) -> String {
    let target = request.name().or_else(|| request.uri());
    format!(
        "{} {} id={}",
        request.method(),
        target.unwrap_or_default(),
        request.id()
    )
}

impl RequestObserver for Recorder {
    fn started(&self, request: &ObservedRequest<'_>) {
        self.0.push(format!("started {}", line(request)));
    }

    fn finished(&self, request: &ObservedRequest<'_>, outcome: Finished<'_>) {
        let outcome = match outcome {
            Finished::Completed(result) => format!("result tool_error={}", result.is_tool_error()),
            Finished::Failed(error) => format!("error {}", error.code),
        };
        assert!(request.started().elapsed() < std::time::Duration::from_secs(60));
        self.0.push(format!("finished {} {outcome}", line(request)));
    }

    fn abandoned(&self, request: &ObservedRequest<'_>) {
        self.0.push(format!("abandoned {}", line(request)));
    }
}

/// An observer with a bug: it costs only its report.
struct Panics;

impl RequestObserver for Panics {
    fn started(&self, _: &ObservedRequest<'_>) {
        panic!("observer bug at the start");
    }

    fn finished(&self, _: &ObservedRequest<'_>, _: Finished<'_>) {
        panic!("observer bug at the end");
    }
}

/// Refuses `tools/list` itself: what the observers see is the layers'
/// answer.
async fn refuses_lists(request: Request, next: Next<Request>) -> Result<Response, BoxError> {
    match request.method() {
        "tools/list" => Err(mcp_runtime::ErrorObject::invalid_params("no lists here").into()),
        _ => next.run(request).await,
    }
}

/// Talks to `server` over stdio: sends each message, and reads an answer
/// for each request but those in `unanswered`.
async fn talk(server: Server, messages: Vec<String>, unanswered: &[i64]) -> Vec<serde_json::Value> {
    let (mut client, (read, write)) = InMemory::pair();
    let serving = server.serve_streams(mcp_runtime::StdioOptions::new(), read, write);
    let unanswered = unanswered.to_vec();
    let talking = async move {
        let mut answers = Vec::new();
        for message in messages {
            client.send(&message).await;
            let value: serde_json::Value = serde_json::from_str(&message).unwrap();
            let id = value.get("id").and_then(serde_json::Value::as_i64);
            if id.is_some_and(|id| !unanswered.contains(&id)) {
                answers.push(client.receive().await);
            }
        }
        client.close().await;
        answers
    };
    let ((), answers) = tokio::join!(served(serving), talking);
    answers
}

#[tokio::test]
async fn a_request_observer_sees_each_request_start_and_end_and_abandonment() {
    let seen = Seen::default();
    let server = ServerBuilder::new("observers", "0.1.0")
        .with(mcp_runtime::plugin::request_observer(Recorder(
            seen.clone(),
        )))
        .build()
        .unwrap();
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 6}})
    .to_string();
    let messages = vec![
        mcp_test_support::call_tool(1, "works", json!({})),
        mcp_test_support::call_tool(2, "refuses", json!({})),
        mcp_test_support::call_tool(3, "nobody", json!({})),
        request(4, "tools/list", json!({})),
        request(5, "nothing/here", json!({})),
        mcp_test_support::call_tool(6, "waits", json!({})),
        cancel,
        request(7, "resources/read", json!({"uri": "note://today"})),
    ];
    let answers = talk(server, messages, &[6]).await;
    assert_eq!(answers.len(), 6);
    // The cancelled request ends when the transport drops it, which may be
    // after the next request was answered.
    let mut lines = seen.take();
    let abandoned = lines
        .iter()
        .position(|line| line == "abandoned tools/call waits id=6");
    let started = lines
        .iter()
        .position(|line| line == "started tools/call waits id=6");
    assert!(abandoned > started, "{lines:#?}");
    lines.remove(abandoned.unwrap());
    assert_eq!(
        lines,
        [
            "started tools/call works id=1",
            "finished tools/call works id=1 result tool_error=false",
            "started tools/call refuses id=2",
            "finished tools/call refuses id=2 result tool_error=true",
            "started tools/call nobody id=3",
            "finished tools/call nobody id=3 error -32602",
            "started tools/list  id=4",
            "finished tools/list  id=4 result tool_error=false",
            "started nothing/here  id=5",
            "finished nothing/here  id=5 error -32601",
            "started tools/call waits id=6",
            "started resources/read note://today id=7",
            "finished resources/read note://today id=7 result tool_error=false",
        ]
    );
}

#[tokio::test]
async fn a_request_observer_sees_the_request_layers_answer_and_may_panic() {
    let seen = Seen::default();
    let server = ServerBuilder::new("observers", "0.1.0")
        .with(mcp_runtime::plugin::request_observer(Panics))
        .request_layer(middleware::from_fn(refuses_lists))
        .with(mcp_runtime::plugin::request_observer(Recorder(
            seen.clone(),
        )))
        .build()
        .unwrap();
    let messages = vec![
        request(1, "tools/list", json!({})),
        mcp_test_support::call_tool(2, "works", json!({})),
    ];
    let answers = talk(server, messages, &[]).await;
    assert_eq!(answers[0]["error"]["code"], -32602, "{}", answers[0]);
    assert_eq!(
        answers[1]["result"]["content"][0]["text"], "yes",
        "{}",
        answers[1]
    );
    assert_eq!(
        seen.take(),
        [
            "started tools/list  id=1",
            "finished tools/list  id=1 error -32602",
            "started tools/call works id=2",
            "finished tools/call works id=2 result tool_error=false",
        ]
    );
}

/// Records how each request ended, as a request layer sees it.
async fn layer_sees(request: Request, next: Next<Request>) -> Result<Response, BoxError> {
    let seen = request.state::<Seen>().cloned().unwrap();
    let answer = next.run(request).await;
    let outcome = match &answer {
        Ok(_) => "layer: result".to_owned(),
        Err(error) => format!("layer: {error}"),
    };
    seen.push(outcome);
    answer
}

fn timing_out(seen: &Seen) -> Server {
    ServerBuilder::new("observers", "0.1.0")
        .state(seen.clone())
        .request_layer(mcp_runtime::middleware::from_fn(layer_sees))
        .with(mcp_runtime::plugin::request_observer(Recorder(
            seen.clone(),
        )))
        .build()
        .unwrap()
}

const TIMED_OUT: &str = "layer: The request did not finish within 100 ms (-31002)";

#[tokio::test]
async fn a_timed_out_request_is_a_failure_to_layers_and_observers_on_stdio() {
    // The defect: the transport dropped the request's future from outside,
    // so layers saw nothing and observers saw it abandoned.
    let seen = Seen::default();
    let server = timing_out(&seen);
    let (mut client, (read, write)) = InMemory::pair();
    let options =
        mcp_runtime::StdioOptions::new().request_timeout(std::time::Duration::from_millis(100));
    let serving = server.serve_streams(options, read, write);
    let talking = async move {
        client
            .send(&mcp_test_support::call_tool(1, "waits", json!({})))
            .await;
        let answer = client.receive().await;
        client.close().await;
        answer
    };
    let ((), answer) = tokio::join!(served(serving), talking);
    let error = json!({"code": -31002, "message": "The request did not finish within 100 ms"});
    assert_eq!(answer, json!({"jsonrpc": "2.0", "id": 1, "error": error}));
    assert_eq!(
        seen.take(),
        [
            "started tools/call waits id=1",
            TIMED_OUT,
            "finished tools/call waits id=1 error -31002",
        ]
    );
}

#[tokio::test]
async fn a_timed_out_request_is_a_failure_to_layers_and_observers_over_http() {
    let seen = Seen::default();
    let shared = seen.clone();
    let address = mcp_test_support::http::serve_in_thread(move |listener| async move {
        let options =
            mcp_runtime::HttpOptions::new().request_timeout(std::time::Duration::from_millis(100));
        let _ = timing_out(&shared)
            .serve_http(listener, options, std::future::pending())
            .await;
    });
    let call = mcp_test_support::call_tool(1, "waits", json!({}));
    let reply = mcp_test_support::http::post(address, &call).await;
    assert_eq!(reply.status.as_u16(), 504);
    let error = json!({"code": -31002, "message": "The request did not finish within 100 ms"});
    assert_eq!(
        reply.json(),
        json!({"jsonrpc": "2.0", "id": 1, "error": error})
    );
    assert_eq!(
        seen.take(),
        [
            "started tools/call waits id=1",
            TIMED_OUT,
            "finished tools/call waits id=1 error -31002",
        ]
    );
}
