//! The example server binary over real stdio, driven by a 2026-07-28
//! client (capabilities in every request's `_meta`): the extension is
//! advertised, negotiated per request, refused without negotiation, and
//! its handlers get progress, logging and cancellation like a tool's.
//! Every message is validated against the 2026-07-28 `schema.json`.

mod common;

use std::time::Duration;

use common::*;
use mcp_test_support::stdio::StdioServer;
use mcp_test_support::{assert_valid, assert_valid_error, assert_valid_notification, call_tool};
use serde_json::{Value, json};

fn spawn() -> StdioServer {
    StdioServer::spawn(env!("CARGO_BIN_EXE_mcp-extension-example"))
}

/// Sends `request` and returns its response, validated as an extension
/// method's.
async fn call(server: &mut StdioServer, request: &str) -> Value {
    let response = server.call(request).await;
    assert_valid_extension_response(&response);
    response
}

/// Ends the session: nothing but what the test read was written.
async fn finish(server: StdioServer) {
    assert_eq!(server.finish().await, Vec::<Value>::new());
}

/// `server/discover` advertises the extension with its settings.
#[tokio::test]
async fn discover_advertises_the_extension_and_its_settings() {
    let mut server = spawn();
    let response = server.call(&plain(1, "server/discover", json!({}))).await;
    assert_valid("DiscoverResultResponse", &response);
    assert_eq!(response, discover(1));
    finish(server).await;
}

/// A client that declared the extension gets its own `resultType`.
#[tokio::test]
async fn a_negotiating_client_gets_a_pong() {
    let mut server = spawn();
    let request = negotiated(1, "com.example/ping", json!({"message": "héllo"}));
    assert_eq!(call(&mut server, &request).await, pong(1, "héllo"));
    finish(server).await;
}

/// Without the extension in its capabilities, a client is refused its
/// methods and its tool with `-32021` naming it; `pings/stats` is open to
/// everyone. With it, the tool answers.
#[tokio::test]
async fn without_negotiation_only_the_open_method_answers() {
    let mut server = spawn();
    let refused = [
        plain(1, "com.example/ping", json!({"message": "hi"})),
        plain(2, "com.example/wait", json!({"timeoutMs": 1})),
        plain(3, "pings/reset", json!({})),
        call_tool(4, "pong", json!({"message": "hi"})),
    ];
    for (id, request) in (1..).zip(&refused) {
        let response = server.call(request).await;
        assert_valid_error(&response);
        assert_eq!(response, missing_extension(id));
    }
    let stats_request = plain(5, "pings/stats", json!({}));
    assert_eq!(call(&mut server, &stats_request).await, stats(5, 0, 0));

    let tool = negotiated(
        6,
        "tools/call",
        json!({"name": "pong", "arguments": {"message": "hi"}}),
    );
    let response = server.call(&tool).await;
    assert_valid("CallToolResultResponse", &response);
    assert_eq!(response, pong_tool(6, "hi"));
    finish(server).await;
}

/// `pings/stats` counts the pings this server answered.
#[tokio::test]
async fn stats_count_pings() {
    let mut server = spawn();
    for id in 1..=2 {
        let request = negotiated(id, "com.example/ping", json!({"message": "x"}));
        assert_eq!(call(&mut server, &request).await, pong(id, "x"));
    }
    let request = plain(3, "pings/stats", json!({}));
    assert_eq!(call(&mut server, &request).await, stats(3, 2, 0));
    finish(server).await;
}

/// Params that do not fit are `-32602` naming the field; so is a message
/// over the advertised `maxLength`.
#[tokio::test]
async fn bad_params_are_invalid_params_naming_the_field() {
    let mut server = spawn();
    let cases = [
        (
            json!({"message": 5}),
            invalid_params(
                1,
                "Invalid params: `message`: invalid type: integer `5`, expected a string",
            ),
        ),
        (
            json!({}),
            invalid_params(2, "Invalid params: missing field `message`"),
        ),
        (json!({"message": "a".repeat(65)}), too_long(3, 65)),
    ];
    for (id, (params, expected)) in (1..).zip(cases) {
        let response = call(&mut server, &negotiated(id, "com.example/ping", params)).await;
        assert_eq!(response, expected);
    }
    let exactly = "é".repeat(64);
    let request = negotiated(4, "com.example/ping", json!({"message": exactly}));
    assert_eq!(call(&mut server, &request).await, pong(4, &exactly));
    finish(server).await;
}

/// With a `progressToken` and a log level, the handler's two progress
/// notifications and its log message arrive, in order, before the pong.
#[tokio::test]
async fn progress_and_a_log_message_arrive_before_the_pong() {
    let mut server = spawn();
    let extra = json!({"progressToken": "p-1", "io.modelcontextprotocol/logLevel": "info"});
    let request = negotiated_with(1, "com.example/ping", json!({"message": "hi"}), extra);
    server.send(&request).await;
    for expected in ping_notifications(json!("p-1"), "hi") {
        let notification = server.receive().await;
        assert_valid_notification(&notification);
        assert_eq!(notification, expected);
    }
    let response = server.receive().await;
    assert_valid_extension_response(&response);
    assert_eq!(response, pong(1, "hi"));
    finish(server).await;
}

/// `notifications/cancelled` reaches the handler of a `com.example/wait`
/// that has started (its first progress notification says so): its job
/// sees the cancellation (counted by `pings/stats`), and the cancelled
/// request gets no response. A wait with a timeout answers.
#[tokio::test]
async fn notifications_cancelled_reaches_the_wait_handler() {
    let mut server = spawn();
    let extra = json!({"progressToken": "w"});
    server
        .send(&negotiated_with("w", "com.example/wait", json!({}), extra))
        .await;
    let started = server.receive().await;
    assert_valid_notification(&started);
    assert_eq!(started, wait_started(json!("w")));
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": "w", "reason": "no longer needed"}});
    server.send(&cancel.to_string()).await;
    let mut cancelled_waits = 0;
    for id in 1..=100 {
        let response = call(&mut server, &plain(id, "pings/stats", json!({}))).await;
        cancelled_waits = response["result"]["cancelledWaits"].as_u64().unwrap();
        if cancelled_waits == 1 {
            assert_eq!(response, stats(id, 0, 1));
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(cancelled_waits, 1, "the wait never saw its cancellation");

    let request = negotiated(200, "com.example/wait", json!({"timeoutMs": 10}));
    let expected = result(200, json!({"resultType": "complete", "waitedMs": 10}));
    assert_eq!(call(&mut server, &request).await, expected);
    finish(server).await;
}

/// A method under the extension's prefix that it does not serve is
/// `-32601`, like any unknown method.
#[tokio::test]
async fn an_unknown_method_of_the_vendor_is_method_not_found() {
    let mut server = spawn();
    let response = server
        .call(&negotiated(1, "com.example/nope", json!({})))
        .await;
    assert_valid_error(&response);
    assert_eq!(response, not_found(1, "com.example/nope"));
    finish(server).await;
}
