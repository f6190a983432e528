//! The example server binary over real stdio, driven by a 2025-11-25
//! client: the extension is negotiated once in `initialize` and served by
//! the runtime's legacy adapter, with its own `resultType` kept. Every
//! message is validated against the 2025-11-25 `schema.json`.

mod common;

use common::*;
use mcp_test_support::legacy::{assert_valid_legacy_message, assert_valid_legacy_response};
use mcp_test_support::stdio::StdioServer;
use serde_json::{Value, json};

/// Starts the server and completes the handshake with `capabilities`;
/// returns the server and the `initialize` response.
async fn initialize(capabilities: Value) -> (StdioServer, Value) {
    let mut server = StdioServer::spawn(env!("CARGO_BIN_EXE_mcp-extension-example"));
    let params = json!({
        "protocolVersion": LEGACY_VERSION,
        "capabilities": capabilities,
        "clientInfo": {"name": "legacy-client", "version": "1.0.0"}
    });
    let response = server
        .request(0, "initialize", params, "InitializeResult")
        .await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    server.send(&initialized.to_string()).await;
    (server, response)
}

/// A session that negotiated the extension.
async fn negotiating() -> StdioServer {
    initialize(json!({"extensions": {ID: {}}})).await.0
}

/// Legacy requests over stdio: the response is the next message.
impl LegacyClient for StdioServer {
    async fn request(&mut self, id: i64, method: &str, params: Value, definition: &str) -> Value {
        let request = legacy_request(id, method, params);
        let response = self.call(&request.to_string()).await;
        assert_valid_legacy_response(definition, &response);
        response
    }
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
    assert_eq!(response, legacy_initialize_result());
    finish(server).await;
}

/// A session that negotiated the extension gets pongs (`resultType:
/// "pong"` kept), the tool, and the stats, without any `_meta`.
#[tokio::test]
async fn a_negotiating_session_gets_pongs_and_the_tool() {
    let mut server = negotiating().await;
    assert_pongs_and_the_tool(&mut server).await;
    finish(server).await;
}

/// After `logging/setLevel`, a ping with a `progressToken` sends its
/// progress and log message, as legacy notifications, before the pong.
#[tokio::test]
async fn progress_and_a_log_message_reach_a_legacy_client() {
    let mut server = negotiating().await;
    let info = json!({"level": "info"});
    let level = server
        .request(1, "logging/setLevel", info, "EmptyResult")
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
    assert_refused_without_the_extension(&mut server).await;
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
    assert_one_cancelled_legacy_wait(&mut server).await;
    finish(server).await;
}
