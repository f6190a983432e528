//! The JWT verifier against a stub authorization server on loopback (real
//! HTTP: discovery, JWKS fetch, refresh), with tokens signed here. One test
//! per verifier error path.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use std::sync::Mutex;

use super::fetch::Fetcher;
use super::jwt::{JwtSettings, JwtVerifier, SigningAlgorithm};
use super::resource::ResourceUri;
use super::verifier::{TokenVerifier, VerifyError};

const RESOURCE: &str = "http://127.0.0.1:9999/mcp";

struct Key {
    kid: &'static str,
    der: &'static [u8],
    jwk: &'static str,
}

const KEY_A: Key = Key {
    kid: "a",
    der: include_bytes!("testdata/ec-a.pk8.der"),
    jwk: include_str!("testdata/ec-a.jwk.json"),
};
const KEY_B: Key = Key {
    kid: "b",
    der: include_bytes!("testdata/ec-b.pk8.der"),
    jwk: include_str!("testdata/ec-b.jwk.json"),
};
const KEY_C: Key = Key {
    kid: "c",
    der: include_bytes!("testdata/ec-c.pk8.der"),
    jwk: include_str!("testdata/ec-c.jwk.json"),
};

fn public(key: &Key) -> Value {
    let mut jwk: Value = serde_json::from_str(key.jwk).unwrap();
    jwk["kid"] = key.kid.into();
    jwk["alg"] = "ES256".into();
    jwk["use"] = "sig".into();
    jwk
}

/// A stub authorization server: OIDC discovery only (as oidc-provider),
/// a JWKS that tests can swap, and a count of JWKS fetches.
struct Stub {
    issuer: String,
    jwks: Arc<Mutex<Value>>,
    fetches: Arc<AtomicU32>,
    /// While false, every endpoint answers 500 (an outage).
    up: Arc<AtomicBool>,
}

async fn stub(keys: &[&Key], claimed_issuer: Option<&str>) -> Stub {
    use axum::routing::get;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let jwks = Arc::new(Mutex::new(
        json!({"keys": keys.iter().map(|k| public(k)).collect::<Vec<_>>()}),
    ));
    let fetches = Arc::new(AtomicU32::new(0));
    let metadata = json!({
        "issuer": claimed_issuer.map_or(issuer.clone(), str::to_owned),
        "jwks_uri": format!("{issuer}/jwks"),
    });
    let (served, counter) = (jwks.clone(), fetches.clone());
    let up = Arc::new(AtomicBool::new(true));
    let serving = up.clone();
    let outage = axum::middleware::from_fn(
        move |request: axum::extract::Request, next: axum::middleware::Next| {
            let serving = serving.load(Ordering::SeqCst);
            async move {
                if serving {
                    next.run(request).await
                } else {
                    axum::response::IntoResponse::into_response(
                        http::StatusCode::INTERNAL_SERVER_ERROR,
                    )
                }
            }
        },
    );
    let app = axum::Router::new()
        .route(
            "/.well-known/openid-configuration",
            get(move || {
                let metadata = metadata.clone();
                async move { json_response(&metadata) }
            }),
        )
        .route(
            "/jwks",
            get(move || {
                counter.fetch_add(1, Ordering::SeqCst);
                let keys = served.lock().unwrap().clone();
                async move { json_response(&keys) }
            }),
        )
        .layer(outage);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Stub {
        issuer,
        jwks,
        fetches,
        up,
    }
}

fn json_response(value: &Value) -> impl axum::response::IntoResponse + use<> {
    (
        [(http::header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
}

fn verifier(stub: &Stub, settings: JwtSettings) -> JwtVerifier {
    JwtVerifier::new(
        ResourceUri::parse(RESOURCE).unwrap(),
        std::slice::from_ref(&stub.issuer),
        settings,
        &Fetcher::new(Duration::from_secs(2)),
    )
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn claims(stub: &Stub) -> Value {
    json!({
        "iss": stub.issuer, "sub": "ann", "client_id": "notes-app",
        "aud": RESOURCE, "scope": "notes:read notes:write",
        "iat": now(), "exp": now() + 300, "jti": "1",
    })
}

fn sign(key: &Key, typ: &str, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(key.kid.to_owned());
    header.typ = Some(typ.to_owned());
    jsonwebtoken::encode(&header, claims, &EncodingKey::from_ec_der(key.der)).unwrap()
}

fn b64(value: &Value) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
}

async fn verify(v: &JwtVerifier, token: &str) -> Result<crate::security::Principal, VerifyError> {
    v.verify(token).await
}

#[tokio::test]
async fn a_valid_token_gives_the_principal() {
    let stub = stub(&[&KEY_A], None).await;
    let v = verifier(&stub, JwtSettings::new());
    let p = verify(&v, &sign(&KEY_A, "at+jwt", &claims(&stub)))
        .await
        .unwrap();
    assert_eq!(p.id(), format!("{} ann", stub.issuer));
    assert_eq!(p.subject(), Some("ann"));
    assert_eq!(p.client_id(), Some("notes-app"));
    assert_eq!(p.issuer(), Some(stub.issuer.as_str()));
    assert!(p.has_scopes(&["notes:read", "notes:write"]));
    assert_eq!(p.claim("jti"), Some(&json!("1")));
    // Cached: a second token costs no fetch.
    verify(&v, &sign(&KEY_A, "application/at+jwt", &claims(&stub)))
        .await
        .unwrap();
    assert_eq!(stub.fetches.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn claim_errors() {
    let stub = stub(&[&KEY_A], None).await;
    let v = verifier(&stub, JwtSettings::new());
    let with = |key: &str, value: Value| {
        let mut c = claims(&stub);
        c[key] = value;
        sign(&KEY_A, "at+jwt", &c)
    };
    let without = |key: &str| {
        let mut c = claims(&stub);
        c.as_object_mut().unwrap().remove(key);
        sign(&KEY_A, "at+jwt", &c)
    };
    assert_eq!(
        verify(&v, &with("aud", json!("https://other.example.com/mcp"))).await,
        Err(VerifyError::Audience)
    );
    assert_eq!(
        verify(
            &v,
            &with("aud", json!(["https://a.example", "https://b.example"]))
        )
        .await,
        Err(VerifyError::Audience)
    );
    assert!(
        verify(
            &v,
            &with(
                "aud",
                json!(["https://a.example", "HTTP://127.0.0.1:9999/mcp"])
            )
        )
        .await
        .is_ok()
    );
    assert_eq!(
        verify(&v, &with("exp", json!(now() - 120))).await,
        Err(VerifyError::Expired)
    );
    assert!(
        verify(&v, &with("exp", json!(now() - 10))).await.is_ok(),
        "within the leeway"
    );
    assert_eq!(
        verify(&v, &with("nbf", json!(now() + 120))).await,
        Err(VerifyError::NotYetValid)
    );
    assert_eq!(
        verify(&v, &without("exp")).await,
        Err(VerifyError::Claim("exp"))
    );
    assert_eq!(
        verify(&v, &without("aud")).await,
        Err(VerifyError::Claim("aud"))
    );
    assert_eq!(
        verify(&v, &without("iss")).await,
        Err(VerifyError::Claim("iss"))
    );
    let mut anonymous = claims(&stub);
    anonymous.as_object_mut().unwrap().remove("sub");
    anonymous.as_object_mut().unwrap().remove("client_id");
    assert_eq!(
        verify(&v, &sign(&KEY_A, "at+jwt", &anonymous)).await,
        Err(VerifyError::Claim("sub"))
    );
}

#[tokio::test]
async fn untrusted_issuer_is_refused_without_fetching_anything() {
    let stub = stub(&[&KEY_A], None).await;
    let v = verifier(&stub, JwtSettings::new());
    let mut c = claims(&stub);
    c["iss"] = "http://127.0.0.1:1/evil".into();
    assert_eq!(
        verify(&v, &sign(&KEY_A, "at+jwt", &c)).await,
        Err(VerifyError::Issuer)
    );
    assert_eq!(stub.fetches.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn bad_signature() {
    let stub = stub(&[&KEY_A], None).await;
    let v = verifier(&stub, JwtSettings::new());
    // Signed with key c but claiming to be key a.
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("a".into());
    header.typ = Some("at+jwt".into());
    let forged = jsonwebtoken::encode(
        &header,
        &claims(&stub),
        &EncodingKey::from_ec_der(KEY_C.der),
    )
    .unwrap();
    assert_eq!(verify(&v, &forged).await, Err(VerifyError::Signature));
    // A payload changed after signing.
    let good = sign(&KEY_A, "at+jwt", &claims(&stub));
    let parts: Vec<&str> = good.split('.').collect();
    let mut changed = claims(&stub);
    changed["scope"] = "notes:admin".into();
    let tampered = format!("{}.{}.{}", parts[0], b64(&changed), parts[2]);
    assert_eq!(verify(&v, &tampered).await, Err(VerifyError::Signature));
}

#[tokio::test]
async fn algorithm_none_hmac_and_wrong_type_are_refused() {
    let stub = stub(&[&KEY_A], None).await;
    let v = verifier(&stub, JwtSettings::new());
    let none = format!(
        "{}.{}.",
        b64(&json!({"alg": "none", "typ": "at+jwt"})),
        b64(&claims(&stub))
    );
    assert_eq!(
        verify(&v, &none).await,
        Err(VerifyError::Algorithm("none".into()))
    );
    // HS256 keyed with the public JWK's text: the classic key-confusion
    // attack. Refused before any key is looked at.
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some("a".into());
    header.typ = Some("at+jwt".into());
    let hmac = jsonwebtoken::encode(
        &header,
        &claims(&stub),
        &EncodingKey::from_secret(KEY_A.jwk.as_bytes()).unwrap(),
    )
    .unwrap();
    assert_eq!(
        verify(&v, &hmac).await,
        Err(VerifyError::Algorithm("HS256".into()))
    );
    // A narrower allow-list still refuses HMAC (it cannot even name it).
    let v_es = verifier(
        &stub,
        JwtSettings::new().algorithms([SigningAlgorithm::ES256]),
    );
    assert_eq!(
        verify(&v_es, &hmac).await,
        Err(VerifyError::Algorithm("HS256".into()))
    );
    // Not an access token (an ID token has typ JWT).
    let id_token = sign(&KEY_A, "JWT", &claims(&stub));
    assert_eq!(verify(&v, &id_token).await, Err(VerifyError::Type));
    let lenient = verifier(&stub, JwtSettings::new().accept_any_type());
    assert!(verify(&lenient, &id_token).await.is_ok());
    // Outside a narrower allow-list.
    let rs_only = verifier(
        &stub,
        JwtSettings::new().algorithms([SigningAlgorithm::RS256]),
    );
    assert_eq!(
        verify(&rs_only, &sign(&KEY_A, "at+jwt", &claims(&stub))).await,
        Err(VerifyError::Algorithm("ES256".into()))
    );
}

#[tokio::test]
async fn malformed_tokens() {
    let stub = stub(&[&KEY_A], None).await;
    let v = verifier(&stub, JwtSettings::new());
    for token in [
        "abc",
        "a.b",
        "a.b.c.d",
        "!!!.e30.x",
        "e30.!!!.x",
        "bm90IGpzb24.e30.x",
    ] {
        assert!(
            matches!(verify(&v, token).await, Err(VerifyError::Malformed(_))),
            "{token}"
        );
    }
    // A critical extension nobody here understands, on a validly signed
    // token.
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("a".into());
    header.typ = Some("at+jwt".into());
    header.crit = Some(vec!["exp-ext".into()]);
    let critical = jsonwebtoken::encode(
        &header,
        &claims(&stub),
        &EncodingKey::from_ec_der(KEY_A.der),
    )
    .unwrap();
    assert!(matches!(
        verify(&v, &critical).await,
        Err(VerifyError::Malformed(_))
    ));
    // A header with no `alg`.
    let token = format!(
        "{}.{}.x",
        b64(&json!({"typ": "at+jwt"})),
        b64(&claims(&stub))
    );
    assert!(matches!(
        verify(&v, &token).await,
        Err(VerifyError::Malformed(_))
    ));
}

#[tokio::test]
async fn unknown_kid_refreshes_once_then_is_rate_limited() {
    let stub = stub(&[&KEY_A], None).await;
    let v = verifier(
        &stub,
        JwtSettings::new().min_refresh_interval(Duration::from_secs(60)),
    );
    verify(&v, &sign(&KEY_A, "at+jwt", &claims(&stub)))
        .await
        .unwrap();
    assert_eq!(stub.fetches.load(Ordering::SeqCst), 1);
    // Key b is not published: the unknown kid triggers one refresh...
    let token_b = sign(&KEY_B, "at+jwt", &claims(&stub));
    assert_eq!(verify(&v, &token_b).await, Err(VerifyError::UnknownKey));
    assert_eq!(
        stub.fetches.load(Ordering::SeqCst),
        1,
        "first fetch is recent: cooldown holds"
    );
    assert_eq!(v.fetches().await, 1);
}

#[tokio::test]
async fn rotated_key_works_after_refresh() {
    let stub = stub(&[&KEY_A], None).await;
    let v = verifier(
        &stub,
        JwtSettings::new().min_refresh_interval(Duration::from_millis(200)),
    );
    verify(&v, &sign(&KEY_A, "at+jwt", &claims(&stub)))
        .await
        .unwrap();
    // The server rotates to key b (and drops a).
    *stub.jwks.lock().unwrap() = json!({"keys": [public(&KEY_B)]});
    tokio::time::sleep(Duration::from_millis(250)).await;
    let p = verify(&v, &sign(&KEY_B, "at+jwt", &claims(&stub)))
        .await
        .unwrap();
    assert_eq!(p.subject(), Some("ann"));
    assert_eq!(stub.fetches.load(Ordering::SeqCst), 2);
    // A flood of unknown kids right after costs no further fetch.
    for _ in 0..5 {
        assert_eq!(
            verify(&v, &sign(&KEY_C, "at+jwt", &claims(&stub))).await,
            Err(VerifyError::UnknownKey)
        );
    }
    assert_eq!(stub.fetches.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn metadata_naming_another_issuer_is_not_used() {
    let stub = stub(&[&KEY_A], Some("https://honest.example")).await;
    let v = verifier(&stub, JwtSettings::new());
    assert!(matches!(
        verify(&v, &sign(&KEY_A, "at+jwt", &claims(&stub))).await,
        Err(VerifyError::Unavailable(_))
    ));
    assert_eq!(stub.fetches.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn unreachable_issuer_is_unavailable_not_invalid() {
    let issuer = "http://127.0.0.1:9".to_owned();
    let v = JwtVerifier::new(
        ResourceUri::parse(RESOURCE).unwrap(),
        std::slice::from_ref(&issuer),
        JwtSettings::new(),
        &Fetcher::new(Duration::from_millis(300)),
    );
    let mut c = json!({"iss": issuer, "sub": "x", "aud": RESOURCE, "exp": now() + 60});
    c["iss"] = issuer.clone().into();
    assert!(matches!(
        verify(&v, &sign(&KEY_A, "at+jwt", &c)).await,
        Err(VerifyError::Unavailable(_))
    ));
}

#[tokio::test]
async fn configured_jwks_uri_skips_discovery() {
    let stub = stub(&[&KEY_A], Some("https://wrong.example")).await;
    let jwks = format!("{}/jwks", stub.issuer);
    let v = verifier(
        &stub,
        JwtSettings::new().jwks_uri(stub.issuer.clone(), jwks),
    );
    assert!(
        verify(&v, &sign(&KEY_A, "at+jwt", &claims(&stub)))
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn stale_keys_are_refetched_after_their_max_age() {
    let stub = stub(&[&KEY_A], None).await;
    let v = verifier(
        &stub,
        JwtSettings::new().max_key_age(Duration::from_millis(200)),
    );
    let token = sign(&KEY_A, "at+jwt", &claims(&stub));
    verify(&v, &token).await.unwrap();
    verify(&v, &token).await.unwrap();
    assert_eq!(
        stub.fetches.load(Ordering::SeqCst),
        1,
        "fresh keys are reused"
    );
    tokio::time::sleep(Duration::from_millis(250)).await;
    verify(&v, &token).await.unwrap();
    assert_eq!(
        stub.fetches.load(Ordering::SeqCst),
        2,
        "stale keys are fetched again"
    );
    // The issuer dropped key a meanwhile: once stale again, tokens signed
    // with it stop verifying.
    *stub.jwks.lock().unwrap() = json!({"keys": [public(&KEY_B)]});
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert_eq!(verify(&v, &token).await, Err(VerifyError::UnknownKey));
}

/// `count` verifications of `token` at once, their verdicts in order.
async fn verify_at_once(
    v: &Arc<JwtVerifier>,
    token: &str,
    count: usize,
) -> Vec<Result<crate::security::Principal, VerifyError>> {
    let tasks: Vec<_> = (0..count)
        .map(|_| {
            let (v, token) = (v.clone(), token.to_owned());
            tokio::spawn(async move { v.verify(&token).await })
        })
        .collect();
    let mut verdicts = Vec::new();
    for task in tasks {
        verdicts.push(task.await.unwrap());
    }
    verdicts
}

fn unavailable() -> Result<crate::security::Principal, VerifyError> {
    Err(VerifyError::Unavailable(
        "the authorization server's keys are unavailable".into(),
    ))
}

/// With no keys cached and the issuer down, every request is unjudged
/// (503), not only the one that tried the fetch: those that waited on it
/// and those in its cooldown were once refused as signed by an unknown
/// key (401), and their clients discarded good tokens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_issuer_outage_leaves_every_token_unjudged_until_it_is_back() {
    let stub = stub(&[&KEY_A], None).await;
    stub.up.store(false, Ordering::SeqCst);
    let v = Arc::new(verifier(&stub, JwtSettings::new()));
    let token = sign(&KEY_A, "at+jwt", &claims(&stub));
    for verdict in verify_at_once(&v, &token, 50).await {
        assert_eq!(verdict, unavailable());
    }
    // In the cooldown after the failed fetch, too.
    assert_eq!(verify(&v, &token).await, unavailable());
    stub.up.store(true, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    for verdict in verify_at_once(&v, &token, 50).await {
        assert_eq!(verdict.unwrap().subject(), Some("ann"));
    }
    assert_eq!(stub.fetches.load(Ordering::SeqCst), 1);
}

/// Keys cached, the issuer rotates in a key and goes down: a token
/// signed with the new key cannot be judged (503) until the issuer is
/// back, and then verifies within a second, not after `min_refresh`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_rotated_in_during_an_outage_is_unjudged_not_unknown() {
    let stub = stub(&[&KEY_A], None).await;
    let v = Arc::new(verifier(
        &stub,
        JwtSettings::new().min_refresh_interval(Duration::from_millis(100)),
    ));
    verify(&v, &sign(&KEY_A, "at+jwt", &claims(&stub)))
        .await
        .unwrap();
    *stub.jwks.lock().unwrap() = json!({"keys": [public(&KEY_A), public(&KEY_B)]});
    stub.up.store(false, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(150)).await;
    let token_b = sign(&KEY_B, "at+jwt", &claims(&stub));
    for verdict in verify_at_once(&v, &token_b, 50).await {
        assert_eq!(verdict, unavailable());
    }
    // Tokens signed with a key still held are served meanwhile.
    verify(&v, &sign(&KEY_A, "at+jwt", &claims(&stub)))
        .await
        .unwrap();
    stub.up.store(true, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    assert_eq!(verify(&v, &token_b).await.unwrap().subject(), Some("ann"));
    // With fresh keys from a reachable issuer, an unknown kid is unknown.
    let token_c = sign(&KEY_C, "at+jwt", &claims(&stub));
    assert_eq!(verify(&v, &token_c).await, Err(VerifyError::UnknownKey));
}
