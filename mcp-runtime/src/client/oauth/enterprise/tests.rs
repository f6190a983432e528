//! Both requests of enterprise-managed authorization, byte for byte,
//! against a fake identity provider and authorization server (one local
//! HTTP server, two token endpoints), and how each step fails.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::header;
use axum::response::Response;
use axum::routing::post;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use super::*;
use crate::client::oauth::grant::form;

/// One request a fake token endpoint received.
#[derive(Clone, Debug)]
struct Seen {
    path: String,
    authorization: Option<String>,
    dpop: bool,
    body: String,
}

/// The fake endpoints' answers, and what they received.
struct Fake {
    idp: (u16, Value),
    server: (u16, Value),
    seen: Vec<Seen>,
}

type Shared = Arc<Mutex<Fake>>;

async fn token(State(fake): State<Shared>, request: Request) -> Response {
    let path = request.uri().path().to_owned();
    let headers = request.headers();
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let dpop = headers.contains_key("dpop");
    let body = to_bytes(request.into_body(), 1 << 16).await.unwrap();
    let mut fake = fake.lock().unwrap();
    fake.seen.push(Seen {
        path: path.clone(),
        authorization,
        dpop,
        body: String::from_utf8(body.to_vec()).unwrap(),
    });
    let (status, reply) = match path.as_str() {
        "/idp/token" => fake.idp.clone(),
        _ => fake.server.clone(),
    };
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(reply.to_string()))
        .unwrap()
}

/// The fake endpoints, answering `idp` and `server`: their base URL.
async fn start(idp: (u16, Value), server: (u16, Value)) -> (String, Shared) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let fake = Arc::new(Mutex::new(Fake {
        idp,
        server,
        seen: Vec::new(),
    }));
    let app = Router::new()
        .route("/idp/token", post(token))
        .route("/as/token", post(token))
        .with_state(fake.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, fake)
}

fn seen(fake: &Shared) -> Vec<Seen> {
    fake.lock().unwrap().seen.clone()
}

/// The authorization server at `base`, taking `client_secret_basic`.
fn metadata(base: &str) -> ServerMetadata {
    ServerMetadata {
        issuer: format!("{base}/as"),
        authorization_endpoint: String::new(),
        token_endpoint: format!("{base}/as/token"),
        registration_endpoint: None,
        scopes_supported: None,
        auth_methods: Some(vec!["client_secret_basic".into()]),
        grant_types: Some(vec![JWT_BEARER.into()]),
        grant_profiles: None,
        iss_parameter_supported: false,
        client_id_metadata_documents: false,
        pkce_s256: false,
    }
}

fn id_jag_issued(scope: Option<&str>) -> (u16, Value) {
    let mut reply = json!({
        "access_token": "the.id.jag",
        "issued_token_type": ID_JAG,
        "token_type": "N_A",
        "expires_in": 300,
    });
    if let Some(scope) = scope {
        reply["scope"] = json!(scope);
    }
    (200, reply)
}

fn token_issued() -> (u16, Value) {
    (200, json!({"access_token": "at-1", "token_type": "Bearer"}))
}

fn basic(id: &str, secret: &str) -> String {
    format!("Basic {}", STANDARD.encode(format!("{id}:{secret}")))
}

const RESOURCE: &str = "http://rs.test/mcp";

fn scopes(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[tokio::test]
async fn both_requests_carry_exactly_what_the_profile_says() {
    let (base, fake) = start(id_jag_issued(Some("notes:read")), token_issued()).await;
    let server = metadata(&base);
    let idp = EnterpriseIdp::new(
        format!("{base}/idp/token"),
        "idp-client",
        IdentityAssertion::id_token("eyJ.id.token\n"),
    );
    let client = Registration::given("mcp-client".into(), Some("mcp secret".into()), &server);
    let asked = scopes(&["notes:read", "notes:write"]);
    let tokens = authorize(&idp, &server, (&client, None), RESOURCE, &asked, None)
        .await
        .unwrap();
    assert_eq!(tokens.access_token, "at-1");
    // The IdP granted less than asked: the token is asked for that only.
    assert_eq!(tokens.scopes, ["notes:read"]);

    let seen = seen(&fake);
    assert_eq!(seen.len(), 2, "{seen:?}");
    let audience = format!("{base}/as");
    assert_eq!(seen[0].path, "/idp/token");
    assert_eq!(seen[0].authorization, None, "a public client at the IdP");
    assert!(!seen[0].dpop);
    assert_eq!(
        seen[0].body,
        form(&[
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:token-exchange"
            ),
            (
                "requested_token_type",
                "urn:ietf:params:oauth:token-type:id-jag"
            ),
            ("audience", &audience),
            ("resource", RESOURCE),
            ("scope", "notes:read notes:write"),
            ("subject_token", "eyJ.id.token"),
            (
                "subject_token_type",
                "urn:ietf:params:oauth:token-type:id_token"
            ),
            ("client_id", "idp-client"),
        ])
    );
    assert_eq!(seen[1].path, "/as/token");
    assert_eq!(
        seen[1].authorization.as_deref(),
        Some(basic("mcp-client", "mcp%20secret").as_str())
    );
    assert_eq!(
        seen[1].body,
        form(&[
            ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
            ("assertion", "the.id.jag"),
            ("resource", RESOURCE),
            ("scope", "notes:read"),
        ])
    );
}

#[tokio::test]
async fn the_idp_secret_goes_as_configured_and_a_saml_assertion_is_typed_so() {
    let dir = tempfile::tempdir().unwrap();
    let (secret, saml) = (dir.path().join("secret"), dir.path().join("saml"));
    std::fs::write(&secret, "idp-s3cret\n").unwrap();
    std::fs::write(&saml, "PHNhbWw6QXNzZXJ0aW9uPg\n").unwrap();
    let (base, fake) = start(id_jag_issued(None), token_issued()).await;
    let server = metadata(&base);
    let idp = EnterpriseIdp::new(
        format!("{base}/idp/token"),
        "idp-client",
        IdentityAssertion::saml2_file(&saml),
    )
    .client_secret_file(&secret);
    // A client signing its own assertions: no secret, its id in the form.
    let client = Registration::given("mcp-client".into(), None, &server);
    let signed = Some("signed.client.jwt");
    authorize(&idp, &server, (&client, signed), RESOURCE, &[], None)
        .await
        .unwrap();
    let audience = format!("{base}/as");
    let exchange = |client: &[(&'static str, &'static str)]| {
        let mut pairs = vec![
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:token-exchange",
            ),
            (
                "requested_token_type",
                "urn:ietf:params:oauth:token-type:id-jag",
            ),
            ("audience", audience.as_str()),
            ("resource", RESOURCE),
            ("subject_token", "PHNhbWw6QXNzZXJ0aW9uPg"),
            (
                "subject_token_type",
                "urn:ietf:params:oauth:token-type:saml2",
            ),
        ];
        pairs.extend_from_slice(client);
        form(&pairs)
    };
    let seen1 = seen(&fake);
    assert_eq!(
        seen1[0].authorization.as_deref(),
        Some(basic("idp-client", "idp-s3cret").as_str())
    );
    assert_eq!(seen1[0].body, exchange(&[]));
    assert_eq!(
        seen1[1].body,
        form(&[
            ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
            ("assertion", "the.id.jag"),
            ("resource", RESOURCE),
            (
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
            ),
            ("client_assertion", "signed.client.jwt"),
            ("client_id", "mcp-client"),
        ])
    );
    assert_eq!(seen1[1].authorization, None);

    let idp = idp.client_secret_post();
    authorize(&idp, &server, (&client, signed), RESOURCE, &[], None)
        .await
        .unwrap();
    let seen2 = seen(&fake);
    assert_eq!(seen2[2].authorization, None);
    assert_eq!(
        seen2[2].body,
        exchange(&[("client_id", "idp-client"), ("client_secret", "idp-s3cret")])
    );
}

#[tokio::test]
async fn a_refusal_by_the_idp_is_the_error_and_the_server_is_never_asked() {
    let refusal = (400, json!({"error": "invalid_grant"}));
    let (base, fake) = start(refusal, token_issued()).await;
    let server = metadata(&base);
    let idp = EnterpriseIdp::new(
        format!("{base}/idp/token"),
        "idp-client",
        IdentityAssertion::id_token("eyJ.id.token"),
    )
    .client_secret("idp-s3cret");
    let client = Registration::given("mcp-client".into(), Some("s".into()), &server);
    let error = authorize(&idp, &server, (&client, None), RESOURCE, &[], None)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("token exchange at the identity provider")
            && error.contains("HTTP 400, invalid_grant"),
        "{error}"
    );
    for secret in ["eyJ.id.token", "idp-s3cret"] {
        assert!(!error.contains(secret), "{error}");
    }
    assert_eq!(seen(&fake).len(), 1, "neither retried nor sent on");
}

#[tokio::test]
async fn an_answer_that_is_not_an_id_jag_is_not_presented() {
    let wrong = json!({
        "access_token": "an.access.token",
        "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
        "token_type": "Bearer",
    });
    let untyped = json!({"access_token": "a.jwt", "token_type": "N_A"});
    for (reply, issued) in [(wrong, "token-type:access_token"), (untyped, "nothing")] {
        let (base, fake) = start((200, reply), token_issued()).await;
        let server = metadata(&base);
        let idp = EnterpriseIdp::new(
            format!("{base}/idp/token"),
            "idp-client",
            IdentityAssertion::id_token("eyJ.id.token"),
        );
        let client = Registration::given("mcp-client".into(), Some("s".into()), &server);
        let error = authorize(&idp, &server, (&client, None), RESOURCE, &[], None)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            error.contains(issued) && error.contains("not an ID-JAG"),
            "{error}"
        );
        assert_eq!(seen(&fake).len(), 1);
    }
}

#[tokio::test]
async fn a_refused_id_jag_is_the_error_saying_so_and_is_not_retried() {
    let refusal = (400, json!({"error": "invalid_grant"}));
    let (base, fake) = start(id_jag_issued(None), refusal).await;
    let server = metadata(&base);
    let idp = EnterpriseIdp::new(
        format!("{base}/idp/token"),
        "idp-client",
        IdentityAssertion::id_token("eyJ.id.token"),
    );
    let client = Registration::given("mcp-client".into(), Some("s3cret".into()), &server);
    let error = authorize(&idp, &server, (&client, None), RESOURCE, &[], None)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("presenting the ID-JAG") && error.contains("HTTP 400, invalid_grant"),
        "{error}"
    );
    for secret in ["the.id.jag", "eyJ.id.token", "s3cret"] {
        assert!(!error.contains(secret), "{error}");
    }
    assert_eq!(seen(&fake).len(), 2);
}

/// An authorization server whose metadata rules the grant or the profile
/// out is not asked, and neither is the IdP.
#[tokio::test]
async fn servers_that_take_no_id_jag_are_not_asked_nor_is_the_idp() {
    let (base, fake) = start(id_jag_issued(None), token_issued()).await;
    let idp = EnterpriseIdp::new(
        format!("{base}/idp/token"),
        "idp-client",
        IdentityAssertion::id_token("eyJ.id.token"),
    );
    let mut no_grant = metadata(&base);
    no_grant.grant_types = Some(vec!["authorization_code".into()]);
    let mut no_profile = metadata(&base);
    no_profile.grant_profiles = Some(vec!["urn:example:another-profile".into()]);
    let mut listed = metadata(&base);
    listed.grant_profiles = Some(vec![ID_JAG_PROFILE.into()]);
    for (server, expected) in [
        (no_grant, "does not offer the JWT bearer grant"),
        (no_profile, "does not take ID-JAGs"),
    ] {
        let client = Registration::given("mcp-client".into(), None, &server);
        let error = authorize(&idp, &server, (&client, None), RESOURCE, &[], None)
            .await
            .unwrap_err()
            .to_string();
        assert!(error.contains(expected), "{error}");
    }
    assert!(seen(&fake).is_empty());
    let client = Registration::given("mcp-client".into(), None, &listed);
    authorize(&idp, &listed, (&client, None), RESOURCE, &[], None)
        .await
        .unwrap();
}

#[tokio::test]
async fn an_unreadable_assertion_file_is_named_and_nothing_is_sent() {
    let (base, fake) = start(id_jag_issued(None), token_issued()).await;
    let server = metadata(&base);
    let idp = EnterpriseIdp::new(
        format!("{base}/idp/token"),
        "idp-client",
        IdentityAssertion::id_token_file("/nonexistent/id_token"),
    );
    let client = Registration::given("mcp-client".into(), None, &server);
    let error = authorize(&idp, &server, (&client, None), RESOURCE, &[], None)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("the user's ID token /nonexistent/id_token cannot be read"),
        "{error}"
    );
    assert!(seen(&fake).is_empty());
}

/// The DPoP key binds the MCP server's token: the authorization server
/// gets a proof, the IdP none.
#[cfg(feature = "oauth-client-jose")]
#[tokio::test]
async fn only_the_token_request_carries_a_dpop_proof() {
    let (base, fake) = start(id_jag_issued(None), token_issued()).await;
    let server = metadata(&base);
    let idp = EnterpriseIdp::new(
        format!("{base}/idp/token"),
        "idp-client",
        IdentityAssertion::id_token("eyJ.id.token"),
    );
    let client = Registration::given("mcp-client".into(), Some("s".into()), &server);
    let key = DpopKey::generate().unwrap();
    authorize(&idp, &server, (&client, None), RESOURCE, &[], Some(&key))
        .await
        .unwrap();
    let seen = seen(&fake);
    assert!(!seen[0].dpop && seen[1].dpop, "{seen:?}");
}
