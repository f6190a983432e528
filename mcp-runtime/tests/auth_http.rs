//! Authorization on the HTTP transport, with a custom verifier (no
//! network): which requests need a token, the answers to each refusal,
//! scopes on tools, resources and prompts, hidden items, the metadata
//! endpoints, configuration errors, and that nothing changes without it.
//! The built-in JWT verifier against a real provider is tested in
//! `examples/secure-notes/tests/oidc.rs` (`tests/auth/run.sh`).
#![cfg(feature = "http")]

use std::net::SocketAddr;

use mcp_runtime::auth::{Authorization, TokenVerifier, VerifyError, VerifyFuture};
#[cfg(feature = "client")]
use mcp_runtime::client::{AuthorizationError, Client, ClientError, Remote};
use mcp_runtime::security::Principal;
use mcp_runtime::{
    CacheHint, CacheScope, CompletionRequest, ElicitForm, HttpOptions, HttpRequest, Input, Server,
    ServerBuilder, prompt, resource, tool,
};
use mcp_test_support::http::{self, Reply};
use mcp_test_support::{call_tool, request};
use serde_json::{Value, json};

/// Writes.
#[tool(scopes = ["notes:write"])]
fn write(#[ctx] principal: Option<&Principal>) -> String {
    format!("written by {}", principal.map_or("nobody", Principal::id))
}

#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Confirmation {
    sure: bool,
}

/// Asks before doing anything: a multi round-trip request.
#[tool]
async fn careful(#[ctx] input: Input) -> Result<String, String> {
    let answer = input
        .elicit::<Confirmation>("Sure?")
        .await
        .accepted()
        .ok_or("declined")?;
    Ok(format!("sure: {}", answer.sure))
}

/// Open to any authenticated caller.
#[tool]
fn open() -> &'static str {
    "open"
}

/// Whether the handler could read the caller's token.
#[tool]
fn sees_token(#[ctx] http: Option<&HttpRequest>) -> String {
    let header = http.and_then(|h| h.headers().get("authorization"));
    format!("authorization header visible: {}", header.is_some())
}

/// A secret.
#[resource("memo://secret", scopes = ["memo:read"])]
fn secret() -> &'static str {
    "s3cret"
}

/// Secret notes.
#[resource("memo://notes/{id}", scopes = ["memo:read"], complete(id = note_ids))]
fn secret_note(id: String) -> String {
    id
}

fn note_ids(_request: &CompletionRequest) -> Vec<String> {
    vec!["secret-plans".to_owned()]
}

/// A public memo.
#[resource("memo://public")]
fn public_memo() -> &'static str {
    "hello"
}

/// Reviews.
#[prompt(scopes = ["review"])]
fn review() -> &'static str {
    "review this"
}

/// Tokens are names here: `reader`, `writer`, `admin`, `down` (the
/// verifier is unavailable); anything else is forged.
struct Names;

impl TokenVerifier for Names {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(async move {
            let scopes: &[&str] = match token {
                "reader" => &["notes:read"],
                "writer" => &["notes:read", "notes:write", "memo:read"],
                "admin" => &["admin"],
                "down" => return Err(VerifyError::Unavailable("the verifier is down".into())),
                _ => return Err(VerifyError::Signature),
            };
            Ok(Principal::new(format!("test {token}"))
                .with_subject(token)
                .with_scopes(scopes.iter().copied()))
        })
    }
}

fn server() -> Server {
    // Public lists, so that hiding visibly makes them private.
    ServerBuilder::new("auth-http", "1.0.0")
        .cache_hints(
            mcp_runtime::CacheHints::new().lists(CacheHint::new(60_000, CacheScope::Public)),
        )
        .build()
        .unwrap()
}

/// Serves `options` on a free port in its own thread.
fn serve(options: impl FnOnce(SocketAddr) -> HttpOptions) -> SocketAddr {
    // The options name the address, known once the listener is bound.
    let (send, receive) = std::sync::mpsc::channel::<HttpOptions>();
    let address = http::serve_in_thread(move |listener| async move {
        let options = receive.recv().unwrap();
        server()
            .serve_http(listener, options, std::future::pending())
            .await
            .unwrap();
    });
    send.send(options(address)).unwrap();
    address
}

fn authorization(address: SocketAddr) -> Authorization {
    Authorization::new(format!("http://{address}/mcp"))
        .authorization_server("https://auth.example.com")
        .verifier(Names)
        .scope_implies("admin", ["notes:write", "memo:read", "review"])
}

fn meta_url(address: SocketAddr) -> String {
    format!("http://{address}/.well-known/oauth-protected-resource/mcp")
}

async fn post(address: SocketAddr, authorization: &[&str], message: &str) -> Reply {
    let mut headers = http::mcp_headers(message);
    for value in authorization {
        headers.push(("authorization".into(), (*value).to_owned()));
    }
    http::request(address, "POST", "/mcp", &headers, message.to_owned()).await
}

async fn bearer(address: SocketAddr, token: &str, message: &str) -> Reply {
    post(address, &[&format!("Bearer {token}")], message).await
}

fn text(reply: &Reply) -> Value {
    reply.json()["result"]["content"][0]["text"].clone()
}

fn www(reply: &Reply) -> &str {
    reply.header("www-authenticate").unwrap_or("")
}

#[tokio::test]
async fn every_request_needs_a_token_unless_discover_is_public() {
    let address = serve(|a| HttpOptions::new().authorization(authorization(a)));
    let discover = request(1, "server/discover", json!({}));
    let reply = post(address, &[], &discover).await;
    assert_eq!(reply.status, 401);
    assert_eq!(
        www(&reply),
        format!(r#"Bearer resource_metadata="{}""#, meta_url(address))
    );
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    assert_eq!(reply.json(), json!({"error": "unauthorized"}));
    // Notifications too, and methods that do not exist (no probing).
    let note =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
            .to_string();
    assert_eq!(post(address, &[], &note).await.status, 401);
    assert_eq!(bearer(address, "reader", &note).await.status, 202);
    assert_eq!(
        post(address, &[], &request(2, "no/such", json!({})))
            .await
            .status,
        401
    );
    // Another scheme is not a bearer token.
    let reply = post(address, &["Basic dXNlcjpwYXNz"], &discover).await;
    assert_eq!(reply.status, 401);
    assert_eq!(
        www(&reply),
        format!(r#"Bearer resource_metadata="{}""#, meta_url(address))
    );

    let public = serve(|a| HttpOptions::new().authorization(authorization(a).public_discover()));
    assert_eq!(post(public, &[], &discover).await.status, 200);
    assert_eq!(
        post(public, &[], &request(3, "tools/list", json!({})))
            .await
            .status,
        401
    );
}

#[tokio::test]
async fn refusals_have_the_spec_status_and_challenge() {
    let address = serve(|a| HttpOptions::new().authorization(authorization(a)));
    let meta = meta_url(address);
    let write = call_tool(1, "write", json!({}));

    let reply = bearer(address, "forged", &write).await;
    assert_eq!(reply.status, 401);
    assert_eq!(
        www(&reply),
        format!(
            r#"Bearer error="invalid_token", scope="notes:write", resource_metadata="{meta}", error_description="the token's signature is invalid""#
        )
    );

    let reply = bearer(address, "reader", &write).await;
    assert_eq!(reply.status, 403);
    assert_eq!(
        www(&reply),
        format!(
            r#"Bearer error="insufficient_scope", scope="notes:write", resource_metadata="{meta}", error_description="this request needs the scope(s) notes:write""#
        )
    );

    let reply = bearer(address, "down", &write).await;
    assert_eq!(reply.status, 503);
    assert_eq!(reply.header("retry-after"), Some("5"));
    assert_eq!(reply.header("www-authenticate"), None);

    let reply = post(address, &["Bearer reader", "Bearer writer"], &write).await;
    assert_eq!(reply.status, 400);
    assert_eq!(
        www(&reply),
        format!(
            r#"Bearer error="invalid_request", resource_metadata="{meta}", error_description="send exactly one Authorization header""#
        )
    );
    let reply = post(address, &["Bearer not a token"], &write).await;
    assert_eq!(reply.status, 400);

    let reply = http::request(
        address,
        "POST",
        "/mcp?x=1&access_token=writer",
        &http::mcp_headers(&write),
        write.clone(),
    )
    .await;
    assert_eq!(reply.status, 400);
    assert_eq!(
        www(&reply),
        format!(
            r#"Bearer error="invalid_request", resource_metadata="{meta}", error_description="access tokens are accepted only in the Authorization header, never in the URI""#
        )
    );
}

#[tokio::test]
async fn scopes_on_tools_resources_and_prompts_are_checked_before_the_handler() {
    let address = serve(|a| HttpOptions::new().authorization(authorization(a)));
    let reply = bearer(address, "writer", &call_tool(1, "write", json!({}))).await;
    assert_eq!(reply.status, 200);
    assert_eq!(text(&reply), "written by test writer");
    // Broader scopes imply narrower ones.
    let reply = bearer(address, "admin", &call_tool(2, "write", json!({}))).await;
    assert_eq!(text(&reply), "written by test admin");
    assert_eq!(
        bearer(address, "reader", &call_tool(3, "open", json!({})))
            .await
            .status,
        200
    );

    let read = |uri: &str| request(4, "resources/read", json!({"uri": uri}));
    for uri in ["memo://secret", "memo://notes/7"] {
        let reply = bearer(address, "reader", &read(uri)).await;
        assert_eq!(reply.status, 403, "{uri}");
        assert!(www(&reply).contains(r#"scope="memo:read""#), "{uri}");
        assert_eq!(
            bearer(address, "writer", &read(uri)).await.status,
            200,
            "{uri}"
        );
    }
    assert_eq!(
        bearer(address, "reader", &read("memo://public"))
            .await
            .status,
        200
    );

    let get = request(5, "prompts/get", json!({"name": "review"}));
    let reply = bearer(address, "writer", &get).await;
    assert_eq!(reply.status, 403);
    assert!(www(&reply).contains(r#"scope="review""#));
    assert_eq!(bearer(address, "admin", &get).await.status, 200);
    // Completing a template's variables reveals what it serves.
    let complete = request(
        7,
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "memo://notes/{id}"}, "argument": {"name": "id", "value": ""}}),
    );
    let reply = bearer(address, "reader", &complete).await;
    assert_eq!(reply.status, 403);
    assert!(www(&reply).contains(r#"scope="memo:read""#));
    let reply = bearer(address, "writer", &complete).await;
    assert_eq!(
        reply.json()["result"]["completion"]["values"],
        json!(["secret-plans"])
    );
    // Something unknown needs no scope: the usual "not found" answers.
    let reply = bearer(address, "reader", &call_tool(6, "missing", json!({}))).await;
    assert_eq!(reply.json()["error"]["code"], -32602);
}

#[tokio::test]
async fn lists_show_everything_unless_told_to_hide() {
    let names = |reply: &Reply, list: &str, key: &str| -> Vec<String> {
        reply.json()["result"][list]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| item[key].as_str().unwrap().to_owned())
            .collect()
    };
    let shown = serve(|a| HttpOptions::new().authorization(authorization(a)));
    let reply = bearer(shown, "reader", &request(1, "tools/list", json!({}))).await;
    assert_eq!(
        names(&reply, "tools", "name"),
        ["careful", "open", "sees_token", "write"]
    );
    assert_eq!(reply.json()["result"]["cacheScope"], "public");

    let hidden = serve(|a| HttpOptions::new().authorization(authorization(a).hide_unpermitted()));
    let reply = bearer(hidden, "reader", &request(1, "tools/list", json!({}))).await;
    assert_eq!(
        names(&reply, "tools", "name"),
        ["careful", "open", "sees_token"]
    );
    assert_eq!(reply.json()["result"]["cacheScope"], "private");
    assert_eq!(reply.json()["result"]["ttlMs"], 60_000);
    let reply = bearer(hidden, "reader", &request(2, "resources/list", json!({}))).await;
    assert_eq!(names(&reply, "resources", "uri"), ["memo://public"]);
    assert_eq!(reply.json()["result"]["cacheScope"], "private");
    let reply = bearer(
        hidden,
        "reader",
        &request(3, "resources/templates/list", json!({})),
    )
    .await;
    assert!(names(&reply, "resourceTemplates", "uriTemplate").is_empty());
    let reply = bearer(hidden, "reader", &request(4, "prompts/list", json!({}))).await;
    assert!(names(&reply, "prompts", "name").is_empty());
    let reply = bearer(hidden, "admin", &request(5, "prompts/list", json!({}))).await;
    assert_eq!(names(&reply, "prompts", "name"), ["review"]);
    let reply = bearer(
        hidden,
        "writer",
        &request(6, "resources/templates/list", json!({})),
    )
    .await;
    assert_eq!(
        names(&reply, "resourceTemplates", "uriTemplate"),
        ["memo://notes/{id}"]
    );
}

#[tokio::test]
async fn metadata_is_public_at_both_well_known_paths() {
    let address = serve(|a| {
        HttpOptions::new().authorization(
            authorization(a)
                .scopes_supported(["extra", "offline_access"])
                .resource_documentation("https://docs.example.com"),
        )
    });
    let mut expected = json!({
        "resource": format!("http://{address}/mcp"),
        "authorization_servers": ["https://auth.example.com"],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["extra", "memo:read", "notes:write", "review"],
        "resource_documentation": "https://docs.example.com",
    });
    // With the `auth` feature the server checks DPoP proofs, and says with
    // which algorithms (RFC 9449 §5.1).
    if cfg!(feature = "auth") {
        expected["dpop_signing_alg_values_supported"] = json!([
            "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"
        ]);
    }
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let reply = http::request(address, "GET", path, &[], "").await;
        assert_eq!(reply.status, 200);
        assert_eq!(reply.json(), expected);
        assert_eq!(reply.header("access-control-allow-origin"), Some("*"));
        let reply = http::request(address, "OPTIONS", path, &[], "").await;
        assert_eq!(reply.status, 204);
        let reply = http::request(address, "POST", path, &[], "").await;
        assert_eq!(reply.status, 405);
        assert_eq!(reply.header("allow"), Some("GET, OPTIONS"));
    }
    let reply = http::request(
        address,
        "GET",
        "/.well-known/oauth-protected-resource/other",
        &[],
        "",
    )
    .await;
    assert_eq!(reply.status, 404);
}

#[tokio::test]
async fn without_authorization_nothing_changes() {
    let address = serve(|_| HttpOptions::new());
    let reply = post(address, &[], &call_tool(1, "write", json!({}))).await;
    assert_eq!(reply.status, 200);
    assert_eq!(text(&reply), "written by nobody");
    let reply = http::request(
        address,
        "GET",
        "/.well-known/oauth-protected-resource/mcp",
        &[],
        "",
    )
    .await;
    assert_eq!(reply.status, 404);
}

#[tokio::test]
async fn configuration_errors_stop_the_server_at_startup() {
    let cases = [
        (
            Authorization::new("https://mcp.example.com/mcp").verifier(Names),
            "name at least one trusted `authorization_server`",
        ),
        (
            Authorization::new("mcp.example.com")
                .authorization_server("https://as")
                .verifier(Names),
            "not an absolute URI",
        ),
        (
            Authorization::new("https://mcp.example.com/mcp#x")
                .authorization_server("https://as")
                .verifier(Names),
            "no fragment",
        ),
        (
            Authorization::new("https://mcp.example.com/mcp")
                .authorization_server("http://as.example.com"),
            "issuers use https",
        ),
        (
            Authorization::new("https://mcp.example.com/mcp").authorization_server("https://as"),
            "choose how tokens are verified",
        ),
        (
            Authorization::new("https://mcp.example.com/mcp")
                .authorization_server("https://as")
                .verifier(Names)
                .scopes_supported(["bad scope"]),
            "is not an OAuth scope",
        ),
    ];
    for (authorization, expected) in cases {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let error = server()
            .serve_http(
                listener,
                HttpOptions::new().authorization(authorization),
                async {},
            )
            .await
            .unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
        assert!(error.to_string().contains(expected), "{error}");
    }
}

#[tokio::test]
async fn request_state_is_bound_to_the_verified_principal() {
    let address = serve(|a| HttpOptions::new().authorization(authorization(a)));
    let call = |id: i64, retry: Value| {
        let mut params = json!({
            "name": "careful",
            "arguments": {},
            "_meta": mcp_test_support::meta_with(json!({"elicitation": {}})),
        });
        for (key, value) in retry.as_object().unwrap() {
            params[key] = value.clone();
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
    };
    let first = bearer(address, "writer", &call(1, json!({}))).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let state = first.json()["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let retry = json!({
        "inputResponses": {"elicitation_1": {"action": "accept", "content": {"sure": true}}},
        "requestState": state,
    });
    // Another verified caller who captured the state cannot finish it.
    let stolen = bearer(address, "admin", &call(2, retry.clone())).await;
    assert_eq!(stolen.status, 400, "{}", stolen.body);
    assert_eq!(stolen.json()["error"]["code"], -32602);
    // Its owner can.
    let finished = bearer(address, "writer", &call(3, retry)).await;
    assert_eq!(text(&finished), "sure: true");
}

/// Legacy-era traffic (the `initialize` handshake, `Mcp-Session-Id`, the
/// session's GET and DELETE) needs the same token and scopes as modern.
#[cfg(feature = "legacy")]
#[tokio::test]
async fn legacy_sessions_are_authorized_like_modern_requests() {
    let address = serve(|address| HttpOptions::new().authorization(authorization(address)));
    let legacy = async |token: Option<&str>, session: Option<&str>, message: &str| {
        let mut headers = vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            (
                "accept".to_owned(),
                "application/json, text/event-stream".to_owned(),
            ),
        ];
        if let Some(session) = session {
            headers.push(("mcp-session-id".to_owned(), session.to_owned()));
            headers.push(("mcp-protocol-version".to_owned(), "2025-11-25".to_owned()));
        }
        if let Some(token) = token {
            headers.push(("authorization".to_owned(), format!("Bearer {token}")));
        }
        http::request(address, "POST", "/mcp", &headers, message.to_owned()).await
    };
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}"#;

    let anonymous = legacy(None, None, initialize).await;
    assert_eq!(anonymous.status, 401, "{}", anonymous.body);
    assert_eq!(
        www(&anonymous),
        format!(r#"Bearer resource_metadata="{}""#, meta_url(address))
    );

    let started = legacy(Some("reader"), None, initialize).await;
    assert_eq!(started.status, 200, "{}", started.body);
    let session = started
        .header("mcp-session-id")
        .expect("a session")
        .to_owned();

    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write","arguments":{}}}"#;
    let forged = legacy(Some("forged"), Some(&session), call).await;
    assert_eq!(forged.status, 401, "{}", forged.body);
    let unscoped = legacy(Some("reader"), Some(&session), call).await;
    assert_eq!(unscoped.status, 403, "{}", unscoped.body);
    assert!(
        www(&unscoped).contains(r#"error="insufficient_scope""#),
        "{}",
        www(&unscoped)
    );
    let written = legacy(Some("writer"), Some(&session), call).await;
    assert_eq!(written.status, 200, "{}", written.body);
    assert_eq!(text(&written), "written by test writer");
    assert!(
        written.json()["result"].get("resultType").is_none(),
        "legacy shape"
    );

    let mut end = vec![("mcp-session-id".to_owned(), session.clone())];
    let refused = http::request(address, "DELETE", "/mcp", &end, String::new()).await;
    assert_eq!(refused.status, 401, "{}", refused.body);
    end.push(("authorization".to_owned(), "Bearer reader".to_owned()));
    let ended = http::request(address, "DELETE", "/mcp", &end, String::new()).await;
    assert_eq!(ended.status, 200, "{}", ended.body);
}

/// The refusal the built-in client reports for `token` calling `write`.
#[cfg(feature = "client")]
async fn client_refusal(address: SocketAddr, token: Option<&str>) -> AuthorizationError {
    let mut remote = Remote::new(&format!("http://{address}/mcp")).unwrap();
    if let Some(token) = token {
        remote = remote.header("Authorization", &format!("Bearer {token}"));
    }
    let mut client = Client::new(remote);
    match client.call_tool("write", json!({})).await {
        Err(ClientError::Authorization(refusal)) => refusal,
        other => panic!("not refused: {other:?}"),
    }
}

#[cfg(feature = "client")]
#[tokio::test]
async fn the_built_in_client_reports_refusals_with_their_challenge() {
    let address = serve(|a| HttpOptions::new().authorization(authorization(a)));
    let meta = meta_url(address);

    // A token without the scope: 403, naming the scope.
    let refusal = client_refusal(address, Some("reader")).await;
    assert_eq!(refusal.status, 403);
    let challenge = refusal.challenge.clone().expect("a challenge");
    assert_eq!(challenge.error.as_deref(), Some("insufficient_scope"));
    assert_eq!(challenge.scopes(), ["notes:write"]);
    assert_eq!(challenge.resource_metadata.as_deref(), Some(meta.as_str()));
    assert_eq!(
        challenge.error_description.as_deref(),
        Some("this request needs the scope(s) notes:write")
    );
    assert_eq!(
        ClientError::Authorization(refusal).to_string(),
        format!(
            r#"the server refused the request: HTTP 403 insufficient_scope (needs scope "notes:write"); resource metadata at {meta}"#
        )
    );

    // No token, and a token the server does not accept: 401.
    let refusal = client_refusal(address, None).await;
    assert_eq!((refusal.status, refusal.error()), (401, None));
    assert_eq!(
        refusal.to_string(),
        format!(
            "the server refused the request: HTTP 401: a bearer token is needed; resource metadata at {meta}"
        )
    );
    let refusal = client_refusal(address, Some("forged")).await;
    assert_eq!(
        refusal.to_string(),
        format!(
            "the server refused the request: HTTP 401 invalid_token: the token's signature is invalid; resource metadata at {meta}"
        )
    );
}
