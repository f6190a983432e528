//! The example server binary over real stdio, driven by a 2025-11-25
//! client: the extension is negotiated once in `initialize` and served by
//! the runtime's legacy adapter, with its own `resultType` kept. Every
//! message is validated against the 2025-11-25 `schema.json`.

mod common;

use std::time::Duration;

use common::*;
use mcp_test_support::legacy::{assert_valid_legacy_message, assert_valid_legacy_response};
use mcp_test_support::stdio::StdioServer;
use serde_json::{Value, json};

/// Starts the server and completes the handshake with `capabilities`;
/// returns the server and the `initialize` response.
async fn initialize(capabilities: Value) -> (StdioServer, Value) {
    let mut server = StdioServer::spawn(env!("CARGO_BIN_EXE_mcp-extension-example"));
    let response = call(
        &mut server,
        0,
        "initialize",
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "clientInfo": {"name": "legacy-client", "version": "1.0.0"}
        }),
        "InitializeResult",
    )
    .await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    server.send(&initialized.to_string()).await;
    (server, response)
}

/// A session that negotiated the extension.
async fn negotiating() -> StdioServer {
    initialize(json!({"extensions": {ID: {}}})).await.0
}

/// Sends a legacy request and returns its response, validated with the
/// result against `definition` (errors by the envelope).
async fn call(
    server: &mut StdioServer,
    id: i64,
    method: &str,
    params: Value,
    definition: &str,
) -> Value {
    let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let response = server.call(&request.to_string()).await;
    assert_valid_legacy_response(definition, &response);
    response
}

/// Ends the session: nothing but what the test read was written.
async fn finish(server: StdioServer) {
    assert_eq!(server.finish().await, Vec::<Value>::new());
}

/// The `initialize` result advertises the extension with its settings
/// under `capabilities.extensions`.
#[tokio::test]
async fn initialize_advertises_the_extension() {
    let (server, response) = initialize(json!({"extensions": {ID: {}}})).await;
    let expected = json!({"jsonrpc": "2.0", "id": 0, "result": {
        "protocolVersion": "2025-11-25",
        "capabilities": {
            "tools": {},
            "extensions": {ID: {"maxLength": 64}},
            "logging": {}
        },
        "serverInfo": server_info()
    }});
    assert_eq!(response, expected);
    finish(server).await;
}

/// A session that negotiated the extension gets pongs (`resultType:
/// "pong"` kept), the tool, and the stats, without any `_meta`.
#[tokio::test]
async fn a_negotiating_session_gets_pongs_and_the_tool() {
    let mut server = negotiating().await;
    let ping = call(
        &mut server,
        1,
        "com.example/ping",
        json!({"message": "hi"}),
        "Result",
    )
    .await;
    assert_eq!(without_result_meta(ping), legacy(pong(1, "hi")));
    let params = json!({"name": "pong", "arguments": {"message": "hi"}});
    let tool = call(&mut server, 2, "tools/call", params, "CallToolResult").await;
    assert_eq!(without_result_meta(tool), legacy(pong_tool(2, "hi")));
    let stats_response = call(&mut server, 3, "pings/stats", json!({}), "Result").await;
    assert_eq!(without_result_meta(stats_response), legacy(stats(3, 1, 0)));
    finish(server).await;
}

/// After `logging/setLevel`, a ping with a `progressToken` sends its
/// progress and log message, as legacy notifications, before the pong.
#[tokio::test]
async fn progress_and_a_log_message_reach_a_legacy_client() {
    let mut server = negotiating().await;
    let level = call(
        &mut server,
        1,
        "logging/setLevel",
        json!({"level": "info"}),
        "EmptyResult",
    )
    .await;
    assert_eq!(level, json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    let request = json!({"jsonrpc": "2.0", "id": 2, "method": "com.example/ping",
        "params": {"message": "hi", "_meta": {"progressToken": "lp"}}});
    server.send(&request.to_string()).await;
    for expected in ping_notifications(json!("lp"), "hi") {
        let notification = server.receive().await;
        assert_valid_legacy_message(&notification);
        assert_eq!(notification, expected);
    }
    let response = server.receive().await;
    assert_valid_legacy_response("Result", &response);
    assert_eq!(without_result_meta(response), legacy(pong(2, "hi")));
    finish(server).await;
}

/// A session that did not negotiate the extension is refused its methods
/// and its tool with `-32021` naming it; `pings/stats` answers anyway.
#[tokio::test]
async fn a_session_without_the_extension_is_refused() {
    let (mut server, _) = initialize(json!({})).await;
    let ping = call(
        &mut server,
        1,
        "com.example/ping",
        json!({"message": "hi"}),
        "Result",
    )
    .await;
    assert_eq!(ping, missing_extension(1));
    let params = json!({"name": "pong", "arguments": {"message": "hi"}});
    let tool = call(&mut server, 2, "tools/call", params, "CallToolResult").await;
    assert_eq!(tool, missing_extension(2));
    let stats_response = call(&mut server, 3, "pings/stats", json!({}), "Result").await;
    assert_eq!(without_result_meta(stats_response), legacy(stats(3, 0, 0)));
    let nope = call(&mut server, 4, "com.example/nope", json!({}), "Result").await;
    assert_eq!(nope, not_found(4, "com.example/nope"));
    finish(server).await;
}

/// `notifications/cancelled` from a legacy client reaches the handler of
/// a `com.example/wait` that has started (its first progress notification
/// says so), and the cancelled request gets no response.
#[tokio::test]
async fn notifications_cancelled_reaches_the_wait_handler() {
    let mut server = negotiating().await;
    let wait = json!({"jsonrpc": "2.0", "id": 1, "method": "com.example/wait",
        "params": {"_meta": {"progressToken": "w"}}});
    server.send(&wait.to_string()).await;
    let started = server.receive().await;
    assert_valid_legacy_message(&started);
    assert_eq!(started, wait_started(json!("w")));
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1, "reason": "no longer needed"}});
    server.send(&cancel.to_string()).await;
    for id in 2..100 {
        let response = call(&mut server, id, "pings/stats", json!({}), "Result").await;
        if response["result"]["cancelledWaits"] == 1 {
            assert_eq!(without_result_meta(response), legacy(stats(id, 0, 1)));
            return finish(server).await;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the wait never saw its cancellation");
}
