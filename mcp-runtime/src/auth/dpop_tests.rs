//! Each check of a DPoP proof, one test apiece: a test fails when its
//! check is taken out (the mutation check in `tests/auth/mutations.sh`).

use std::sync::atomic::{AtomicU64, Ordering};

use http::HeaderValue;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{EncodingKey, Header};
use serde_json::{Value, json};

use super::*;
use crate::mrtr::{GuardFuture, GuardUnavailable, InMemoryReplayGuard};

const KEY_A: (&[u8], &str) = (
    include_bytes!("testdata/ec-a.pk8.der"),
    include_str!("testdata/ec-a.jwk.json"),
);
const KEY_B: (&[u8], &str) = (
    include_bytes!("testdata/ec-b.pk8.der"),
    include_str!("testdata/ec-b.jwk.json"),
);
const TOKEN: &str = "the-access-token";
const URL: &str = "https://mcp.example.com/mcp";

fn jwk((_, jwk): (&[u8], &str)) -> Jwk {
    serde_json::from_str(jwk).unwrap()
}

fn jkt(key: (&[u8], &str)) -> String {
    jwk(key).thumbprint(ThumbprintHash::SHA256).unwrap()
}

fn now() -> u64 {
    unix_seconds(SystemTime::now())
}

/// A proof's claims, good for a `POST` of [`TOKEN`] to [`URL`], with a
/// jti never used before.
fn claims() -> Value {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    json!({
        "jti": format!("jti-{}", NEXT.fetch_add(1, Ordering::Relaxed)),
        "htm": "POST",
        "htu": URL,
        "iat": now(),
        "ath": URL_SAFE_NO_PAD.encode(Sha256::digest(TOKEN)),
    })
}

/// `claims` signed by `signer`, naming `named`'s public key in its header.
fn proof_naming(signer: (&[u8], &str), named: Jwk, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.typ = Some("dpop+jwt".into());
    header.jwk = Some(named);
    jsonwebtoken::encode(&header, claims, &EncodingKey::from_ec_der(signer.0)).unwrap()
}

fn proof(claims: &Value) -> String {
    proof_naming(KEY_A, jwk(KEY_A), claims)
}

fn checker_with(settings: DpopSettings, replay: Arc<dyn ReplayGuard>) -> ProofChecker {
    let resource = ResourceUri::parse(URL).unwrap();
    ProofChecker::new(settings, &resource, KeyRing::new([7; 32]), replay)
}

fn checker(settings: DpopSettings) -> ProofChecker {
    checker_with(settings, Arc::new(InMemoryReplayGuard::default()))
}

fn with_proofs(proofs: &[&str]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for proof in proofs {
        headers.append(DPOP, HeaderValue::from_str(proof).unwrap());
    }
    headers
}

async fn check_at(
    checker: &ProofChecker,
    proof: &str,
    method: &Method,
    path: &str,
) -> Result<(), Denied> {
    let jkt = jkt(KEY_A);
    let presented = Presented {
        method,
        path,
        token: TOKEN,
        jkt: &jkt,
    };
    checker.check(&with_proofs(&[proof]), &presented).await
}

async fn check(checker: &ProofChecker, proof: &str) -> Result<(), Denied> {
    check_at(checker, proof, &Method::POST, "/mcp").await
}

/// The refusal's reason, for a proof that must be refused as invalid.
fn refused(verdict: Result<(), Denied>) -> String {
    match verdict {
        Err(Denied::Refused(Refusal::InvalidDpopProof(why))) => why,
        other => panic!("expected invalid_dpop_proof, got {other:?}"),
    }
}

#[tokio::test]
async fn a_good_proof_is_accepted() {
    let checker = checker(DpopSettings::new());
    check(&checker, &proof(&claims())).await.unwrap();
    // The URL compared as RFC 3986 normalizes it: scheme and host in any
    // case, the default port written out, a query left off.
    for htu in [
        "HTTPS://MCP.example.com/mcp",
        "https://mcp.example.com:443/mcp",
        "https://mcp.example.com/mcp?x=1",
    ] {
        let mut claims = claims();
        claims["htu"] = htu.into();
        check(&checker, &proof(&claims)).await.unwrap();
    }
}

#[tokio::test]
async fn a_replayed_proof_is_refused() {
    let checker = checker(DpopSettings::new());
    let proof = proof(&claims());
    check(&checker, &proof).await.unwrap();
    let why = refused(check(&checker, &proof).await);
    assert!(why.contains("used before"), "{why}");
}

#[tokio::test]
async fn a_proof_for_another_url_is_refused() {
    let checker = checker(DpopSettings::new());
    for htu in [
        "https://mcp.example.com/other",
        "https://evil.example.com/mcp",
        "http://mcp.example.com/mcp",
        "https://mcp.example.com:8443/mcp",
        "not a url",
    ] {
        let mut claims = claims();
        claims["htu"] = htu.into();
        let why = refused(check(&checker, &proof(&claims)).await);
        assert!(why.contains("another URL"), "{htu}: {why}");
    }
    // The request went elsewhere than the proof says.
    let why = refused(check_at(&checker, &proof(&claims()), &Method::POST, "/elsewhere").await);
    assert!(why.contains("another URL"), "{why}");
}

#[tokio::test]
async fn a_proof_for_another_method_is_refused() {
    let checker = checker(DpopSettings::new());
    let why = refused(check_at(&checker, &proof(&claims()), &Method::GET, "/mcp").await);
    assert!(why.contains("another HTTP method"), "{why}");
}

#[tokio::test]
async fn a_stale_proof_is_refused() {
    let checker = checker(DpopSettings::new().max_age(Duration::from_secs(30)));
    let mut old = claims();
    old["iat"] = (now() - 31).into();
    let why = refused(check(&checker, &proof(&old)).await);
    assert!(why.contains("too old"), "{why}");
    let mut recent = claims();
    recent["iat"] = (now() - 20).into();
    check(&checker, &proof(&recent)).await.unwrap();
}

#[tokio::test]
async fn a_proof_from_the_future_is_refused() {
    let checker = checker(DpopSettings::new());
    let mut ahead = claims();
    ahead["iat"] = (now() + 60).into();
    let why = refused(check(&checker, &proof(&ahead)).await);
    assert!(why.contains("in the future"), "{why}");
}

#[tokio::test]
async fn a_proof_for_another_token_is_refused() {
    let checker = checker(DpopSettings::new());
    let mut other = claims();
    other["ath"] = URL_SAFE_NO_PAD
        .encode(Sha256::digest("another-token"))
        .into();
    let why = refused(check(&checker, &proof(&other)).await);
    assert!(why.contains("ath"), "{why}");
    let mut none = claims();
    none.as_object_mut().unwrap().remove("ath");
    let why = refused(check(&checker, &proof(&none)).await);
    assert!(why.contains("ath"), "{why}");
}

#[tokio::test]
async fn a_proof_by_another_key_than_the_bound_one_is_refused() {
    let checker = checker(DpopSettings::new());
    let by_b = proof_naming(KEY_B, jwk(KEY_B), &claims());
    let why = refused(check(&checker, &by_b).await);
    assert!(why.contains("another key"), "{why}");
}

#[tokio::test]
async fn a_proof_whose_signature_does_not_verify_is_refused() {
    let checker = checker(DpopSettings::new());
    // Names the bound key, but signed by another.
    let forged = proof_naming(KEY_B, jwk(KEY_A), &claims());
    let why = refused(check(&checker, &forged).await);
    assert!(why.contains("signature"), "{why}");
}

#[tokio::test]
async fn a_proof_of_another_type_or_algorithm_is_refused() {
    let checker_es = checker(DpopSettings::new());
    let mut header = Header::new(Algorithm::ES256);
    header.typ = Some("JWT".into());
    header.jwk = Some(jwk(KEY_A));
    let untyped =
        jsonwebtoken::encode(&header, &claims(), &EncodingKey::from_ec_der(KEY_A.0)).unwrap();
    let why = refused(check(&checker_es, &untyped).await);
    assert!(why.contains("typ"), "{why}");
    let rsa_only = checker(DpopSettings::new().algorithms([SigningAlgorithm::PS256]));
    let why = refused(check(&rsa_only, &proof(&claims())).await);
    assert!(why.contains("does not accept"), "{why}");
}

#[tokio::test]
async fn a_proof_carrying_a_private_key_is_refused() {
    let checker = checker(DpopSettings::new());
    // The public key with a private part beside it.
    let mut header = json!({"typ": "dpop+jwt", "alg": "ES256"});
    let mut leaked: Value = serde_json::from_str(KEY_A.1).unwrap();
    leaked["d"] = "c2VjcmV0".into();
    header["jwk"] = leaked;
    let good = proof(&claims());
    let rest = good.split_once('.').unwrap().1;
    let tampered = format!("{}.{rest}", URL_SAFE_NO_PAD.encode(header.to_string()));
    let why = refused(check(&checker, &tampered).await);
    assert!(why.contains("private key"), "{why}");
}

#[tokio::test]
async fn exactly_one_proof_is_needed() {
    let checker = checker(DpopSettings::new());
    let jkt = jkt(KEY_A);
    let presented = Presented {
        method: &Method::POST,
        path: "/mcp",
        token: TOKEN,
        jkt: &jkt,
    };
    let none = checker.check(&with_proofs(&[]), &presented).await;
    assert!(refused(none).contains("exactly one"));
    let (one, two) = (proof(&claims()), proof(&claims()));
    let both = checker.check(&with_proofs(&[&one, &two]), &presented).await;
    assert!(refused(both).contains("exactly one"));
    let garbage = refused(check(&checker, "not.a.jwt").await);
    assert!(garbage.contains("well-formed"), "{garbage}");
}

/// The nonce flow: no nonce, a stranger's, or an expired one is answered
/// with a fresh nonce, which then works, on every instance that shares
/// the keys.
#[tokio::test]
async fn the_server_nonce_is_demanded_when_configured() {
    let settings = DpopSettings::new().require_nonce(Duration::from_secs(300));
    let checker = checker(settings.clone());
    let nonce = match check(&checker, &proof(&claims())).await {
        Err(Denied::Refused(Refusal::UseDpopNonce(challenge))) => {
            assert!(
                challenge.why.contains("requires a nonce"),
                "{}",
                challenge.why
            );
            challenge.nonce
        }
        other => panic!("use_dpop_nonce expected, got {other:?}"),
    };
    let with_nonce = |nonce: &str| {
        let mut claims = claims();
        claims["nonce"] = nonce.into();
        proof(&claims)
    };
    check(&checker, &with_nonce(&nonce)).await.unwrap();
    let other_instance = self::checker(settings);
    check(&other_instance, &with_nonce(&nonce)).await.unwrap();
    let expired = checker.fresh_nonce(SystemTime::now() - Duration::from_secs(301));
    for (bad, expected) in [
        ("made-up", "not this server's"),
        (expired.as_str(), "expired"),
    ] {
        match check(&checker, &with_nonce(bad)).await {
            Err(Denied::Refused(Refusal::UseDpopNonce(challenge))) => {
                assert!(challenge.why.contains(expected), "{}", challenge.why);
            }
            other => panic!("use_dpop_nonce expected, got {other:?}"),
        }
    }
}

/// A replay store that cannot answer.
struct Down;

impl ReplayGuard for Down {
    fn first_use<'a>(&'a self, _: StateUse<'a>, _: SystemTime) -> GuardFuture<'a> {
        Box::pin(std::future::ready(Err(GuardUnavailable("down".into()))))
    }
}

/// A proof is never accepted because the store could not look: the
/// request is answered 503, to be retried.
#[tokio::test]
async fn an_unreachable_replay_store_refuses_for_now() {
    let checker = checker_with(DpopSettings::new(), Arc::new(Down));
    assert!(matches!(
        check(&checker, &proof(&claims())).await,
        Err(Denied::Unavailable)
    ));
}

/// `check_claims` at a fixed clock, for `iat` = `now + ahead`.
fn claims_checked_ahead(ahead: u64) -> Result<u64, Denied> {
    let now = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let mut claims = claims();
    claims["iat"] = (1_800_000_000 + ahead).into();
    let claims: ProofClaims = serde_json::from_value(claims).unwrap();
    let jkt = jkt(KEY_A);
    let presented = Presented {
        method: &Method::POST,
        path: "/mcp",
        token: TOKEN,
        jkt: &jkt,
    };
    checker(DpopSettings::new()).check_claims(&claims, &presented, now)
}

/// A client whose clock is up to the allowed skew ahead is served (its
/// proof was once refused as "too old": the age wrapped below zero).
#[test]
fn a_proof_within_the_future_skew_is_accepted_and_beyond_it_refused() {
    for ahead in 0..=FUTURE_SKEW {
        let issued = claims_checked_ahead(ahead).unwrap_or_else(|denied| {
            panic!("a proof {ahead} s ahead must pass, got {denied:?}");
        });
        assert_eq!(issued, 1_800_000_000 + ahead);
    }
    for ahead in [FUTURE_SKEW + 1, 3_600, u64::from(u32::MAX)] {
        assert_eq!(
            refused(claims_checked_ahead(ahead).map(drop)),
            "the DPoP proof was made in the future: check the clock",
            "{ahead} s ahead"
        );
    }
}

/// A replay store whose memory began after every proof it is shown.
struct JustStarted;

impl ReplayGuard for JustStarted {
    fn first_use<'a>(&'a self, _: StateUse<'a>, _: SystemTime) -> GuardFuture<'a> {
        Box::pin(std::future::ready(Ok(false)))
    }

    fn verdict<'a>(&'a self, _: StateUse<'a>, _: SystemTime) -> crate::mrtr::VerdictFuture<'a> {
        Box::pin(std::future::ready(Ok(FirstUse::BeforeMemory)))
    }
}

const YOUNGER_MEMORY: &str = "this server's memory of used DPoP proofs began after this proof \
     was made (it just started, or lost its data), so it cannot tell the proof is new: make a \
     new proof and retry in a few seconds";

/// A fresh proof the replay memory cannot vouch for is refused for what
/// it is, not as a replay.
#[tokio::test]
async fn a_proof_older_than_the_replay_memory_is_refused_as_such() {
    let checker = checker_with(DpopSettings::new(), Arc::new(JustStarted));
    let why = refused(check(&checker, &proof(&claims())).await);
    assert_eq!(why, YOUNGER_MEMORY);
}
