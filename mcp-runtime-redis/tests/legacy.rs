//! Legacy HTTP sessions across instances sharing Redis, over real sockets:
//! every request of a session may land on any instance (as behind a
//! round-robin balancer) and the session behaves as on one: the log level
//! and subscriptions set through one instance hold on the others, an
//! answer to a server-to-client request reaches the instance whose request
//! waits for it, `notifications/cancelled` stops a request running
//! elsewhere, and DELETE ends the session everywhere.

#![cfg(feature = "legacy")]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mcp_runtime::{
    Context, ElicitForm, Elicitation, HttpOptions, KeyRing, Logger, Server, ServerBuilder,
    resource, tool,
};
use mcp_runtime_redis::RedisConfig;
use mcp_test_support::http::{self, EventReader};
use mcp_test_support::legacy::{
    assert_valid_legacy_message, assert_valid_legacy_response, base_headers, post, session_headers,
};
use mcp_test_support::redis::{dead_address, unique_prefix, url};
use serde_json::{Value, json};

const VERSION: &str = "2025-11-25";
const KEY: [u8; 32] = [9; 32];

/// A name.
#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Name {
    /// Your name.
    name: String,
}

/// Greets the user, asking for the name first.
#[tool]
fn greet_legacy(#[elicit("What is your name?")] who: Elicitation<Name>) -> String {
    match who {
        Elicitation::Accepted(Name { name }) => format!("Hello, {name}!"),
        _ => "Hello, stranger!".to_owned(),
    }
}

/// Logs at info and at debug.
#[tool]
fn chatty(#[ctx] log: Logger) -> &'static str {
    log.info("an info line");
    log.debug("a debug line");
    "said"
}

/// Announces that the note changed.
#[tool]
fn edit_note(#[ctx] ctx: &Context) -> &'static str {
    ctx.changes().resource_updated("note://today");
    "edited"
}

/// Today's note.
#[resource("note://today")]
fn today() -> String {
    "buy milk".into()
}

fn instance(prefix: &str, redis: &str) -> Server {
    ServerBuilder::new("redis-legacy", "1.0.0")
        .resource_subscriptions()
        .request_state(mcp_runtime::RequestStateOptions::new().keys(KeyRing::new(KEY)))
        .with(RedisConfig::new(redis).key_prefix(prefix))
        .build()
        .expect("builds")
}

/// Serves one server per entry on fresh loopback ports, runs `client`,
/// then stops them.
async fn with_instances<F, Fut>(servers: Vec<Server>, client: F)
where
    F: FnOnce(Vec<SocketAddr>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut addresses = Vec::new();
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut serving = Vec::new();
    for server in servers {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        addresses.push(listener.local_addr().unwrap());
        let mut stopped = stopped.clone();
        serving.push(async move {
            let options = HttpOptions::new()
                .shutdown_grace(Duration::from_millis(200))
                .request_timeout(Duration::from_secs(5));
            server
                .serve_http(listener, options, async move {
                    let _ = stopped.wait_for(|stop| *stop).await;
                })
                .await
        });
    }
    let run = async {
        client(addresses).await;
        let _ = stop.send(true);
    };
    let (served, ()) = tokio::join!(
        tokio::time::timeout(
            Duration::from_secs(30),
            futures_util::future::join_all(serving)
        ),
        run
    );
    for result in served.expect("the servers drain and stop") {
        result.expect("no server error");
    }
}

async fn initialize(address: SocketAddr, capabilities: Value) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": VERSION,
        "capabilities": capabilities,
        "clientInfo": {"name": "redis-legacy-test", "version": "1.0.0"}
    }});
    let reply = post(address, &base_headers(), &body).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned()
}

fn call(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn get_headers(session: &str) -> Vec<(String, String)> {
    let mut headers = session_headers(session, VERSION);
    headers.retain(|(n, _)| n != "content-type" && n != "accept");
    headers.push(("accept".into(), "text/event-stream".into()));
    headers
}

/// Waits until `server`'s pub/sub connection is up (a fresh instance
/// subscribes in the background).
async fn settle() {
    tokio::time::sleep(Duration::from_millis(300)).await;
}

#[tokio::test]
async fn log_level_and_subscriptions_set_on_one_instance_hold_on_the_others() {
    let prefix = unique_prefix("legacy-settings");
    let servers = vec![instance(&prefix, &url()), instance(&prefix, &url())];
    with_instances(servers, |at| async move {
        settle().await;
        let session = initialize(at[0], json!({})).await;
        let headers = session_headers(&session, VERSION);
        let set = call(2, "logging/setLevel", json!({"level": "info"}));
        let reply = post(at[1], &headers, &set).await;
        assert_eq!(reply.json(), json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
        // The level set through B holds on A: info is sent, debug is not.
        let reply = post(at[0], &headers, &call(3, "tools/call", json!({"name": "chatty"}))).await;
        let events = reply.events();
        let logged: Vec<&Value> = events
            .iter()
            .filter(|m| m["method"] == "notifications/message")
            .collect();
        assert_eq!(logged.len(), 1, "{events:?}");
        assert_valid_legacy_message(logged[0]);
        assert_eq!(logged[0]["params"]["level"], "info");
        assert_eq!(logged[0]["params"]["data"], "an info line");

        // Subscribed through A, streamed from B, changed through A.
        let subscribe = call(4, "resources/subscribe", json!({"uri": "note://today"}));
        assert_eq!(post(at[0], &headers, &subscribe).await.json()["result"], json!({}));
        let response = http::send(at[1], "GET", "/mcp", &get_headers(&session), "").await;
        assert_eq!(response.status(), 200);
        let mut stream = EventReader::new(response);
        let edit = call(5, "tools/call", json!({"name": "edit_note"}));
        assert_eq!(post(at[0], &headers, &edit).await.json()["result"]["content"][0]["text"], "edited");
        let note = tokio::time::timeout(Duration::from_secs(3), stream.next())
            .await
            .expect("the update within 3 s")
            .expect("a notification");
        assert_valid_legacy_message(&note);
        assert_eq!(
            note,
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "note://today"}})
        );
        // Unsubscribed through B: A's next change is not sent to B's stream.
        let unsubscribe = call(6, "resources/unsubscribe", json!({"uri": "note://today"}));
        assert_eq!(post(at[1], &headers, &unsubscribe).await.json()["result"], json!({}));
        assert_eq!(post(at[0], &headers, &edit).await.status, 200);
        let quiet = tokio::time::timeout(Duration::from_millis(700), stream.next()).await;
        assert!(quiet.is_err(), "no update after unsubscribing: {quiet:?}");
    })
    .await;
}

#[tokio::test]
async fn an_answer_posted_to_another_instance_reaches_the_waiting_request() {
    let prefix = unique_prefix("legacy-answer");
    let servers = vec![instance(&prefix, &url()), instance(&prefix, &url())];
    with_instances(servers, |at| async move {
        // A new deployment's memory of used single-use states (the
        // answer's round is one) begins as it starts: what is issued in
        // its first 2 s (3 s: kept in whole seconds) is refused.
        tokio::time::sleep(Duration::from_millis(3_100)).await;
        let session = initialize(at[0], json!({"elicitation": {}})).await;
        let headers = session_headers(&session, VERSION);
        let body = call(2, "tools/call", json!({"name": "greet_legacy"}));
        let response = http::send(at[0], "POST", "/mcp", &headers, body.to_string()).await;
        let mut events = EventReader::new(response);
        let ask = events.next().await.expect("the elicitation request");
        assert_valid_legacy_message(&ask);
        let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Ada"}}});
        let started = Instant::now();
        assert_eq!(post(at[1], &headers, &answer).await.status, 202);
        let result = events.next().await.expect("the result");
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
        assert_valid_legacy_response("CallToolResult", &result);
        assert_eq!(result["result"]["content"][0]["text"], "Hello, Ada!");

        // notifications/cancelled through B stops A's request.
        let body = call(3, "tools/call", json!({"name": "greet_legacy"}));
        let response = http::send(at[0], "POST", "/mcp", &headers, body.to_string()).await;
        let mut events = EventReader::new(response);
        assert_eq!(events.next().await.expect("the ask")["method"], "elicitation/create");
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}});
        assert_eq!(post(at[1], &headers, &cancel).await.status, 202);
        let started = Instant::now();
        assert_eq!(events.next().await, None, "the stream closes without a response");
        assert!(started.elapsed() < Duration::from_secs(2));
    })
    .await;
}

#[tokio::test]
async fn delete_on_one_instance_ends_the_session_on_all() {
    let prefix = unique_prefix("legacy-delete");
    let servers = vec![instance(&prefix, &url()), instance(&prefix, &url())];
    with_instances(servers, |at| async move {
        settle().await;
        let session = initialize(at[0], json!({})).await;
        let headers = session_headers(&session, VERSION);
        let response = http::send(at[0], "GET", "/mcp", &get_headers(&session), "").await;
        assert_eq!(response.status(), 200);
        let mut stream = EventReader::new(response);
        assert_eq!(
            post(at[0], &headers, &call(2, "ping", json!({})))
                .await
                .status,
            200
        );
        let reply = http::request(at[1], "DELETE", "/mcp", &headers, "").await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        // A's stream closes, and A refuses the session from now on.
        let ended = tokio::time::timeout(Duration::from_secs(3), stream.next()).await;
        assert_eq!(ended.expect("the stream ends within 3 s"), None);
        for address in [at[0], at[1]] {
            let reply = post(address, &headers, &call(3, "ping", json!({}))).await;
            assert_eq!(reply.status, 404, "{}", reply.body);
            assert_eq!(reply.json()["error"]["code"], -32001);
        }
    })
    .await;
}

#[tokio::test]
async fn without_redis_a_session_is_refused_with_a_retryable_503() {
    let servers = vec![instance("unused:", &dead_address())];
    with_instances(servers, |at| async move {
        // `initialize` needs nothing shared; the session's requests do.
        let session = initialize(at[0], json!({})).await;
        let headers = session_headers(&session, VERSION);
        let started = Instant::now();
        let reply = post(at[0], &headers, &call(2, "ping", json!({}))).await;
        assert!(started.elapsed() < Duration::from_secs(3), "fails fast");
        assert_eq!(reply.status, 503, "{}", reply.body);
        assert_eq!(reply.header("retry-after"), Some("1"));
        assert_eq!(
            reply.body,
            r#"{"jsonrpc":"2.0","error":{"code":-31001,"message":"this session's shared state cannot be reached now; retry shortly"}}"#
        );
        mcp_test_support::assert_valid_error(&reply.json());
        // Modern requests on the same endpoint keep working.
        let discover = mcp_test_support::request(1, "server/discover", json!({}));
        let reply = http::post(at[0], &discover).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
    })
    .await;
}
