//! The example server over Streamable HTTP on loopback, driven by a
//! 2025-11-25 client: `initialize` mints a session whose capabilities
//! negotiate the extension, and the legacy adapter serves its methods with
//! their own `resultType` kept. Bodies are validated against the
//! 2025-11-25 `schema.json`.

mod common;

use std::net::SocketAddr;

use common::*;
use mcp_runtime::HttpOptions;
use mcp_test_support::http::{self, EventReader};
use mcp_test_support::legacy::{
    assert_valid_legacy_message, assert_valid_legacy_response, base_headers, post, session_headers,
};
use serde_json::{Value, json};

async fn serve<F, Fut>(client: F)
where
    F: FnOnce(SocketAddr) -> Fut,
    Fut: Future<Output = ()>,
{
    with_http(|_| HttpOptions::new(), client).await;
}

/// A session on the server at `address`.
struct Session {
    address: SocketAddr,
    id: String,
}

impl Session {
    /// The headers of a request in the session.
    fn headers(&self) -> Vec<(String, String)> {
        session_headers(&self.id, LEGACY_VERSION)
    }
}

/// Legacy requests over HTTP: answers are HTTP 200, errors included.
impl LegacyClient for Session {
    async fn request(&mut self, id: i64, method: &str, params: Value, definition: &str) -> Value {
        let body = legacy_request(id, method, params);
        let reply = post(self.address, &self.headers(), &body).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let response = reply.json();
        assert_valid_legacy_response(definition, &response);
        response
    }
}

/// Initializes a session with `capabilities`: the session and the
/// `initialize` response.
async fn initialize(address: SocketAddr, capabilities: Value) -> (Session, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": LEGACY_VERSION,
        "capabilities": capabilities,
        "clientInfo": {"name": "legacy-http-client", "version": "1.0.0"}
    }});
    let reply = post(address, &base_headers(), &body).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let response = reply.json();
    assert_valid_legacy_response("InitializeResult", &response);
    let id = reply
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let session = Session { address, id };
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let reply = post(address, &session.headers(), &initialized).await;
    assert_eq!(reply.status, 202, "{}", reply.body);
    (session, response)
}

/// The `initialize` result advertises the extension with its settings.
#[tokio::test]
async fn initialize_advertises_the_extension() {
    serve(|address| async move {
        let (_, response) = initialize(address, json!({"extensions": {ID: {}}})).await;
        assert_eq!(response, legacy_initialize_result());
    })
    .await;
}

/// A session that negotiated the extension gets pongs (`resultType:
/// "pong"` kept), the tool and the stats.
#[tokio::test]
async fn a_negotiating_session_gets_pongs_and_the_tool() {
    serve(|address| async move {
        let (mut session, _) = initialize(address, json!({"extensions": {ID: {}}})).await;
        assert_pongs_and_the_tool(&mut session).await;
    })
    .await;
}

/// A session that did not negotiate the extension is refused its methods
/// and its tool with `-32021` naming it (in an HTTP 200, as legacy errors
/// are); `pings/stats` answers anyway; an unknown method is `-32601`.
#[tokio::test]
async fn a_session_without_the_extension_is_refused() {
    serve(|address| async move {
        let (mut session, _) = initialize(address, json!({})).await;
        assert_refused_without_the_extension(&mut session).await;
    })
    .await;
}

/// `notifications/cancelled` POSTed in the session reaches the handler of
/// a `com.example/wait` that has started (its first progress notification
/// arrived on the request's stream), while that stream is still open.
#[tokio::test]
async fn notifications_cancelled_reaches_the_wait_handler() {
    serve(|address| async move {
        let (mut session, _) = initialize(address, json!({"extensions": {ID: {}}})).await;
        let wait = json!({"jsonrpc": "2.0", "id": 1, "method": "com.example/wait",
            "params": {"_meta": {"progressToken": "lw"}}});
        let headers = session.headers();
        let response = http::send(address, "POST", "/mcp", &headers, wait.to_string()).await;
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        let mut events = EventReader::new(response);
        let started = events.next().await.expect("the wait's first notification");
        assert_valid_legacy_message(&started);
        assert_eq!(started, wait_started(json!("lw")));

        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 1, "reason": "no longer needed"}});
        assert_eq!(post(address, &headers, &cancel).await.status, 202);
        // The request's stream stays open until the cancellation is seen.
        assert_one_cancelled_legacy_wait(&mut session).await;
        drop(events);
    })
    .await;
}
