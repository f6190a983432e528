//! The MCP endpoint mounted in an axum `Router`, next to another route and
//! behind middleware that authenticates the caller: handlers see what the
//! middleware attached.
#![cfg(feature = "http")]

use std::net::SocketAddr;

use axum::Router;
use axum::extract::{ConnectInfo, Request};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::get;
use mcp_runtime::{HttpOptions, HttpRequest, PeerAddr, ServerBuilder, tool};
use mcp_test_support::{assert_valid, call_tool, http};
use serde_json::json;

#[derive(Clone, Debug)]
struct User(String);

/// Says who is calling, as the middleware established.
#[tool]
fn whoami(#[ctx] request: Option<&HttpRequest>) -> String {
    let Some(request) = request else {
        return "not over HTTP".to_owned();
    };
    let user = request
        .extensions()
        .get::<User>()
        .map_or("nobody", |u| u.0.as_str());
    let peer = request
        .peer_addr()
        .map(|p| p.ip().to_string())
        .unwrap_or_default();
    format!("{user} from {peer}")
}

/// Stand-in for real authentication: trusts an `x-user` header.
async fn authenticate(mut request: Request, next: Next) -> Response {
    let user = request
        .headers()
        .get("x-user")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("anonymous")
        .to_owned();
    request.extensions_mut().insert(User(user));
    if let Some(ConnectInfo(peer)) = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .copied()
    {
        request.extensions_mut().insert(PeerAddr(peer));
    }
    next.run(request).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mounted_next_to_other_routes_behind_middleware() {
    let server = ServerBuilder::new("axum-test", "1.0.0").build().unwrap();
    let mcp = server.http_service(HttpOptions::new().workers(2)).unwrap();
    let app = Router::new()
        .route("/health", get(|| async { "ok" }))
        .route_service("/mcp", mcp)
        .layer(middleware::from_fn(authenticate));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
        .unwrap();
    });

    let health = http::request(address, "GET", "/health", &[], "").await;
    assert_eq!(health.body, "ok");

    let message = call_tool(1, "whoami", json!({}));
    let mut headers = http::mcp_headers(&message);
    headers.push(("x-user".to_owned(), "ada".to_owned()));
    let reply = http::request(address, "POST", "/mcp", &headers, message.clone()).await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.body);
    assert_valid("CallToolResultResponse", &reply.json());
    assert_eq!(
        reply.json()["result"]["content"][0]["text"],
        "ada from 127.0.0.1"
    );

    // The endpoint's own checks still apply inside the router.
    let reply = http::request(address, "GET", "/mcp", &headers, "").await;
    assert_eq!(reply.status.as_u16(), 405);
    let mut evil = headers.clone();
    evil.push(("origin".to_owned(), "http://evil.example.com".to_owned()));
    let reply = http::request(address, "POST", "/mcp", &evil, message).await;
    assert_eq!(reply.status.as_u16(), 403);
}
