//! JWT access tokens (RFC 9068) checked against the trusted issuers' keys:
//! algorithm allow-list (never `none`, never HMAC: a public key must never
//! be usable as a shared secret), `typ` `at+jwt`, the issuer chosen from
//! the trusted list *before* any key is fetched, signature, `exp`/`nbf`
//! with a small leeway, and an audience that is this server's canonical
//! URI (RFC 8707).

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};

use super::fetch::Fetcher;
use super::jwks::KeyStore;
use super::resource::ResourceUri;
use super::scope;
use super::verifier::{TokenVerifier, VerifyError, VerifyFuture};
use crate::security::Principal;

/// A JWS signature algorithm a token may be signed with (RFC 7518). Only
/// asymmetric ones exist here: a verifier holding only public keys must
/// never treat one as a shared secret, so HMAC cannot even be asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SigningAlgorithm {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    RS256,
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    RS384,
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    RS512,
    /// RSASSA-PSS with SHA-256.
    PS256,
    /// RSASSA-PSS with SHA-384.
    PS384,
    /// RSASSA-PSS with SHA-512.
    PS512,
    /// ECDSA with P-256 and SHA-256.
    ES256,
    /// ECDSA with P-384 and SHA-384.
    ES384,
    /// EdDSA (Ed25519).
    EdDSA,
}

impl SigningAlgorithm {
    /// Its name in JOSE headers and metadata (RFC 7518 §3.1).
    pub(super) fn name(self) -> &'static str {
        match self {
            SigningAlgorithm::RS256 => "RS256",
            SigningAlgorithm::RS384 => "RS384",
            SigningAlgorithm::RS512 => "RS512",
            SigningAlgorithm::PS256 => "PS256",
            SigningAlgorithm::PS384 => "PS384",
            SigningAlgorithm::PS512 => "PS512",
            SigningAlgorithm::ES256 => "ES256",
            SigningAlgorithm::ES384 => "ES384",
            SigningAlgorithm::EdDSA => "EdDSA",
        }
    }

    /// The JOSE library's name for it (kept out of the public API).
    pub(super) fn jose(self) -> Algorithm {
        match self {
            SigningAlgorithm::RS256 => Algorithm::RS256,
            SigningAlgorithm::RS384 => Algorithm::RS384,
            SigningAlgorithm::RS512 => Algorithm::RS512,
            SigningAlgorithm::PS256 => Algorithm::PS256,
            SigningAlgorithm::PS384 => Algorithm::PS384,
            SigningAlgorithm::PS512 => Algorithm::PS512,
            SigningAlgorithm::ES256 => Algorithm::ES256,
            SigningAlgorithm::ES384 => Algorithm::ES384,
            SigningAlgorithm::EdDSA => Algorithm::EdDSA,
        }
    }
}

/// The asymmetric algorithms accepted unless configured otherwise.
pub const DEFAULT_ALGORITHMS: &[SigningAlgorithm] = &[
    SigningAlgorithm::RS256,
    SigningAlgorithm::RS384,
    SigningAlgorithm::RS512,
    SigningAlgorithm::PS256,
    SigningAlgorithm::PS384,
    SigningAlgorithm::PS512,
    SigningAlgorithm::ES256,
    SigningAlgorithm::ES384,
    SigningAlgorithm::EdDSA,
];

/// Settings of the JWT verifier, for
/// [`Authorization::jwt_with`](super::Authorization::jwt_with).
#[derive(Clone, Debug)]
pub struct JwtSettings {
    pub(crate) algorithms: Vec<Algorithm>,
    pub(crate) leeway: Duration,
    pub(crate) require_at_jwt: bool,
    pub(crate) jwks_uris: Vec<(String, String)>,
    pub(crate) min_refresh: Duration,
    pub(crate) max_age: Duration,
}

impl Default for JwtSettings {
    fn default() -> Self {
        JwtSettings {
            algorithms: DEFAULT_ALGORITHMS.iter().map(|a| a.jose()).collect(),
            leeway: Duration::from_secs(30),
            require_at_jwt: true,
            jwks_uris: Vec::new(),
            min_refresh: Duration::from_secs(30),
            max_age: Duration::from_secs(3600),
        }
    }
}

impl JwtSettings {
    /// The defaults: every asymmetric algorithm, 30 s leeway, `typ` must
    /// be `at+jwt`, keys re-fetched hourly and on an unknown `kid` (at
    /// most every 30 s).
    pub fn new() -> Self {
        JwtSettings::default()
    }

    /// Accepts only `algorithms` (all asymmetric: HMAC is never accepted).
    #[must_use]
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = SigningAlgorithm>) -> Self {
        self.algorithms = algorithms.into_iter().map(SigningAlgorithm::jose).collect();
        self
    }

    /// Clock skew tolerated on `exp` and `nbf` (default 30 s).
    #[must_use]
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Accepts tokens whose `typ` header is not `at+jwt`, for authorization
    /// servers that do not follow RFC 9068 yet (their ID tokens then look
    /// like access tokens, so make sure the audience differs).
    #[must_use]
    pub fn accept_any_type(mut self) -> Self {
        self.require_at_jwt = false;
        self
    }

    /// Fetches `issuer`'s keys from `jwks_uri` instead of discovering it
    /// from the issuer's metadata.
    #[must_use]
    pub fn jwks_uri(mut self, issuer: impl Into<String>, jwks_uri: impl Into<String>) -> Self {
        self.jwks_uris.push((issuer.into(), jwks_uri.into()));
        self
    }

    /// Least time between two key refreshes caused by unknown `kid`s
    /// (default 30 s).
    #[must_use]
    pub fn min_refresh_interval(mut self, interval: Duration) -> Self {
        self.min_refresh = interval;
        self
    }

    /// How long fetched keys are used before they are fetched again
    /// (default one hour).
    #[must_use]
    pub fn max_key_age(mut self, age: Duration) -> Self {
        self.max_age = age;
        self
    }
}

/// Verifies RFC 9068 JWT access tokens. Built by
/// [`Authorization::jwt`](super::Authorization::jwt); usable on its own
/// as a [`TokenVerifier`].
#[derive(Debug)]
pub struct JwtVerifier {
    resource: ResourceUri,
    issuers: Vec<(String, KeyStore)>,
    settings: JwtSettings,
}

impl JwtVerifier {
    pub(crate) fn new(
        resource: ResourceUri,
        issuers: &[String],
        settings: JwtSettings,
        fetcher: &Fetcher,
    ) -> JwtVerifier {
        let issuers = issuers
            .iter()
            .map(|issuer| {
                let jwks_uri = settings
                    .jwks_uris
                    .iter()
                    .find(|(i, _)| i == issuer)
                    .map(|(_, uri)| uri.clone());
                let store = KeyStore::new(
                    issuer.clone(),
                    jwks_uri,
                    fetcher.clone(),
                    settings.min_refresh,
                    settings.max_age,
                );
                (issuer.clone(), store)
            })
            .collect();
        JwtVerifier {
            resource,
            issuers,
            settings,
        }
    }

    #[cfg(test)]
    pub(crate) async fn fetches(&self) -> u32 {
        let mut total = 0;
        for (_, store) in &self.issuers {
            total += store.fetches().await;
        }
        total
    }

    async fn check(&self, token: &str) -> Result<Principal, VerifyError> {
        let (header, payload) = unverified_parts(token)?;
        let alg_name = header
            .get("alg")
            .and_then(Value::as_str)
            .ok_or_else(|| VerifyError::Malformed("the header has no `alg`".into()))?;
        let alg: Algorithm = alg_name
            .parse()
            .ok()
            .filter(|alg| self.settings.algorithms.contains(alg))
            .ok_or_else(|| VerifyError::Algorithm(printable(alg_name)))?;
        // RFC 7515 §4.1.11: extensions marked critical must be understood;
        // this verifier understands none.
        if header.contains_key("crit") {
            return Err(VerifyError::Malformed(
                "the header lists critical extensions this server does not support".into(),
            ));
        }
        if self.settings.require_at_jwt {
            let typ = header.get("typ").and_then(Value::as_str).unwrap_or("");
            // RFC 9068 §4: "at+jwt" or "application/at+jwt", compared
            // case-insensitively as media types are.
            let typ = typ.to_ascii_lowercase();
            if typ != "at+jwt" && typ != "application/at+jwt" {
                return Err(VerifyError::Type);
            }
        }
        // The issuer picks the keys, so it is checked against the trusted
        // list before anything is fetched: a token can never make this
        // server fetch keys from a URL it names.
        let issuer = payload
            .get("iss")
            .and_then(Value::as_str)
            .ok_or(VerifyError::Claim("iss"))?;
        let (issuer, store) = self
            .issuers
            .iter()
            .find(|(trusted, _)| trusted == issuer)
            .ok_or(VerifyError::Issuer)?;
        let kid = header.get("kid").and_then(Value::as_str);
        let keys = store.keys_for(kid, alg).await?;
        let mut validation = Validation::new(alg);
        validation.leeway = self.settings.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_issuer(&[issuer]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        // The audience is compared below, canonically (RFC 8707 resource
        // URIs may differ in scheme/host case).
        validation.validate_aud = false;
        let mut last = VerifyError::UnknownKey;
        for jwk in &keys {
            let Ok(key) = DecodingKey::from_jwk(jwk) else {
                continue;
            };
            match jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation) {
                Ok(data) => return self.principal(issuer, data.claims),
                // This key did not verify it (or does not suit the
                // algorithm): another key with the same `kid` might.
                Err(error) => match error.kind() {
                    ErrorKind::InvalidSignature
                    | ErrorKind::InvalidAlgorithm
                    | ErrorKind::InvalidKeyFormat
                    | ErrorKind::InvalidEcdsaKey
                    | ErrorKind::InvalidEddsaKey
                    | ErrorKind::InvalidRsaKey(_) => last = VerifyError::Signature,
                    other => return Err(map_error(other)),
                },
            }
        }
        Err(last)
    }

    fn principal(
        &self,
        issuer: &str,
        claims: Map<String, Value>,
    ) -> Result<Principal, VerifyError> {
        if !self.resource.is_audience_of(claims.get("aud")) {
            return Err(VerifyError::Audience);
        }
        principal_from_claims(issuer, claims)
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(self.check(token))
    }
}

/// A principal from verified claims (JWT payload or introspection answer).
pub(crate) fn principal_from_claims(
    issuer: &str,
    claims: Map<String, Value>,
) -> Result<Principal, VerifyError> {
    let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::to_owned);
    let subject = text("sub");
    let client_id = text("client_id").or_else(|| text("azp"));
    let who = subject
        .clone()
        .or_else(|| client_id.clone())
        .ok_or(VerifyError::Claim("sub"))?;
    let scopes = scope::from_claim(claims.get("scope").or_else(|| claims.get("scp")));
    let mut principal = Principal::new(format!("{issuer} {who}"))
        .with_issuer(issuer)
        .with_scopes(scopes);
    if let Some(subject) = subject {
        principal = principal.with_subject(subject);
    }
    if let Some(client_id) = client_id {
        principal = principal.with_client_id(client_id);
    }
    Ok(principal.with_claims(claims))
}

type Claims = Map<String, Value>;

/// The header and payload, decoded but not trusted: enough to pick the
/// algorithm, key and issuer.
fn unverified_parts(token: &str) -> Result<(Claims, Claims), VerifyError> {
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(_signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(VerifyError::Malformed(
            "not a JWT (three dot-separated parts)".into(),
        ));
    };
    let decode = |part: &str, what: &str| {
        let bytes = URL_SAFE_NO_PAD
            .decode(part)
            .map_err(|_| VerifyError::Malformed(format!("the {what} is not base64url")))?;
        serde_json::from_slice::<Map<String, Value>>(&bytes)
            .map_err(|_| VerifyError::Malformed(format!("the {what} is not a JSON object")))
    };
    Ok((decode(header, "header")?, decode(payload, "payload")?))
}

fn map_error(kind: &ErrorKind) -> VerifyError {
    match kind {
        ErrorKind::InvalidSignature => VerifyError::Signature,
        ErrorKind::ExpiredSignature => VerifyError::Expired,
        ErrorKind::ImmatureSignature => VerifyError::NotYetValid,
        ErrorKind::InvalidIssuer => VerifyError::Issuer,
        ErrorKind::InvalidAudience => VerifyError::Audience,
        ErrorKind::InvalidAlgorithm => VerifyError::Algorithm(String::new()),
        ErrorKind::MissingRequiredClaim(claim) | ErrorKind::InvalidClaimFormat(claim) => {
            VerifyError::Claim(match claim.as_str() {
                "exp" => "exp",
                "nbf" => "nbf",
                "iss" => "iss",
                "aud" => "aud",
                "sub" => "sub",
                _ => "claims",
            })
        }
        _ => VerifyError::Malformed("the token does not decode".into()),
    }
}

/// An attacker-chosen header value, cut short and stripped to what can
/// safely go back in a header.
fn printable(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_ascii_graphic())
        .take(32)
        .collect()
}
