//! The tracker over Streamable HTTP with authorization: reading needs a
//! token, writing needs `issues:write`, and the author of an issue is the
//! token's subject. Served on a real socket, with its own schema's pool.

mod common;

use std::net::SocketAddr;

use common::TestDb;
use mcp_runtime::auth::{Authorization, TokenVerifier, VerifyError, VerifyFuture};
use mcp_runtime::security::Principal;
use mcp_runtime::{HttpOptions, ServerBuilder};
use mcp_test_support::{assert_valid_response, call_tool, http};
use serde_json::{Value, json};

/// Tokens are names: `reader` may read, `writer` may also write.
struct Names;

impl TokenVerifier for Names {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(async move {
            let scopes: &[&str] = match token {
                "reader" => &[],
                "writer" => &["issues:write"],
                _ => return Err(VerifyError::Signature),
            };
            Ok(Principal::new(token).with_scopes(scopes.iter().copied()))
        })
    }
}

/// Serves the tracker, with the test's pool, from a thread of its own (as
/// `run()` serves from worker threads: the pool is used from a runtime
/// other than the one that made it).
fn serve(db: &TestDb) -> SocketAddr {
    let pool = db.pool.clone();
    let (send, receive) = std::sync::mpsc::channel::<SocketAddr>();
    let address = http::serve_in_thread(move |listener| async move {
        let address = receive.recv().unwrap();
        let authorization = Authorization::new(format!("http://{address}/mcp"))
            .authorization_server("https://auth.example.com")
            .verifier(Names);
        let server = ServerBuilder::new("tracker", "0.1.0")
            .state(pool)
            .build()
            .unwrap();
        let options = HttpOptions::new().authorization(authorization);
        server
            .serve_http(listener, options, std::future::pending())
            .await
            .unwrap();
    });
    send.send(address).unwrap();
    address
}

async fn post(address: SocketAddr, token: Option<&str>, message: String) -> http::Reply {
    let mut headers = http::mcp_headers(&message);
    if let Some(token) = token {
        headers.push(("authorization".to_owned(), format!("Bearer {token}")));
    }
    http::request(address, "POST", "/mcp", &headers, message).await
}

#[tokio::test]
async fn writes_need_the_issues_write_scope() {
    let db = TestDb::new().await;
    let address = serve(&db);
    let create = || call_tool(1, "create_issue", json!({"title": "From HTTP"}));

    let anonymous = post(address, None, create()).await;
    assert_eq!(anonymous.status.as_u16(), 401);
    let reader = post(address, Some("reader"), create()).await;
    assert_eq!(reader.status.as_u16(), 403);
    let challenge = reader.header("www-authenticate").unwrap();
    assert!(
        challenge.starts_with("Bearer error=\"insufficient_scope\"")
            && challenge.contains("scope=\"issues:write\""),
        "{challenge}"
    );

    let writer = post(address, Some("writer"), create()).await;
    assert_eq!(writer.status.as_u16(), 200);
    let response: Value = writer.json();
    assert_valid_response("CallToolResultResponse", &response);
    let issue = &response["result"]["structuredContent"];
    assert_eq!(
        (&issue["title"], &issue["author"]),
        (&json!("From HTTP"), &json!("writer"))
    );

    // Reading needs a token, but no scope.
    let read = post(
        address,
        Some("reader"),
        call_tool(2, "get_issue", json!({"id": 1})),
    )
    .await;
    assert_eq!(read.status.as_u16(), 200);
    assert_eq!(
        read.json()["result"]["structuredContent"]["author"],
        "writer"
    );
    db.drop_schema().await;
}

/// One pool, made on the test's runtime, used from two HTTP workers (each a
/// runtime of its own, as `run()` serves): connections a worker opened are
/// handed to the other, and every request is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_pool_serves_every_worker() {
    let db = TestDb::new().await;
    let server = ServerBuilder::new("tracker", "0.1.0")
        .state(db.pool.clone())
        .build()
        .unwrap();
    let service = server
        .http_service(HttpOptions::new().workers(2).without_rate_limit())
        .unwrap();
    let app = axum::Router::new().route_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let created = post(
        address,
        None,
        call_tool(1, "create_issue", json!({"title": "shared"})),
    )
    .await;
    assert_eq!(created.status.as_u16(), 200, "{}", created.body);
    let clients = (0..8).map(|client| {
        tokio::spawn(async move {
            for call in 0..25 {
                let message = call_tool(call, "get_issue", json!({"id": 1}));
                let reply = post(address, None, message).await;
                assert_eq!(
                    reply.status.as_u16(),
                    200,
                    "client {client}: {}",
                    reply.body
                );
                let issue = &reply.json()["result"]["structuredContent"];
                assert_eq!(issue["title"], "shared", "client {client}: {}", reply.body);
            }
        })
    });
    for client in clients.collect::<Vec<_>>() {
        client.await.unwrap();
    }
    db.drop_schema().await;
}
