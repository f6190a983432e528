//! The legacy-era adapter on Streamable HTTP (the 2025-11-25 shape) over
//! real sockets: sessions minted by `initialize` and sealed so that any
//! instance with the keys serves them, era detection by header, GET
//! notification streams, DELETE, and the bridge on a request's SSE
//! stream. Bodies are validated against the 2025-11-25 `schema.json`.
#![cfg(all(feature = "legacy", feature = "http"))]

use std::net::SocketAddr;
use std::time::Duration;

use mcp_runtime::{
    Context, ElicitForm, Elicitation, HttpOptions, KeyRing, Server, ServerBuilder, tool,
};
use mcp_test_support::http::{self, EventReader, mcp_headers};
use mcp_test_support::legacy::{
    assert_valid_legacy_message, assert_valid_legacy_response, base_headers, post, session_headers,
};
use mcp_test_support::{meta, request};
use serde_json::{Value, json};

/// Echoes its text.
#[tool]
fn echo(text: String) -> String {
    text
}

/// A name.
#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Name {
    /// Your name.
    name: String,
}

/// Greets the user, asking for the name first.
#[tool]
fn greet(#[elicit("What is your name?")] who: Elicitation<Name>) -> String {
    match who {
        Elicitation::Accepted(Name { name }) => format!("Hello, {name}!"),
        _ => "Hello, stranger!".to_owned(),
    }
}

/// Announces a tool list change.
#[tool]
fn touch(#[ctx] ctx: &Context) -> &'static str {
    ctx.changes().tools_changed();
    "touched"
}

fn server(keys: [u8; 32]) -> Server {
    ServerBuilder::new("legacy-http", "1.0.0")
        .list_changed()
        .request_state(mcp_runtime::RequestStateOptions::new().keys(KeyRing::new(keys)))
        .build()
        .unwrap()
}

/// Runs `client` against servers on fresh loopback ports (one per key).
async fn with_servers<F, Fut>(keys: &[[u8; 32]], client: F)
where
    F: FnOnce(Vec<SocketAddr>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut addresses = Vec::new();
    let mut stops = Vec::new();
    let mut serving = Vec::new();
    for key in keys {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        addresses.push(listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        stops.push(stop);
        let server = server(*key);
        serving.push(async move {
            let options = HttpOptions::new()
                .shutdown_grace(Duration::from_millis(200))
                .request_timeout(Duration::from_millis(1500))
                // Four: an `initialize` and three tool calls.
                .rate_limit(0.001, 4);
            server
                .serve_http(listener, options, async {
                    let _ = stopped.await;
                })
                .await
        });
    }
    let run = async {
        client(addresses).await;
        for stop in stops {
            let _ = stop.send(());
        }
    };
    let (served, ()) = tokio::join!(
        tokio::time::timeout(
            Duration::from_secs(20),
            futures_util::future::join_all(serving)
        ),
        run
    );
    for result in served.expect("the servers drain and stop") {
        result.expect("no server error");
    }
}

const VERSION: &str = "2025-11-25";

fn initialize_body(capabilities: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": VERSION,
        "capabilities": capabilities,
        "clientInfo": {"name": "legacy-http-test", "version": "1.0.0"}
    }})
}

/// Initializes a session; returns its id.
async fn initialize(address: SocketAddr, capabilities: Value) -> String {
    let reply = post(address, &base_headers(), &initialize_body(capabilities)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let body = reply.json();
    assert_valid_legacy_response("InitializeResult", &body);
    assert_eq!(body["result"]["protocolVersion"], VERSION);
    let session = reply
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    assert!(
        session.bytes().all(|b| (0x21..=0x7e).contains(&b)),
        "session id must be visible ASCII: {session}"
    );
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let reply = post(address, &session_headers(&session, VERSION), &initialized).await;
    assert_eq!(reply.status, 202, "{}", reply.body);
    assert!(reply.body.is_empty());
    session
}

fn call(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[tokio::test]
async fn a_session_serves_translated_results_and_errors_as_http_200() {
    with_servers(&[[1; 32]], |addresses| async move {
        let address = addresses[0];
        let session = initialize(address, json!({})).await;
        let headers = session_headers(&session, VERSION);
        let reply = post(
            address,
            &headers,
            &call(
                2,
                "tools/call",
                json!({"name": "echo", "arguments": {"text": "hi"}}),
            ),
        )
        .await;
        assert_eq!(reply.status, 200);
        let body = reply.json();
        assert_valid_legacy_response("CallToolResult", &body);
        assert_eq!(
            body["result"]["content"],
            json!([{"type": "text", "text": "hi"}])
        );
        assert!(body["result"].get("resultType").is_none());
        let reply = post(address, &headers, &call(3, "tools/list", json!({}))).await;
        assert_valid_legacy_response("ListToolsResult", &reply.json());
        // JSON-RPC errors of a session are HTTP 200: legacy clients read
        // the error from the body.
        let reply = post(address, &headers, &call(4, "prompts/list", json!({}))).await;
        assert_eq!(reply.status, 200);
        assert_eq!(reply.json()["error"]["code"], -32601);
        let reply = post(address, &headers, &call(5, "ping", json!({}))).await;
        assert_eq!(
            reply.json(),
            json!({"jsonrpc": "2.0", "id": 5, "result": {}})
        );
    })
    .await;
}

#[tokio::test]
async fn sessions_are_checked_and_the_header_decides_the_era() {
    with_servers(&[[1; 32]], |addresses| async move {
        let address = addresses[0];
        let session = initialize(address, json!({})).await;
        // A legacy version without a session: 400.
        let mut headers = base_headers();
        headers.push(("mcp-protocol-version".into(), VERSION.into()));
        let reply = post(address, &headers, &call(2, "tools/list", json!({}))).await;
        assert_eq!(reply.status, 400, "{}", reply.body);
        assert_eq!(reply.json()["error"]["code"], -32600);
        // An unknown or forged session: 404.
        for forged in ["nonsense", "L1.AAAA", &session[..session.len() - 2]] {
            let reply = post(
                address,
                &session_headers(forged, VERSION),
                &call(3, "tools/list", json!({})),
            )
            .await;
            assert_eq!(reply.status, 404, "{forged}: {}", reply.body);
        }
        // A version the session did not negotiate: 400.
        let mut headers = session_headers(&session, VERSION);
        headers.retain(|(n, _)| n != "mcp-protocol-version");
        headers.push(("mcp-protocol-version".into(), "2025-06-18".into()));
        let reply = post(address, &headers, &call(4, "tools/list", json!({}))).await;
        assert_eq!(reply.status, 400, "{}", reply.body);
        // The modern version header wins over a session id: served modern.
        let message = request(5, "tools/list", json!({}));
        let mut headers = mcp_headers(&message);
        headers.push(("mcp-session-id".into(), session.clone()));
        let reply = http::request(address, "POST", "/mcp", &headers, message).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.json()["result"]["resultType"], "complete");
        // A modern-shaped initialize is a modern request for an unknown
        // method.
        let message = request(6, "initialize", json!({"_meta": meta()}));
        let reply = http::request(address, "POST", "/mcp", &mcp_headers(&message), message).await;
        assert_eq!(reply.status, 404, "{}", reply.body);
        assert_eq!(reply.json()["error"]["code"], -32601);
    })
    .await;
}

#[tokio::test]
async fn any_instance_with_the_keys_serves_a_session_and_others_do_not() {
    with_servers(&[[1; 32], [1; 32], [2; 32]], |addresses| async move {
        let session = initialize(addresses[0], json!({})).await;
        let body = call(
            2,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "elsewhere"}}),
        );
        let reply = post(addresses[1], &session_headers(&session, VERSION), &body).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.json()["result"]["content"][0]["text"], "elsewhere");
        let reply = post(addresses[2], &session_headers(&session, VERSION), &body).await;
        assert_eq!(reply.status, 404, "{}", reply.body);
    })
    .await;
}

#[tokio::test]
async fn get_streams_notifications_and_delete_ends_the_session() {
    with_servers(&[[1; 32]], |addresses| async move {
        let address = addresses[0];
        let session = initialize(address, json!({})).await;
        let headers = session_headers(&session, VERSION);
        let mut get_headers = headers.clone();
        get_headers.retain(|(n, _)| n != "content-type" && n != "accept");
        get_headers.push(("accept".into(), "text/event-stream".into()));
        let response = http::send(address, "GET", "/mcp", &get_headers, "").await;
        assert_eq!(response.status(), 200);
        assert_eq!(
            response.headers().get("content-type").unwrap(),
            "text/event-stream"
        );
        let mut events = EventReader::new(response);
        let touch = call(2, "tools/call", json!({"name": "touch"}));
        let reply = post(address, &headers, &touch).await;
        assert_eq!(reply.json()["result"]["content"][0]["text"], "touched");
        let note = events.next().await.expect("a notification");
        assert_valid_legacy_message(&note);
        assert_eq!(
            note,
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        );

        // Without a session id, GET and DELETE are not MCP here: 405.
        let reply = http::request(address, "GET", "/mcp", &base_headers(), "").await;
        assert_eq!(reply.status, 405);

        let reply = http::request(address, "DELETE", "/mcp", &headers, "").await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        // The GET stream ends with the session.
        assert_eq!(events.next().await, None);
        let reply = post(address, &headers, &call(3, "ping", json!({}))).await;
        assert_eq!(reply.status, 404);
        let reply = http::request(address, "GET", "/mcp", &get_headers, "").await;
        assert_eq!(reply.status, 404);
        let reply = http::request(address, "DELETE", "/mcp", &headers, "").await;
        assert_eq!(reply.status, 404);
    })
    .await;
}

#[tokio::test]
async fn asks_go_out_on_the_request_stream_and_answers_come_back_by_post() {
    with_servers(&[[1; 32]], |addresses| async move {
        let address = addresses[0];
        let session = initialize(address, json!({"elicitation": {}})).await;
        let headers = session_headers(&session, VERSION);
        let body = call(2, "tools/call", json!({"name": "greet"}));
        let response = http::send(address, "POST", "/mcp", &headers, body.to_string()).await;
        assert_eq!(response.status(), 200);
        assert_eq!(
            response.headers().get("content-type").unwrap(),
            "text/event-stream"
        );
        let mut events = EventReader::new(response);
        let ask = events.next().await.expect("the elicitation request");
        assert_valid_legacy_message(&ask);
        assert_eq!(ask["method"], "elicitation/create");
        assert_eq!(ask["params"]["mode"], "form");
        // An answer from another session is not taken.
        let other = initialize(address, json!({})).await;
        let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Mallory"}}});
        let reply = post(address, &session_headers(&other, VERSION), &answer).await;
        assert_eq!(reply.status, 202);
        let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Ada"}}});
        let reply = post(address, &headers, &answer).await;
        assert_eq!(reply.status, 202);
        let result = events.next().await.expect("the result");
        assert_valid_legacy_response("CallToolResult", &result);
        assert_eq!(result["id"], 2);
        assert_eq!(result["result"]["content"][0]["text"], "Hello, Ada!");
        assert_eq!(events.next().await, None);

        // A client that cannot take a stream cannot be asked anything.
        let mut json_only = headers.clone();
        json_only.retain(|(n, _)| n != "accept");
        json_only.push(("accept".into(), "application/json".into()));
        let reply = post(address, &json_only, &call(3, "tools/call", json!({"name": "greet"}))).await;
        assert_eq!(reply.status, 200);
        assert_eq!(reply.json()["error"]["code"], -32600, "{}", reply.body);
    })
    .await;
}

#[tokio::test]
async fn tool_calls_and_initialize_are_rate_limited_like_modern_ones() {
    with_servers(&[[1; 32]], |addresses| async move {
        let address = addresses[0];
        let session = initialize(address, json!({})).await;
        let headers = session_headers(&session, VERSION);
        let body = call(
            2,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "x"}}),
        );
        let mut statuses = Vec::new();
        for _ in 0..5 {
            statuses.push(post(address, &headers, &body).await.status.as_u16());
        }
        // The `initialize` took one of the four: each makes a session the
        // server keeps for a day.
        assert_eq!(statuses, [200, 200, 200, 429, 429]);
        let reply = post(address, &headers, &body).await;
        assert_eq!(reply.json()["error"]["code"], -31000);
        assert!(reply.header("retry-after").is_some());
        let again = post(address, &base_headers(), &initialize_body(json!({}))).await;
        assert_eq!(again.status, 429, "{}", again.body);
        assert_eq!(again.json()["error"]["code"], -31000);
        // Other methods are not limited.
        let reply = post(address, &headers, &call(3, "ping", json!({}))).await;
        assert_eq!(reply.status, 200);
    })
    .await;
}

#[tokio::test]
async fn an_unanswered_ask_ends_in_a_timeout_error_not_a_hang() {
    with_servers(&[[1; 32]], |addresses| async move {
        let address = addresses[0];
        let session = initialize(address, json!({"elicitation": {}})).await;
        let headers = session_headers(&session, VERSION);
        let body = call(2, "tools/call", json!({"name": "greet"}));
        let started = std::time::Instant::now();
        let response = http::send(address, "POST", "/mcp", &headers, body.to_string()).await;
        let mut events = EventReader::new(response);
        let ask = events.next().await.expect("the elicitation request");
        assert_eq!(ask["method"], "elicitation/create");
        let mut last = events.next().await.expect("an answer to the request");
        // The bridge tells the client to stop asking the user.
        if last["method"] == "notifications/cancelled" {
            assert_valid_legacy_message(&last);
            assert_eq!(last["params"]["requestId"], ask["id"]);
            last = events.next().await.expect("the error");
        }
        assert_valid_legacy_response("CallToolResult", &last);
        assert_eq!(last["id"], 2);
        assert_eq!(last["error"]["code"], -31002, "{last}");
        assert!(started.elapsed() < Duration::from_secs(5));
        // A late answer is accepted and changes nothing.
        let late = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "cancel"}});
        assert_eq!(post(address, &headers, &late).await.status, 202);
    })
    .await;
}

#[tokio::test]
async fn notifications_cancelled_stops_a_running_request() {
    with_servers(&[[1; 32]], |addresses| async move {
        let address = addresses[0];
        let session = initialize(address, json!({"elicitation": {}})).await;
        let headers = session_headers(&session, VERSION);
        let body = call(7, "tools/call", json!({"name": "greet"}));
        let response = http::send(address, "POST", "/mcp", &headers, body.to_string()).await;
        let mut events = EventReader::new(response);
        let ask = events.next().await.expect("the elicitation request");
        assert_eq!(ask["method"], "elicitation/create");
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}});
        assert_eq!(post(address, &headers, &cancel).await.status, 202);
        // The stream closes without a response, well before the timeout.
        let started = std::time::Instant::now();
        assert_eq!(events.next().await, None);
        assert!(started.elapsed() < Duration::from_millis(1000));
    })
    .await;
}
