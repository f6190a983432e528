//! The example server over Streamable HTTP on loopback, driven by a
//! 2025-11-25 client: `initialize` mints a session whose capabilities
//! negotiate the extension, and the legacy adapter serves its methods with
//! their own `resultType` kept. Bodies are validated against the
//! 2025-11-25 `schema.json`.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::*;
use mcp_runtime::HttpOptions;
use mcp_test_support::http::{self, EventReader, Reply};
use mcp_test_support::legacy::{assert_valid_legacy_message, assert_valid_legacy_response};
use serde_json::{Value, json};

const VERSION: &str = "2025-11-25";

async fn serve<F, Fut>(client: F)
where
    F: FnOnce(SocketAddr) -> Fut,
    Fut: Future<Output = ()>,
{
    with_http(|_| HttpOptions::new(), client).await;
}

fn base_headers() -> Vec<(String, String)> {
    vec![
        ("content-type".into(), "application/json".into()),
        (
            "accept".into(),
            "application/json, text/event-stream".into(),
        ),
    ]
}

fn session_headers(session: &str) -> Vec<(String, String)> {
    let mut headers = base_headers();
    headers.push(("mcp-session-id".into(), session.into()));
    headers.push(("mcp-protocol-version".into(), VERSION.into()));
    headers
}

async fn post(address: SocketAddr, headers: &[(String, String)], body: &Value) -> Reply {
    http::request(address, "POST", "/mcp", headers, body.to_string()).await
}

/// Initializes a session with `capabilities`: its id and the `initialize`
/// response.
async fn initialize(address: SocketAddr, capabilities: Value) -> (String, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION,
        "capabilities": capabilities,
        "clientInfo": {"name": "legacy-http-client", "version": "1.0.0"}
    }});
    let reply = post(address, &base_headers(), &body).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let response = reply.json();
    assert_valid_legacy_response("InitializeResult", &response);
    let session = reply
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let reply = post(address, &session_headers(&session), &initialized).await;
    assert_eq!(reply.status, 202, "{}", reply.body);
    (session, response)
}

/// Calls `method` in `session`: legacy answers are HTTP 200, errors
/// included; the body is validated with the result against `definition`.
async fn call(
    address: SocketAddr,
    session: &str,
    id: i64,
    method: &str,
    params: Value,
    definition: &str,
) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let reply = post(address, &session_headers(session), &body).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let response = reply.json();
    assert_valid_legacy_response(definition, &response);
    response
}

/// The `initialize` result advertises the extension with its settings.
#[tokio::test]
async fn initialize_advertises_the_extension() {
    serve(|address| async move {
        let (_, response) = initialize(address, json!({"extensions": {ID: {}}})).await;
        let expected = json!({"jsonrpc": "2.0", "id": 0, "result": {
            "protocolVersion": VERSION,
            "capabilities": {
                "tools": {},
                "extensions": {ID: {"maxLength": 64}},
                "logging": {}
            },
            "serverInfo": server_info()
        }});
        assert_eq!(response, expected);
    })
    .await;
}

/// A session that negotiated the extension gets pongs (`resultType:
/// "pong"` kept), the tool and the stats.
#[tokio::test]
async fn a_negotiating_session_gets_pongs_and_the_tool() {
    serve(|address| async move {
        let (session, _) = initialize(address, json!({"extensions": {ID: {}}})).await;
        let ping = call(
            address,
            &session,
            1,
            "com.example/ping",
            json!({"message": "hi"}),
            "Result",
        )
        .await;
        assert_eq!(without_result_meta(ping), legacy(pong(1, "hi")));
        let params = json!({"name": "pong", "arguments": {"message": "hi"}});
        let tool = call(address, &session, 2, "tools/call", params, "CallToolResult").await;
        assert_eq!(without_result_meta(tool), legacy(pong_tool(2, "hi")));
        let stats_response = call(address, &session, 3, "pings/stats", json!({}), "Result").await;
        assert_eq!(without_result_meta(stats_response), legacy(stats(3, 1, 0)));
    })
    .await;
}

/// A session that did not negotiate the extension is refused its methods
/// and its tool with `-32021` naming it (in an HTTP 200, as legacy errors
/// are); `pings/stats` answers anyway; an unknown method is `-32601`.
#[tokio::test]
async fn a_session_without_the_extension_is_refused() {
    serve(|address| async move {
        let (session, _) = initialize(address, json!({})).await;
        let ping = call(
            address,
            &session,
            1,
            "com.example/ping",
            json!({"message": "hi"}),
            "Result",
        )
        .await;
        assert_eq!(ping, missing_extension(1));
        let params = json!({"name": "pong", "arguments": {"message": "hi"}});
        let tool = call(address, &session, 2, "tools/call", params, "CallToolResult").await;
        assert_eq!(tool, missing_extension(2));
        let stats_response = call(address, &session, 3, "pings/stats", json!({}), "Result").await;
        assert_eq!(without_result_meta(stats_response), legacy(stats(3, 0, 0)));
        let nope = call(
            address,
            &session,
            4,
            "com.example/nope",
            json!({}),
            "Result",
        )
        .await;
        assert_eq!(nope, not_found(4, "com.example/nope"));
    })
    .await;
}

/// `notifications/cancelled` POSTed in the session reaches the handler of
/// a `com.example/wait` that has started (its first progress notification
/// arrived on the request's stream), while that stream is still open.
#[tokio::test]
async fn notifications_cancelled_reaches_the_wait_handler() {
    serve(|address| async move {
        let (session, _) = initialize(address, json!({"extensions": {ID: {}}})).await;
        let wait = json!({"jsonrpc": "2.0", "id": 1, "method": "com.example/wait",
            "params": {"_meta": {"progressToken": "lw"}}});
        let headers = session_headers(&session);
        let response = http::send(address, "POST", "/mcp", &headers, wait.to_string()).await;
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        let mut events = EventReader::new(response);
        let started = events.next().await.expect("the wait's first notification");
        assert_valid_legacy_message(&started);
        assert_eq!(started, wait_started(json!("lw")));

        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 1, "reason": "no longer needed"}});
        assert_eq!(post(address, &headers, &cancel).await.status, 202);
        for id in 2..100 {
            let response = call(address, &session, id, "pings/stats", json!({}), "Result").await;
            if response["result"]["cancelledWaits"] == 1 {
                assert_eq!(without_result_meta(response), legacy(stats(id, 0, 1)));
                drop(events);
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the wait never saw its cancellation");
    })
    .await;
}
