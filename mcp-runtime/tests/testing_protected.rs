//! `TestClient` against a protected server (issue 54): in process on
//! behalf of a principal, through the items' own scope check, and over
//! real HTTP with `testing::serve_http`, where the gate answers 401 and
//! 403 with their challenges.
#![cfg(all(feature = "http", feature = "client"))]

use mcp_runtime::auth::{Authorization, TokenVerifier, VerifyError, VerifyFuture};
use mcp_runtime::client::BearerChallenge;
use mcp_runtime::security::Principal;
use mcp_runtime::testing::{TestClient, serve_http};
use mcp_runtime::{HttpOptions, Server, ServerBuilder, tool};
use serde_json::json;

/// Publishes a note.
#[tool(scopes = ["notes:write"])]
fn publish(text: String, #[ctx] principal: Option<&Principal>) -> String {
    format!(
        "{} published {text}",
        principal.map_or("nobody", Principal::id)
    )
}

/// `reader-token` may read notes, `writer-token` write them too; other
/// tokens are forged (the guide's testing chapter shows these tests).
struct StaticTokens;

impl TokenVerifier for StaticTokens {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(async move {
            let scopes: &[&str] = match token {
                "reader-token" => &["notes:read"],
                "writer-token" => &["notes:read", "notes:write"],
                _ => return Err(VerifyError::Signature),
            };
            Ok(Principal::new(token).with_scopes(scopes.iter().copied()))
        })
    }
}

fn server() -> Server {
    ServerBuilder::new("notes", "1.0.0").build().unwrap()
}

#[tokio::test]
async fn in_process_a_principal_without_the_scope_is_refused_like_over_http() {
    let reader = Principal::new("ann").with_scopes(["notes:read"]);
    let mut client = TestClient::with_server(server()).as_principal(reader);
    let error = client
        .call_tool("publish", json!({"text": "hi"}))
        .await
        .error();
    assert_eq!(error.code, -31003);
    assert_eq!(
        error.message,
        "insufficient_scope: this request needs the scope(s) notes:write"
    );
    assert_eq!(error.data, Some(json!({"requiredScopes": ["notes:write"]})));

    let writer = Principal::new("bob").with_scopes(["notes:read", "notes:write"]);
    let mut client = TestClient::with_server(server()).as_principal(writer);
    client
        .call_tool("publish", json!({"text": "hi"}))
        .await
        .assert_text("bob published hi");
}

#[tokio::test]
async fn over_http_no_token_is_401_and_a_missing_scope_403_with_their_challenges() {
    let served = serve_http(server(), |address| {
        HttpOptions::new().authorization(
            Authorization::new(format!("http://{address}/mcp"))
                .authorization_server("https://auth.example.com")
                .verifier(StaticTokens),
        )
    });
    let metadata = format!(
        "http://{}/.well-known/oauth-protected-resource/mcp",
        served.address()
    );

    let refusal = served
        .client()
        .call_tool("publish", json!({"text": "hi"}))
        .await
        .refusal();
    // Refused at the client's first request, the `tools/list` it sends to
    // learn the tool's header arguments: no scope guidance for a list.
    assert_eq!(refusal.status, 401);
    assert_eq!(
        refusal.challenge,
        BearerChallenge::parse(&format!(r#"Bearer resource_metadata="{metadata}""#))
    );

    let refusal = served
        .client_with_token("reader-token")
        .call_tool("publish", json!({"text": "hi"}))
        .await
        .refusal();
    assert_eq!(refusal.status, 403);
    let challenge = refusal.challenge.expect("a Bearer challenge");
    assert_eq!(challenge.error.as_deref(), Some("insufficient_scope"));
    assert_eq!(challenge.scope.as_deref(), Some("notes:write"));
    assert_eq!(challenge.resource_metadata, Some(metadata));
    assert_eq!(
        challenge.error_description.as_deref(),
        Some("this request needs the scope(s) notes:write")
    );

    served
        .client_with_token("writer-token")
        .call_tool("publish", json!({"text": "hi"}))
        .await
        .assert_text("writer-token published hi");
}

#[test]
#[should_panic(expected = "the server does not start")]
fn a_configuration_error_is_reported_when_serving_starts() {
    // The resource URI must be absolute: refused at startup.
    let _served = serve_http(server(), |_| {
        HttpOptions::new().authorization(
            Authorization::new("not a url")
                .authorization_server("https://auth.example.com")
                .verifier(StaticTokens),
        )
    });
}
