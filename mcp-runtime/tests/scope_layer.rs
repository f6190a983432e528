//! The built-in scope check, an item layer: a principal that middleware in
//! front of the server established (no authorization of the server's own,
//! so no gate answered first) reaches a scoped tool only with its scopes,
//! and a refused caller reaches none of the user's layers.

#![cfg(feature = "http")]

use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::Request;
use axum::middleware::{self as axum_middleware, Next as AxumNext};
use axum::response::Response;
use mcp_runtime::middleware::{self, BoxError, Invocation, Next, Output};
use mcp_runtime::security::Principal;
use mcp_runtime::{HttpOptions, ServerBuilder, tool};
use mcp_test_support::http;
use mcp_test_support::{assert_valid, assert_valid_error, meta_with};
use serde_json::{Value, json};

/// Publishes a note.
#[tool(scopes = ["notes:write"])]
fn publish(text: String) -> String {
    format!("published {text}")
}

/// How many calls reached the user's layer.
static REACHED: AtomicUsize = AtomicUsize::new(0);

async fn count(call: Invocation, next: Next<Invocation>) -> Result<Output, BoxError> {
    REACHED.fetch_add(1, Ordering::SeqCst);
    next.run(call).await
}

/// Stand-in for an organisation's own authentication: the user and the
/// scopes come from headers.
async fn authenticate(mut request: Request, next: AxumNext) -> Response {
    let headers = request.headers();
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let user = header("x-user").map(str::to_owned);
    let scopes: Vec<String> = (header("x-scopes").unwrap_or_default())
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    if let Some(user) = user {
        let principal = Principal::new(user).with_scopes(scopes);
        request.extensions_mut().insert(principal);
    }
    next.run(request).await
}

fn call(id: i64) -> String {
    let params = json!({
        "name": "publish",
        "arguments": {"text": "hello"},
        "_meta": meta_with(json!({})),
    });
    let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    assert_valid("CallToolRequest", &message);
    message.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_principal_without_the_scopes_is_refused_before_any_layer() {
    let server = ServerBuilder::new("scopes", "1.0.0")
        .layer(middleware::from_fn(count))
        .build()
        .unwrap();
    let mcp = server.http_service(HttpOptions::new().workers(1)).unwrap();
    let app = Router::new()
        .route_service("/mcp", mcp)
        .layer(axum_middleware::from_fn(authenticate));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let post_as = |user: &'static str, scopes: &'static str, message: String| async move {
        let mut headers = http::mcp_headers(&message);
        headers.push(("x-user".to_owned(), user.to_owned()));
        headers.push(("x-scopes".to_owned(), scopes.to_owned()));
        http::request(address, "POST", "/mcp", &headers, message).await
    };

    let refused = post_as("mallory", "notes:read", call(1)).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    let body: Value = refused.json();
    assert_valid_error(&body);
    assert_eq!(
        body,
        json!({
            "jsonrpc": "2.0",
            "id": 1,
            "error": {
                "code": -31003,
                "message": "insufficient_scope: this request needs the scope(s) notes:write",
                "data": {"requiredScopes": ["notes:write"]}
            }
        })
    );
    assert_eq!(REACHED.load(Ordering::SeqCst), 0, "no user layer saw it");

    let allowed = post_as("alice", "notes:read notes:write", call(2)).await;
    let body: Value = allowed.json();
    assert_valid("CallToolResultResponse", &body);
    assert_eq!(body["result"]["content"][0]["text"], "published hello");
    assert_eq!(REACHED.load(Ordering::SeqCst), 1);

    // Without a principal (no authorization at all) scopes are not
    // enforced: they are declared for authorization to check.
    let anonymous = http::post(address, &call(3)).await;
    let body: Value = anonymous.json();
    assert_eq!(body["result"]["content"][0]["text"], "published hello");
}
