//! What a request layer reads without parsing (`Request::name`,
//! `Request::uri`, `Response::is_tool_error`) and what a notification
//! observer sees, on stdio and HTTP.

#![cfg(feature = "http")]

use std::sync::{Arc, Mutex};

use mcp_runtime::middleware::{self, BoxError, ClientNotification, Next, Request, Response};
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
        .notification_observer(move |n: &ClientNotification<'_>| {
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
        })
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
        .notification_observer(|_: &ClientNotification<'_>| panic!("observer bug"))
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
