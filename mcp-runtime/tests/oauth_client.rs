#![cfg(feature = "oauth-client")]
//! The client's OAuth flow against a scripted authorization server and MCP
//! server: authorization with PKCE the first time, then, from another
//! client sharing the token cache, the cached token, and a refresh when
//! the server no longer takes it. (The conformance suite's 25 `auth/*`
//! scenarios cover discovery, registration, scopes and `iss`.)
#![cfg(all(feature = "http", feature = "client"))]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::Response;
use axum::routing::{get, post};
use base64::Engine as _;
use mcp_runtime::client::oauth::{Authorize, OAuth};
use mcp_runtime::client::{Client, Remote};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

/// What the scripted servers saw and decided.
#[derive(Default)]
struct Script {
    base: String,
    challenge: Option<String>,
    authorizations: Vec<HashMap<String, String>>,
    grants: Vec<HashMap<String, String>>,
    /// Access tokens the MCP server takes.
    valid: Vec<String>,
}

type Shared = Arc<Mutex<Script>>;

fn params(text: &str) -> HashMap<String, String> {
    text.split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| {
            let decode = |t: &str| {
                percent_encoding::percent_decode_str(t)
                    .decode_utf8_lossy()
                    .into_owned()
            };
            (decode(k), decode(v))
        })
        .collect()
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

async fn resource_metadata(State(script): State<Shared>) -> Response {
    let base = script.lock().unwrap().base.clone();
    json_response(
        StatusCode::OK,
        &json!({"resource": format!("{base}/mcp"), "authorization_servers": [base], "scopes_supported": ["notes:read"]}),
    )
}

async fn server_metadata(State(script): State<Shared>) -> Response {
    let base = script.lock().unwrap().base.clone();
    json_response(
        StatusCode::OK,
        &json!({
            "issuer": base,
            "authorization_endpoint": format!("{base}/authorize"),
            "token_endpoint": format!("{base}/token"),
            "registration_endpoint": format!("{base}/register"),
            "code_challenge_methods_supported": ["S256"],
            "scopes_supported": ["notes:read", "offline_access"],
            "token_endpoint_auth_methods_supported": ["none"],
            "authorization_response_iss_parameter_supported": true
        }),
    )
}

async fn register() -> Response {
    json_response(
        StatusCode::CREATED,
        &json!({"client_id": "client-1", "token_endpoint_auth_method": "none"}),
    )
}

async fn authorize(State(script): State<Shared>, request: Request) -> Response {
    let query = params(request.uri().query().unwrap_or_default());
    let mut script = script.lock().unwrap();
    script.challenge = query.get("code_challenge").cloned();
    script.authorizations.push(query.clone());
    let location = format!(
        "{}?code=code-1&state={}&iss={}",
        query["redirect_uri"], query["state"], script.base
    );
    Response::builder()
        .status(StatusCode::FOUND)
        .header(header::LOCATION, location)
        .body(Body::empty())
        .unwrap()
}

async fn token(State(script): State<Shared>, request: Request) -> Response {
    let body = to_bytes(request.into_body(), 1 << 16).await.unwrap();
    let form = params(&String::from_utf8_lossy(&body));
    let mut script = script.lock().unwrap();
    script.grants.push(form.clone());
    let (access, refresh) = match form["grant_type"].as_str() {
        "authorization_code" => {
            let verifier = form
                .get("code_verifier")
                .map(String::as_str)
                .unwrap_or_default();
            let computed =
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier));
            if script.challenge.as_deref() != Some(computed.as_str()) {
                return json_response(StatusCode::BAD_REQUEST, &json!({"error": "invalid_grant"}));
            }
            ("access-1", "refresh-1")
        }
        "refresh_token" if form["refresh_token"] == "refresh-1" => ("access-2", "refresh-2"),
        _ => return json_response(StatusCode::BAD_REQUEST, &json!({"error": "invalid_grant"})),
    };
    script.valid.push(access.to_owned());
    json_response(
        StatusCode::OK,
        &json!({"access_token": access, "refresh_token": refresh, "token_type": "Bearer", "scope": "notes:read offline_access"}),
    )
}

async fn mcp(State(script): State<Shared>, request: Request) -> Response {
    let bearer = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let body = to_bytes(request.into_body(), 1 << 16).await.unwrap();
    let message: Value = serde_json::from_slice(&body).unwrap();
    let script = script.lock().unwrap();
    if !bearer.is_some_and(|t| script.valid.contains(&t)) {
        let metadata = format!("{}/.well-known/oauth-protected-resource/mcp", script.base);
        return Response::builder()
            .status(StatusCode::UNAUTHORIZED)
            .header(
                header::WWW_AUTHENTICATE,
                format!("Bearer resource_metadata=\"{metadata}\""),
            )
            .body(Body::empty())
            .unwrap();
    }
    let result = match message["method"].as_str() {
        Some("tools/list") => {
            json!({"resultType": "complete", "tools": [{"name": "read_note", "inputSchema": {"type": "object"}}]})
        }
        _ => json!({"resultType": "complete"}),
    };
    json_response(
        StatusCode::OK,
        &json!({"jsonrpc": "2.0", "id": message["id"], "result": result}),
    )
}

async fn list_tools(url: &str, cache: &std::path::Path) -> Vec<String> {
    let oauth = OAuth::new("oauth-client-test")
        .authorize(Authorize::Fetch)
        .token_cache(cache);
    let mut client = Client::new(Remote::new(url).unwrap().oauth(oauth));
    client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect()
}

#[tokio::test]
async fn authorizes_once_then_uses_the_cached_token_and_refreshes_it() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let script: Shared = Arc::new(Mutex::new(Script {
        base: base.clone(),
        ..Script::default()
    }));
    let app = Router::new()
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(resource_metadata),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(server_metadata),
        )
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .route("/mcp", post(mcp))
        .with_state(script.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let cache =
        std::env::temp_dir().join(format!("mcp-oauth-client-test-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&cache);
    let url = format!("{base}/mcp");

    // First client: 401, discovery, registration, authorization with PKCE.
    assert_eq!(list_tools(&url, &cache).await, ["read_note"]);
    {
        let script = script.lock().unwrap();
        let authorization = &script.authorizations[0];
        assert_eq!(authorization["resource"], url);
        assert_eq!(authorization["scope"], "notes:read offline_access");
        assert_eq!(authorization["code_challenge_method"], "S256");
        assert_eq!(script.grants.len(), 1);
        assert_eq!(script.grants[0]["resource"], url);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&cache).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the token cache is its owner's only");
    }

    // Second client, same cache: the cached token, then (once the server
    // no longer takes it) a refresh; no second authorization.
    assert_eq!(list_tools(&url, &cache).await, ["read_note"]);
    script.lock().unwrap().valid.retain(|t| t != "access-1");
    assert_eq!(list_tools(&url, &cache).await, ["read_note"]);
    let script = script.lock().unwrap();
    assert_eq!(script.authorizations.len(), 1);
    let kinds: Vec<&str> = script
        .grants
        .iter()
        .map(|g| g["grant_type"].as_str())
        .collect();
    assert_eq!(kinds, ["authorization_code", "refresh_token"]);
    assert_eq!(script.grants[1]["resource"], url);
    let _ = std::fs::remove_file(&cache);
    // The cache's lock file stays with it (removing it would break the
    // lock for a run holding it); this test's run is over.
    let _ = std::fs::remove_file(cache.with_extension("json.lock"));
}
