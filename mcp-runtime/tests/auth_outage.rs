//! The built-in JWT verifier over HTTP while its issuer is down (issue
//! 53): a request whose token cannot be verified is answered 503 with
//! `Retry-After`, never 401 `invalid_token` (a client told that discards
//! its token and re-authorizes against a server that is down), and the
//! same tokens verify once the issuer is back.
#![cfg(all(feature = "auth", feature = "http"))]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mcp_runtime::auth::Authorization;
use mcp_runtime::{HttpOptions, ServerBuilder, tool};
use mcp_test_support::http::{self, Reply};
use mcp_test_support::request;
use serde_json::{Value, json};

/// Says who called.
#[tool]
fn whoami(#[ctx] principal: Option<&mcp_runtime::security::Principal>) -> String {
    principal.map_or("nobody", |p| p.id()).to_owned()
}

const KEY_A: (&str, &[u8], &str) = (
    "a",
    include_bytes!("../src/auth/testdata/ec-a.pk8.der"),
    include_str!("../src/auth/testdata/ec-a.jwk.json"),
);
const KEY_B: (&str, &[u8], &str) = (
    "b",
    include_bytes!("../src/auth/testdata/ec-b.pk8.der"),
    include_str!("../src/auth/testdata/ec-b.jwk.json"),
);

fn public((kid, _, jwk): (&str, &[u8], &str)) -> Value {
    let mut jwk: Value = serde_json::from_str(jwk).unwrap();
    jwk["kid"] = kid.into();
    jwk["alg"] = "ES256".into();
    jwk
}

/// An authorization server publishing key a only, that answers 500 to
/// everything while `up` is false.
fn issuer(up: Arc<AtomicBool>) -> String {
    let address = http::serve_in_thread(move |listener| async move {
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let metadata = json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks")});
        let keys = json!({"keys": [public(KEY_A)]});
        let app = axum::Router::new()
            .route(
                "/.well-known/oauth-authorization-server",
                axum::routing::get(move || async move { json_response(&metadata) }),
            )
            .route(
                "/jwks",
                axum::routing::get(move || async move { json_response(&keys) }),
            )
            .layer(axum::middleware::from_fn(
                move |request: axum::extract::Request, next: axum::middleware::Next| {
                    let serving = up.load(Ordering::SeqCst);
                    async move {
                        if serving {
                            next.run(request).await
                        } else {
                            axum::response::IntoResponse::into_response(
                                ::http::StatusCode::INTERNAL_SERVER_ERROR,
                            )
                        }
                    }
                },
            ));
        axum::serve(listener, app).await.unwrap();
    });
    format!("http://{address}")
}

fn json_response(value: &Value) -> impl axum::response::IntoResponse + use<> {
    (
        [(::http::header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
}

/// An MCP server trusting `issuer`'s JWTs.
fn server(issuer: String) -> SocketAddr {
    let (send, receive) = std::sync::mpsc::channel::<HttpOptions>();
    let address = http::serve_in_thread(move |listener| async move {
        let options = receive.recv().unwrap();
        let server = ServerBuilder::new("outage", "1.0.0").build().unwrap();
        server
            .serve_http(listener, options, std::future::pending())
            .await
            .unwrap();
    });
    let authorization = Authorization::new(format!("http://{address}/mcp"))
        .authorization_server(issuer)
        .jwt();
    send.send(HttpOptions::new().authorization(authorization))
        .unwrap();
    address
}

fn token((kid, der, _): (&str, &[u8], &str), issuer: &str, address: SocketAddr) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(kid.to_owned());
    header.typ = Some("at+jwt".to_owned());
    let claims = json!({
        "iss": issuer, "sub": "ann", "aud": format!("http://{address}/mcp"),
        "iat": now, "exp": now + 300,
    });
    jsonwebtoken::encode(&header, &claims, &EncodingKey::from_ec_der(der)).unwrap()
}

async fn call(address: SocketAddr, token: &str) -> Reply {
    let message = request(1, "tools/call", json!({"name": "whoami", "arguments": {}}));
    let mut headers = http::mcp_headers(&message);
    headers.push(("authorization".into(), format!("Bearer {token}")));
    http::request(address, "POST", "/mcp", &headers, message).await
}

/// `count` calls at once, their replies.
async fn calls_at_once(address: SocketAddr, token: &str, count: usize) -> Vec<Reply> {
    let calls: Vec<_> = (0..count)
        .map(|_| {
            let token = token.to_owned();
            tokio::spawn(async move { call(address, &token).await })
        })
        .collect();
    let mut replies = Vec::new();
    for reply in calls {
        replies.push(reply.await.unwrap());
    }
    replies
}

fn assert_unavailable(reply: &Reply) {
    assert_eq!(reply.status, 503, "{}", reply.body);
    assert_eq!(reply.header("retry-after"), Some("5"));
    assert_eq!(reply.header("www-authenticate"), None);
    assert_eq!(
        reply.body,
        "the access token cannot be verified now; retry shortly"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_issuer_outage_answers_503_to_every_request_then_tokens_verify() {
    let up = Arc::new(AtomicBool::new(false));
    let issuer = issuer(up.clone());
    let address = server(issuer.clone());
    let good = token(KEY_A, &issuer, address);
    // Measured before: 1 x 503 and the rest 401 "signed with an unknown key".
    for reply in calls_at_once(address, &good, 50).await {
        assert_unavailable(&reply);
    }
    up.store(true, Ordering::SeqCst);
    // The keys are tried again at most every second.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    for reply in calls_at_once(address, &good, 50).await {
        assert_eq!(reply.status, 200, "{}", reply.body);
        let text = &reply.json()["result"]["content"][0]["text"];
        assert_eq!(text, &json!(format!("{issuer} ann")));
    }
}

/// No regression: a key the issuer does not publish, while its keys are
/// cached and fresh, is unknown: 401 `invalid_token`.
#[tokio::test]
async fn a_genuinely_unknown_key_is_still_invalid_token() {
    let issuer = issuer(Arc::new(AtomicBool::new(true)));
    let address = server(issuer.clone());
    assert_eq!(
        call(address, &token(KEY_A, &issuer, address)).await.status,
        200
    );
    let reply = call(address, &token(KEY_B, &issuer, address)).await;
    assert_eq!(reply.status, 401);
    assert_eq!(
        reply.header("www-authenticate"),
        Some(
            format!(
                r#"Bearer error="invalid_token", resource_metadata="http://{address}/.well-known/oauth-protected-resource/mcp", error_description="the token is signed with an unknown key""#
            )
            .as_str()
        )
    );
}
