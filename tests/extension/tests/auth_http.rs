//! Authorization scopes on an extension's method, over Streamable HTTP
//! with a custom token verifier: `pings/reset` needs `ping:admin`, checked
//! before the handler runs, and the handler sees the caller.

mod common;

use std::net::SocketAddr;

use common::*;
use mcp_runtime::HttpOptions;
use mcp_runtime::auth::{Authorization, TokenVerifier, VerifyError, VerifyFuture};
use mcp_runtime::security::Principal;
use mcp_test_support::http::{self, Reply};
use serde_json::json;

/// Tokens are names here: `admin` holds `ping:admin`, `user` no scope;
/// anything else is forged.
#[derive(Debug)]
struct Names;

impl TokenVerifier for Names {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(async move {
            let scopes: &[&str] = match token {
                "admin" => &["ping:admin"],
                "user" => &[],
                _ => return Err(VerifyError::Signature),
            };
            Ok(Principal::new(format!("test {token}")).with_scopes(scopes.iter().copied()))
        })
    }
}

fn authorized(address: SocketAddr) -> HttpOptions {
    HttpOptions::new().authorization(
        Authorization::new(format!("http://{address}/mcp"))
            .authorization_server("https://auth.example.com")
            .verifier(Names),
    )
}

async fn serve<F, Fut>(client: F)
where
    F: FnOnce(SocketAddr) -> Fut,
    Fut: Future<Output = ()>,
{
    with_http(authorized, client).await;
}

/// POSTs `message` with `Authorization: Bearer <token>` (none without a
/// token).
async fn post(address: SocketAddr, token: Option<&str>, message: &str) -> Reply {
    let mut headers = http::mcp_headers(message);
    if let Some(token) = token {
        headers.push(("authorization".into(), format!("Bearer {token}")));
    }
    http::request(address, "POST", "/mcp", &headers, message.to_owned()).await
}

/// Without the scope: 403 `insufficient_scope` naming it, and the handler
/// does not run (the counters are untouched). With it: the reset runs and
/// names the caller from `ctx.principal()`.
#[tokio::test]
async fn reset_needs_the_admin_scope_and_sees_the_caller() {
    serve(|address| async move {
        let ping = negotiated(1, "com.example/ping", json!({"message": "hi"}));
        let reply = post(address, Some("user"), &ping).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.json(), pong(1, "hi"));

        let reset = negotiated(2, "pings/reset", json!({}));
        let reply = post(address, Some("user"), &reset).await;
        assert_eq!(reply.status, 403, "{}", reply.body);
        let challenge = format!(
            r#"Bearer error="insufficient_scope", scope="ping:admin", resource_metadata="http://{address}/.well-known/oauth-protected-resource/mcp", error_description="this request needs the scope(s) ping:admin""#
        );
        assert_eq!(reply.header("www-authenticate"), Some(challenge.as_str()));
        let stats_request = plain(3, "pings/stats", json!({}));
        let reply = post(address, Some("user"), &stats_request).await;
        assert_eq!(reply.json(), stats(3, 1, 0), "the refused reset did not run");

        let reply = post(address, Some("admin"), &reset).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let body = reply.json();
        assert_valid_extension_response(&body);
        let expected = result(2, json!({"resultType": "complete", "resetBy": "test admin"}));
        assert_eq!(body, expected);
        let reply = post(address, Some("user"), &stats_request).await;
        assert_eq!(reply.json(), stats(3, 0, 0));
    })
    .await;
}

/// Every extension method needs a token once authorization is on, the
/// open one too: 401 with the metadata's address.
#[tokio::test]
async fn extension_methods_need_a_token() {
    serve(|address| async move {
        for message in [
            plain(1, "pings/stats", json!({})),
            negotiated(2, "com.example/ping", json!({"message": "hi"})),
        ] {
            let reply = post(address, None, &message).await;
            assert_eq!(reply.status, 401, "{}", reply.body);
            let challenge = format!(
                r#"Bearer resource_metadata="http://{address}/.well-known/oauth-protected-resource/mcp""#
            );
            assert_eq!(reply.header("www-authenticate"), Some(challenge.as_str()));
            let reply = post(address, Some("forged"), &message).await;
            assert_eq!(reply.status, 401, "{}", reply.body);
        }
    })
    .await;
}

/// The scope an extension's method declares is published in the Protected
/// Resource Metadata, like the scopes tools declare.
#[tokio::test]
async fn the_scope_is_published_in_the_metadata() {
    serve(|address| async move {
        let path = "/.well-known/oauth-protected-resource/mcp";
        let reply = http::request(address, "GET", path, &[], "").await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let metadata = reply.json();
        assert_eq!(metadata["resource"], format!("http://{address}/mcp"));
        assert_eq!(metadata["scopes_supported"], json!(["ping:admin"]));
    })
    .await;
}
