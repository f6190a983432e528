//! DPoP-bound tokens (RFC 9449) from the real provider: the client sends a
//! proof with its token request, the provider binds the token to the
//! proof's key (`cnf.jkt`), and the server accepts it only with a fresh
//! proof by that key for the very request.
//!
//! Proofs are made here with the provider's test key `b` (as a client's
//! key; `tests/auth/keys`), so that each refusal can be provoked: replayed,
//! for another URL or method, stale, for another token, the token sent as
//! a bearer token, without the server's nonce, and replayed on a second
//! instance that shares Redis with the first.

use std::sync::atomic::{AtomicU64, Ordering};

use jsonwebtoken::jwk::Jwk;
use mcp_runtime::auth::DpopSettings;
use sha2::{Digest as _, Sha256};

use super::*;

/// The client's DPoP key: the test key `b`, its public half in the proofs.
struct DpopKey {
    der: Vec<u8>,
    public: Jwk,
}

impl DpopKey {
    fn load() -> DpopKey {
        let der = std::fs::read(auth_dir().join("keys/b.pk8.der")).unwrap();
        let text = std::fs::read_to_string(auth_dir().join("keys/b.jwk.json")).unwrap();
        let full: Value = serde_json::from_str(&text).unwrap();
        let public = json!({"kty": "EC", "crv": "P-256", "x": full["x"], "y": full["y"]});
        DpopKey {
            der,
            public: serde_json::from_value(public).unwrap(),
        }
    }

    /// A proof for `method` on `url`, with `ath` for `token` if given, and
    /// whatever `adjust` changes.
    fn proof(
        &self,
        method: &str,
        url: &str,
        token: Option<&str>,
        adjust: impl FnOnce(&mut Value),
    ) -> String {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let mut claims = json!({
            "jti": format!("proof-{}-{}", now(), NEXT.fetch_add(1, Ordering::Relaxed)),
            "htm": method,
            "htu": url,
            "iat": now(),
        });
        if let Some(token) = token {
            claims["ath"] = URL_SAFE_NO_PAD.encode(Sha256::digest(token)).into();
        }
        adjust(&mut claims);
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".to_owned());
        header.jwk = Some(self.public.clone());
        jsonwebtoken::encode(&header, &claims, &EncodingKey::from_ec_der(&self.der)).unwrap()
    }

    /// A proof for `token` on a POST to `mcp`.
    fn for_mcp(&self, mcp: &Mcp, token: &str) -> String {
        self.proof("POST", &mcp.resource, Some(token), |_| {})
    }
}

impl Provider {
    /// A client_credentials token of `client` bound to `key`.
    async fn bound_token(&self, client: &str, key: &DpopKey, resource: &str) -> String {
        let proof = key.proof("POST", &format!("{}/token", self.issuer()), None, |_| {});
        let body = format!(
            "grant_type=client_credentials&resource={}&scope=notes%3Aread%20notes%3Awrite",
            encode(resource)
        );
        let basic = STANDARD.encode(format!("{client}:{client}-secret"));
        let address: SocketAddr = format!("127.0.0.1:{}", self.port).parse().unwrap();
        let headers = [
            (
                "content-type".into(),
                "application/x-www-form-urlencoded".into(),
            ),
            ("authorization".into(), format!("Basic {basic}")),
            ("dpop".into(), proof),
        ];
        let reply = http::request(address, "POST", "/token", &headers, body).await;
        assert_eq!(reply.status, 200, "token endpoint: {}", reply.body);
        assert_eq!(reply.json()["token_type"], "DPoP", "{}", reply.body);
        reply.json()["access_token"].as_str().unwrap().to_owned()
    }
}

impl Mcp {
    /// `message` with `Authorization: DPoP` and the given proofs.
    async fn post_dpop(&self, token: &str, proofs: &[&str], message: &str) -> Reply {
        let mut headers = http::mcp_headers(message);
        headers.push(("authorization".into(), format!("DPoP {token}")));
        for proof in proofs {
            headers.push(("dpop".into(), (*proof).to_owned()));
        }
        http::request(self.address, "POST", "/mcp", &headers, message.to_owned()).await
    }
}

const ALGS: &str = "RS256 RS384 RS512 PS256 PS384 PS512 ES256 ES384 EdDSA";

/// The exact refusal of a bad proof: 401 with the `DPoP` challenge.
fn assert_bad_proof(reply: &Reply, mcp: &Mcp, description: &str) {
    assert_eq!(reply.status, 401, "{}", reply.body);
    assert_eq!(
        challenge(reply),
        format!(
            r#"DPoP error="invalid_dpop_proof", resource_metadata="{}", algs="{ALGS}", error_description="{description}""#,
            mcp.metadata_url()
        )
    );
    assert_eq!(
        reply.json(),
        json!({"error": "invalid_dpop_proof", "error_description": description})
    );
}

fn whoami() -> String {
    call_tool(7, "whoami", json!({}))
}

/// The built-in client binds its tokens with DPoP: a key of its own, a
/// proof with the token request and with every MCP request, the server's
/// nonce answered when it demands one, and bound tokens only.
#[tokio::test]
async fn the_built_in_client_uses_dpop_bound_tokens() {
    use mcp_runtime::client::oauth::OAuth;
    use mcp_runtime::client::{Client, Outcome, Remote};

    let provider = Provider::start(free_port(), "a").await;
    let strict = DpopSettings::new()
        .require_nonce(Duration::from_secs(60))
        .require_bound_tokens();
    for settings in [DpopSettings::new(), strict] {
        let mcp = Mcp::start_with(&provider.issuer(), false, |a| a.dpop(settings));
        let oauth = OAuth::new("ci-job")
            .client("notes-app", Some("notes-app-secret".into()), None)
            .client_credentials()
            .dpop();
        let remote = Remote::new(&mcp.resource).unwrap().oauth(oauth);
        let mut client = Client::new(remote);
        for _ in 0..2 {
            let called = client.call_tool("whoami", json!({})).await.unwrap();
            let Outcome::Complete(result) = called.outcome else {
                panic!("whoami completes");
            };
            assert_eq!(
                serde_json::to_value(&result.content).unwrap()[0]["text"],
                "client notes-app, scopes [notes:admin notes:read notes:write]"
            );
        }
    }
    provider.stop().await;
}

/// A bound token with a good proof is served; every way of getting the
/// proof wrong is refused with `invalid_dpop_proof`, and the token sent
/// without its proof is refused too.
#[tokio::test]
async fn a_bound_token_needs_a_fresh_proof_for_this_request() {
    let provider = Provider::start(free_port(), "a").await;
    let mcp = Mcp::start(&provider.issuer(), false);
    let key = DpopKey::load();
    let token = provider.bound_token("notes-app", &key, &mcp.resource).await;

    let proof = key.for_mcp(&mcp, &token);
    let reply = mcp.post_dpop(&token, &[&proof], &whoami()).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.json()["result"]["content"][0]["text"],
        "client notes-app, scopes [notes:read notes:write]"
    );
    let reply = mcp.post_dpop(&token, &[&proof], &whoami()).await;
    assert_bad_proof(
        &reply,
        &mcp,
        "the DPoP proof was used before (its jti is not new): make one per request",
    );
    let elsewhere = format!("http://{}/other", mcp.address);
    let cases: [(String, &str); 5] = [
        (
            key.proof("POST", &elsewhere, Some(&token), |_| {}),
            "the DPoP proof is for another URL",
        ),
        (
            key.proof("GET", &mcp.resource, Some(&token), |_| {}),
            "the DPoP proof is for another HTTP method",
        ),
        (
            key.proof("POST", &mcp.resource, Some(&token), |c| {
                c["iat"] = (now() - 120).into()
            }),
            "the DPoP proof is too old: make one per request",
        ),
        (
            key.proof("POST", &mcp.resource, Some("another-token"), |_| {}),
            "the DPoP proof's ath is not the hash of the access token sent with it",
        ),
        (
            key.proof("POST", &mcp.resource, None, |_| {}),
            "the DPoP proof's ath is not the hash of the access token sent with it",
        ),
    ];
    for (proof, description) in &cases {
        let reply = mcp.post_dpop(&token, &[proof], &whoami()).await;
        assert_bad_proof(&reply, &mcp, description);
    }
    let reply = mcp.post_dpop(&token, &[], &whoami()).await;
    assert_bad_proof(
        &reply,
        &mcp,
        "send exactly one DPoP header with a DPoP-bound token",
    );

    // Stolen and replayed as a bearer token: refused, as an invalid token.
    let reply = mcp.post(Some(&token), &whoami()).await;
    assert_eq!(reply.status, 401, "{}", reply.body);
    let description = "the token is DPoP-bound: send it as `Authorization: DPoP` with a proof";
    assert_eq!(
        challenge(&reply),
        format!(
            r#"DPoP error="invalid_token", resource_metadata="{}", algs="{ALGS}", error_description="{description}""#,
            mcp.metadata_url()
        )
    );
    provider.stop().await;
}

/// Opaque bound tokens: introspection says `token_type` DPoP and
/// `cnf.jkt`, and the same proofs are demanded.
#[tokio::test]
async fn an_introspected_bound_token_needs_its_proof_too() {
    let provider = Provider::start(free_port(), "a").await;
    let mcp = Mcp::start_with(&provider.issuer(), false, |authorization| {
        authorization.introspection(IntrospectionSettings::new("notes-rs", "notes-rs-secret"))
    });
    let key = DpopKey::load();
    let token = provider
        .bound_token("opaque-app", &key, &mcp.resource)
        .await;
    assert_eq!(token.split('.').count(), 1, "an opaque token");
    let reply = mcp
        .post_dpop(&token, &[&key.for_mcp(&mcp, &token)], &whoami())
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(mcp.post(Some(&token), &whoami()).await.status, 401);
    let stale = key.proof("POST", &mcp.resource, Some(&token), |c| {
        c["iat"] = (now() - 120).into()
    });
    let reply = mcp.post_dpop(&token, &[&stale], &whoami()).await;
    assert_bad_proof(
        &reply,
        &mcp,
        "the DPoP proof is too old: make one per request",
    );
    provider.stop().await;
}

/// The server's nonce (RFC 9449 §9): a proof without it is answered
/// `use_dpop_nonce` and a fresh nonce in `DPoP-Nonce`, and a proof with
/// that nonce is served.
#[tokio::test]
async fn the_server_nonce_flow() {
    let provider = Provider::start(free_port(), "a").await;
    let mcp = Mcp::start_with(&provider.issuer(), false, |authorization| {
        authorization.dpop(DpopSettings::new().require_nonce(Duration::from_secs(60)))
    });
    let key = DpopKey::load();
    let token = provider.bound_token("notes-app", &key, &mcp.resource).await;

    let reply = mcp
        .post_dpop(&token, &[&key.for_mcp(&mcp, &token)], &whoami())
        .await;
    assert_eq!(reply.status, 401, "{}", reply.body);
    let description = "this server requires a nonce in DPoP proofs: use the one in DPoP-Nonce";
    assert_eq!(
        challenge(&reply),
        format!(
            r#"DPoP error="use_dpop_nonce", resource_metadata="{}", algs="{ALGS}", error_description="{description}""#,
            mcp.metadata_url()
        )
    );
    let nonce = reply
        .header("dpop-nonce")
        .expect("a DPoP-Nonce header")
        .to_owned();
    let with_nonce = key.proof("POST", &mcp.resource, Some(&token), |c| {
        c["nonce"] = nonce.clone().into()
    });
    let reply = mcp.post_dpop(&token, &[&with_nonce], &whoami()).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let forged = key.proof("POST", &mcp.resource, Some(&token), |c| {
        c["nonce"] = "made-up".into()
    });
    let reply = mcp.post_dpop(&token, &[&forged], &whoami()).await;
    assert_eq!(reply.status, 401, "{}", reply.body);
    assert!(challenge(&reply).starts_with(r#"DPoP error="use_dpop_nonce""#));
    provider.stop().await;
}

/// Two instances behind one name, sharing Redis: a proof used on one is
/// refused on the other.
#[tokio::test]
async fn a_proof_replayed_on_another_instance_is_refused() {
    let provider = Provider::start(free_port(), "a").await;
    let prefix = mcp_test_support::redis::unique_prefix("dpop-replay");
    let first = Mcp::start_instance(&provider.issuer(), None, &prefix, |a| a);
    let second = Mcp::start_instance(&provider.issuer(), Some(&first.resource), &prefix, |a| a);
    // The replay store refuses what was made within 3 s of its memory's
    // beginning (it cannot vouch for earlier uses), and this prefix is new.
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let key = DpopKey::load();
    let token = provider
        .bound_token("notes-app", &key, &first.resource)
        .await;

    let proof = key.for_mcp(&first, &token);
    let reply = first.post_dpop(&token, &[&proof], &whoami()).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let reply = second.post_dpop(&token, &[&proof], &whoami()).await;
    // Its challenge names the metadata by the name they share.
    assert_bad_proof(
        &reply,
        &first,
        "the DPoP proof was used before (its jti is not new): make one per request",
    );
    // A fresh proof is served by the second instance.
    let reply = second
        .post_dpop(&token, &[&key.for_mcp(&first, &token)], &whoami())
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    provider.stop().await;
}
