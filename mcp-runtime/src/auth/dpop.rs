//! DPoP proofs (RFC 9449): a token bound to a key (`cnf.jkt`) is only
//! good with a fresh proof, signed by that key, for this very request.
//! What a thief who copied the token lacks is the private key, so the
//! token alone is worthless to them.
//!
//! Every check of RFC 9449 §4.3 and §7.1 is made, in this order: one
//! well-formed proof (`typ` `dpop+jwt`, an allowed asymmetric `alg`, a
//! public `jwk`), the key is the one the token is bound to (its RFC 7638
//! thumbprint is `cnf.jkt`), the signature (jsonwebtoken), `htm` and `htu`
//! name this request, `iat` is recent, `ath` is the token's hash, the
//! server's nonce when it demands one, and last the `jti` is recorded in
//! the replay store, so a proof is used once across every instance that
//! shares the store (Redis when the server has shared state).
//!
//! Nonces are stateless: the time they were made, sealed with the
//! `requestState` keys, so that every instance sharing those keys accepts
//! the others' nonces.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::{HeaderMap, Method};
use jsonwebtoken::jwk::ThumbprintHash;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::challenge::{DPOP, Denied, NonceChallenge, Refusal};
use super::jwt::{DEFAULT_ALGORITHMS, SigningAlgorithm};
use super::resource::ResourceUri;
use crate::mrtr::{FirstUse, ReplayGuard, StateUse};
use crate::security::KeyRing;

/// Longer proofs are refused unread (an RSA-4096 key's proof is ~1.5 KB).
const MAX_PROOF: usize = 8 * 1024;
/// Longer `jti`s are refused: they go into the replay store.
const MAX_JTI: usize = 256;
/// A proof may say it was made this much in the future (clock skew).
const FUTURE_SKEW: u64 = 5;
/// What the nonces are sealed for, so no other sealed value passes as one.
const NONCE_PURPOSE: &[u8] = b"mcp-runtime dpop nonce";

/// How DPoP-bound tokens are checked, for
/// [`Authorization::dpop`](super::Authorization::dpop). Proofs are checked
/// whenever a token is bound to a key; these settings say which
/// algorithms, how old a proof may be, and whether the server demands its
/// own nonces or bound tokens only.
#[derive(Clone, Debug)]
pub struct DpopSettings {
    algorithms: Vec<SigningAlgorithm>,
    max_age: Duration,
    nonce_lifetime: Option<Duration>,
    required: bool,
}

impl Default for DpopSettings {
    fn default() -> Self {
        DpopSettings {
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
            max_age: Duration::from_secs(60),
            nonce_lifetime: None,
            required: false,
        }
    }
}

impl DpopSettings {
    /// The defaults: proofs signed with any asymmetric algorithm, at most
    /// 60 s old, no server nonce, bearer tokens still accepted.
    pub fn new() -> Self {
        DpopSettings::default()
    }

    /// Accepts proofs signed with `algorithms` only (all asymmetric), as
    /// `dpop_signing_alg_values_supported` then advertises.
    #[must_use]
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = SigningAlgorithm>) -> Self {
        self.algorithms = algorithms.into_iter().collect();
        self
    }

    /// How old (by its `iat`) a proof may be (default 60 s). Its `jti` is
    /// remembered that long.
    #[must_use]
    pub fn max_age(mut self, max_age: Duration) -> Self {
        self.max_age = max_age;
        self
    }

    /// Demands a nonce of this server's in every proof (RFC 9449 §9): a
    /// proof made in advance, or by a client whose clock is wrong, is
    /// answered `use_dpop_nonce` with a fresh nonce, good for `lifetime`.
    #[must_use]
    pub fn require_nonce(mut self, lifetime: Duration) -> Self {
        self.nonce_lifetime = Some(lifetime);
        self
    }

    /// Refuses tokens that are not bound to a key: plain bearer tokens.
    /// Advertised as `dpop_bound_access_tokens_required` (RFC 9449 §5.2).
    #[must_use]
    pub fn require_bound_tokens(mut self) -> Self {
        self.required = true;
        self
    }

    pub(crate) fn is_required(&self) -> bool {
        self.required
    }

    /// The algorithms' names, for the metadata and the challenges.
    pub(crate) fn algorithm_names(&self) -> Vec<&'static str> {
        self.algorithms.iter().map(|a| a.name()).collect()
    }
}

/// What a proof must match: the request and the token it comes with.
pub(crate) struct Presented<'a> {
    pub(crate) method: &'a Method,
    pub(crate) path: &'a str,
    pub(crate) token: &'a str,
    /// The thumbprint of the key the token is bound to.
    pub(crate) jkt: &'a str,
}

/// Checks proofs for one endpoint.
pub(crate) struct ProofChecker {
    settings: DpopSettings,
    algorithms: Vec<Algorithm>,
    /// Their names, for the challenges' `algs`.
    algs: String,
    /// The endpoint's own scheme, host and port, as configured: what `htu`
    /// must name (the `Host` header is the client's to choose, and a proxy
    /// in front may change it).
    origin: http::Uri,
    keys: KeyRing,
    replay: Arc<dyn ReplayGuard>,
}

impl std::fmt::Debug for ProofChecker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProofChecker")
            .field("settings", &self.settings)
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

/// The claims of a proof (RFC 9449 §4.2).
#[derive(Deserialize)]
struct ProofClaims {
    jti: String,
    htm: String,
    htu: String,
    iat: f64,
    ath: Option<String>,
    nonce: Option<String>,
}

fn bad(why: impl Into<String>) -> Denied {
    Denied::Refused(Refusal::InvalidDpopProof(why.into()))
}

impl ProofChecker {
    pub(crate) fn new(
        settings: DpopSettings,
        resource: &ResourceUri,
        keys: KeyRing,
        replay: Arc<dyn ReplayGuard>,
    ) -> ProofChecker {
        let origin = resource
            .origin()
            .parse()
            .expect("a parsed resource URI's origin is a URI");
        ProofChecker {
            algorithms: settings.algorithms.iter().map(|a| a.jose()).collect(),
            algs: settings.algorithm_names().join(" "),
            settings,
            origin,
            keys,
            replay,
        }
    }

    pub(crate) fn settings(&self) -> &DpopSettings {
        &self.settings
    }

    /// The algorithms proofs may use, space-separated.
    pub(crate) fn algs(&self) -> &str {
        &self.algs
    }

    /// Admits the request's proof for `presented`, or says why not.
    pub(crate) async fn check(
        &self,
        headers: &HeaderMap,
        presented: &Presented<'_>,
    ) -> Result<(), Denied> {
        let proof = single_proof(headers)?;
        let claims = self.verified(proof, presented.jkt)?;
        let now = SystemTime::now();
        let issued = self.check_claims(&claims, presented, now)?;
        self.check_nonce(claims.nonce.as_deref(), now)?;
        self.first_use(&claims.jti, presented.jkt, issued, now)
            .await
    }

    /// The proof's claims, once its header, key and signature hold.
    fn verified(&self, proof: &str, jkt: &str) -> Result<ProofClaims, Denied> {
        let header = jsonwebtoken::decode_header(proof)
            .map_err(|_| bad("the DPoP proof is not a well-formed JWT"))?;
        if header.typ.as_deref() != Some("dpop+jwt") {
            return Err(bad("the DPoP proof's typ is not dpop+jwt"));
        }
        if !self.algorithms.contains(&header.alg) {
            return Err(bad(format!(
                "the DPoP proof is signed with {:?}, which this server does not accept",
                header.alg
            )));
        }
        let Some(jwk) = &header.jwk else {
            return Err(bad("the DPoP proof's header has no jwk"));
        };
        if has_private_key(proof) {
            return Err(bad("the DPoP proof's jwk holds a private key"));
        }
        let thumbprint = jwk
            .thumbprint(ThumbprintHash::SHA256)
            .map_err(|_| bad("the DPoP proof's jwk is not a usable public key"))?;
        if thumbprint != jkt {
            return Err(bad(
                "the DPoP proof is signed by another key than the token is bound to",
            ));
        }
        let key = DecodingKey::from_jwk(jwk)
            .map_err(|_| bad("the DPoP proof's jwk is not a usable public key"))?;
        let mut validation = Validation::new(header.alg);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        validation.validate_aud = false;
        match jsonwebtoken::decode::<ProofClaims>(proof, &key, &validation) {
            Ok(data) => Ok(data.claims),
            Err(error) => Err(bad(match error.kind() {
                jsonwebtoken::errors::ErrorKind::Json(_) => {
                    "the DPoP proof lacks jti, htm, htu or iat, or one is malformed"
                }
                _ => "the DPoP proof's signature does not verify",
            })),
        }
    }

    /// `htm`, `htu`, `iat` and `ath` (RFC 9449 §4.3 items 8, 9, 11, 12):
    /// when the proof was made, to the second.
    fn check_claims(
        &self,
        claims: &ProofClaims,
        presented: &Presented<'_>,
        now: SystemTime,
    ) -> Result<u64, Denied> {
        if claims.htm != presented.method.as_str() {
            return Err(bad("the DPoP proof is for another HTTP method"));
        }
        if !self.names_this_endpoint(&claims.htu, presented.path) {
            return Err(bad("the DPoP proof is for another URL"));
        }
        let now = unix_seconds(now);
        let issued = claims.iat.floor();
        if !issued.is_finite() || issued < 0.0 {
            return Err(bad("the DPoP proof's iat is not a time"));
        }
        // Saturating: an absurd iat is refused below either way.
        let issued = issued as u64;
        if issued > now + FUTURE_SKEW {
            return Err(bad(
                "the DPoP proof was made in the future: check the clock",
            ));
        }
        // Saturating: a proof up to FUTURE_SKEW ahead of this clock is
        // zero seconds old, not (wrapping) ages old.
        if now.saturating_sub(issued) > self.settings.max_age.as_secs() {
            return Err(bad("the DPoP proof is too old: make one per request"));
        }
        let hash = URL_SAFE_NO_PAD.encode(Sha256::digest(presented.token.as_bytes()));
        if claims.ath.as_deref() != Some(hash.as_str()) {
            return Err(bad(
                "the DPoP proof's ath is not the hash of the access token sent with it",
            ));
        }
        if claims.jti.is_empty() || claims.jti.len() > MAX_JTI {
            return Err(bad("the DPoP proof's jti is empty or too long"));
        }
        Ok(issued)
    }

    /// Whether `htu` is this endpoint's URL at `path`, compared as RFC
    /// 9449 §4.3 asks (RFC 3986 §6.2.2 and §6.2.3): scheme and host in
    /// any case, a default port given or not, and no query or fragment.
    fn names_this_endpoint(&self, htu: &str, path: &str) -> bool {
        let htu = htu.split(['?', '#']).next().unwrap_or_default();
        let Ok(htu) = htu.parse::<http::Uri>() else {
            return false;
        };
        let origin = &self.origin;
        let same_scheme =
            htu.scheme_str().map(str::to_ascii_lowercase).as_deref() == origin.scheme_str();
        let same_host = htu
            .host()
            .is_some_and(|host| origin.host().is_some_and(|h| h.eq_ignore_ascii_case(host)));
        let same_path = match (htu.path(), path) {
            ("/" | "", "/" | "") => true,
            (named, requested) => named == requested,
        };
        same_scheme && same_host && port(&htu) == port(origin) && same_path
    }

    /// The server's nonce, when it demands one (RFC 9449 §9).
    fn check_nonce(&self, nonce: Option<&str>, now: SystemTime) -> Result<(), Denied> {
        let Some(lifetime) = self.settings.nonce_lifetime else {
            return Ok(());
        };
        let why = match nonce.map(|nonce| self.nonce_age(nonce, now)) {
            None => "this server requires a nonce in DPoP proofs: use the one in DPoP-Nonce",
            Some(None) => "the DPoP proof's nonce is not this server's: use the one in DPoP-Nonce",
            Some(Some(age)) if age > lifetime.as_secs() => {
                "the DPoP proof's nonce has expired: use the one in DPoP-Nonce"
            }
            Some(Some(_)) => return Ok(()),
        };
        Err(Denied::Refused(Refusal::UseDpopNonce(Box::new(
            NonceChallenge {
                nonce: self.fresh_nonce(now),
                why,
            },
        ))))
    }

    /// How old a nonce of this server's is, in seconds; `None` for any
    /// other string.
    fn nonce_age(&self, nonce: &str, now: SystemTime) -> Option<u64> {
        let opened = self.keys.open_token(NONCE_PURPOSE, nonce)?;
        let made = u64::from_be_bytes(opened.try_into().ok()?);
        let now = unix_seconds(now);
        (made <= now + FUTURE_SKEW).then(|| now.saturating_sub(made))
    }

    /// A nonce made now.
    pub(crate) fn fresh_nonce(&self, now: SystemTime) -> String {
        self.keys
            .seal_token(NONCE_PURPOSE, &unix_seconds(now).to_be_bytes())
            .unwrap_or_default()
    }

    /// Records the proof's `jti` for the key: refused if it was seen.
    async fn first_use(
        &self,
        jti: &str,
        jkt: &str,
        issued: u64,
        now: SystemTime,
    ) -> Result<(), Denied> {
        // Per key, hashed: the store's keys stay short whatever the jti.
        let digest = Sha256::new()
            .chain_update(jkt)
            .chain_update(b"\0")
            .chain_update(jti)
            .finalize();
        let nonce = format!("dpop:{}", crate::security::seal::hex(&digest));
        let issued = UNIX_EPOCH + Duration::from_secs(issued);
        let expires = issued + self.settings.max_age + Duration::from_secs(FUTURE_SKEW + 1);
        match self
            .replay
            .verdict(StateUse::new(&nonce, issued, expires), now)
            .await
        {
            Ok(FirstUse::First) => Ok(()),
            // The store cannot tell a replay from a first use: not the
            // client's fault, and a proof made a few seconds later passes.
            Ok(FirstUse::BeforeMemory) => Err(bad(
                "this server's memory of used DPoP proofs began after this proof was made (it \
                 just started, or lost its data), so it cannot tell the proof is new: make a new \
                 proof and retry in a few seconds",
            )),
            Ok(_) => Err(bad(
                "the DPoP proof was used before (its jti is not new): make one per request",
            )),
            Err(error) => {
                tracing::warn!(%error, "could not check a DPoP proof's jti");
                Err(Denied::Unavailable)
            }
        }
    }
}

/// The request's one `DPoP` header (RFC 9449 §4.3 items 1 and 2).
fn single_proof(headers: &HeaderMap) -> Result<&str, Denied> {
    let mut values = headers.get_all(DPOP).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return Err(bad("send exactly one DPoP header with a DPoP-bound token"));
    };
    match value.to_str() {
        Ok(proof) if proof.len() <= MAX_PROOF => Ok(proof),
        _ => Err(bad("the DPoP header is not a JWT")),
    }
}

/// Whether the header's `jwk` has a private part (`d`: EC, OKP and RSA
/// keys alike), which a proof must never carry (RFC 9449 §4.3 item 7).
fn has_private_key(proof: &str) -> bool {
    let header = proof.split('.').next().unwrap_or_default();
    let Ok(bytes) = URL_SAFE_NO_PAD.decode(header) else {
        return true;
    };
    #[derive(Deserialize)]
    struct Header {
        jwk: serde_json::Map<String, serde_json::Value>,
    }
    serde_json::from_slice::<Header>(&bytes).map_or(true, |header| header.jwk.contains_key("d"))
}

fn port(uri: &http::Uri) -> Option<u16> {
    uri.port_u16().or(match uri.scheme_str() {
        Some("https") => Some(443),
        Some("http") => Some(80),
        _ => None,
    })
}

fn unix_seconds(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
#[path = "dpop_tests.rs"]
mod tests;
