//! Multi round-trip requests over Streamable HTTP: rounds of one flow served
//! by different instances that share only the state key, and state bound to
//! the authenticated principal.
#![cfg(feature = "http")]

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use mcp_runtime::security::Principal;
use mcp_runtime::{ElicitForm, HttpOptions, Input, KeyRing, Server, ServerBuilder, tool};
use mcp_test_support::http::{self, Reply};
use mcp_test_support::{assert_valid, assert_valid_error, meta_with};
use serde_json::{Value, json};

#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Answer {
    text: String,
}

/// Asks two questions, the second depending on the first.
#[tool]
async fn interview(topic: String, #[ctx] input: Input) -> Result<String, String> {
    let first = input
        .elicit::<Answer>(format!("What do you know about {topic}?"))
        .await
        .accepted()
        .ok_or("declined")?;
    let second = input
        .elicit::<Answer>(format!("Why \"{}\"?", first.text))
        .await
        .accepted()
        .ok_or("declined")?;
    Ok(format!("{topic}: {} because {}", first.text, second.text))
}

const SHARED_KEY: [u8; 32] = [42; 32];

fn instance(key: [u8; 32]) -> Server {
    ServerBuilder::new("mrtr-http", "1.0.0")
        .request_state(mcp_runtime::RequestStateOptions::new().keys(KeyRing::new(key)))
        .build()
        .unwrap()
}

fn call(id: i64, retry: &Value) -> String {
    let mut params = json!({
        "name": "interview",
        "arguments": {"topic": "rust"},
        "_meta": meta_with(json!({"elicitation": {}})),
    });
    for (key, value) in retry.as_object().unwrap() {
        params[key] = value.clone();
    }
    let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    assert_valid("CallToolRequest", &message);
    message.to_string()
}

fn answer(key: &str, text: &str, state: &str) -> Value {
    json!({
        "inputResponses": {key: {"action": "accept", "content": {"text": text}}},
        "requestState": state
    })
}

/// The body of a `200 application/json` reply, validated.
fn result_of(reply: &Reply) -> Value {
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let body = reply.json();
    assert_valid("CallToolResultResponse", &body);
    body["result"].clone()
}

fn refused(reply: &Reply) {
    assert_eq!(reply.status, 400, "{}", reply.body);
    let body = reply.json();
    assert_valid_error(&body);
    assert_eq!(body["error"]["code"], -32602);
}

async fn serve(
    server: Server,
    listener: tokio::net::TcpListener,
    stop: tokio::sync::watch::Receiver<bool>,
) {
    let mut stop = stop;
    server
        .serve_http(listener, HttpOptions::new(), async move {
            let _ = stop.wait_for(|stopped| *stopped).await;
        })
        .await
        .expect("serves");
}

#[tokio::test]
async fn rounds_continue_on_any_instance_sharing_the_key() {
    let listeners = [(); 3].map(|()| std::net::TcpListener::bind("127.0.0.1:0").unwrap());
    let addresses: Vec<SocketAddr> = listeners.iter().map(|l| l.local_addr().unwrap()).collect();
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let instances = [SHARED_KEY, SHARED_KEY, [9; 32]];
    let [s0, s1, s2] = listeners.map(|listener| {
        listener.set_nonblocking(true).unwrap();
        tokio::net::TcpListener::from_std(listener).unwrap()
    });
    let servers = async {
        tokio::join!(
            serve(instance(instances[0]), s0, stopped.clone()),
            serve(instance(instances[1]), s1, stopped.clone()),
            serve(instance(instances[2]), s2, stopped.clone()),
        )
    };
    let [a, b, other] = [addresses[0], addresses[1], addresses[2]];

    let client = async move {
        // Round 1 on instance A.
        let first = result_of(&http::post(a, &call(1, &json!({}))).await);
        assert_eq!(first["resultType"], "input_required");
        assert_eq!(
            first["inputRequests"]["elicitation_1"]["params"]["message"],
            "What do you know about rust?"
        );
        let state = first["requestState"].as_str().unwrap().to_owned();

        // An instance with another key cannot continue it.
        refused(&http::post(other, &call(2, &answer("elicitation_1", "speed", &state))).await);

        // Round 2 on instance B.
        let second =
            result_of(&http::post(b, &call(3, &answer("elicitation_1", "speed", &state))).await);
        assert_eq!(
            second["inputRequests"]["elicitation_2"]["params"]["message"],
            "Why \"speed\"?"
        );
        let state = second["requestState"].as_str().unwrap().to_owned();

        // Round 3 back on instance A.
        let done =
            result_of(&http::post(a, &call(4, &answer("elicitation_2", "no GC", &state))).await);
        assert_eq!(
            done,
            json!({
                "resultType": "complete",
                "content": [{"type": "text", "text": "rust: speed because no GC"}],
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "mrtr-http", "version": "1.0.0"}}
            })
        );
        stop.send(true).unwrap();
    };
    let (((), (), ()), ()) = tokio::time::timeout(Duration::from_secs(20), async {
        tokio::join!(servers, client)
    })
    .await
    .expect("the flow finishes and the servers stop");
}

/// Stand-in for real authentication: trusts an `x-user` header.
async fn authenticate(mut request: Request, next: Next) -> Response {
    if let Some(user) = request
        .headers()
        .get("x-user")
        .and_then(|v| v.to_str().ok())
    {
        let principal = Principal::new(user);
        request.extensions_mut().insert(principal);
    }
    next.run(request).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_is_bound_to_the_principal() {
    let mcp = instance(SHARED_KEY)
        .http_service(HttpOptions::new().workers(1))
        .unwrap();
    let app = Router::new()
        .route_service("/mcp", mcp)
        .layer(middleware::from_fn(authenticate));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let post_as = |user: &'static str, message: String| async move {
        let mut headers = http::mcp_headers(&message);
        headers.push(("x-user".to_owned(), user.to_owned()));
        http::request(address, "POST", "/mcp", &headers, message).await
    };
    let first = result_of(&post_as("alice", call(1, &json!({}))).await);
    let state = first["requestState"].as_str().unwrap().to_owned();
    let retry = answer("elicitation_1", "traits", &state);
    // Another user who captured the state cannot use it.
    refused(&post_as("mallory", call(2, &retry)).await);
    // Nor can an unauthenticated caller.
    refused(&http::post(address, &call(3, &retry)).await);
    // Its owner can.
    let second = result_of(&post_as("alice", call(4, &retry)).await);
    assert_eq!(second["resultType"], "input_required");
}
