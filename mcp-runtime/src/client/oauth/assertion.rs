//! `private_key_jwt` (RFC 7523 §2.2, OpenID Connect Core §9): the client
//! authenticates at the token endpoint with a short-lived JWT it signs with
//! its own key, so no shared secret travels. The signing is
//! `jsonwebtoken`'s (feature `oauth-client-jose`).

use std::str::FromStr as _;
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::json;

use super::discovery::ServerMetadata;
use super::random::random_text;
use super::secret::SecretSource;
use crate::client::transport::TransportError;

/// How long an assertion is good for: it is made for one request.
const LIFETIME_SECS: u64 = 60;

/// The client's signing key (its PEM text, inline or in a file) and the
/// JWS algorithm.
#[derive(Clone, Debug)]
pub(crate) struct AssertionKey {
    pub(crate) source: SecretSource,
    pub(crate) algorithm: String,
}

/// A signed assertion for `client_id` at the authorization server of
/// `metadata`: `iss` and `sub` the client, `aud` the issuer, a minute of
/// life, a fresh `jti`. An authorization server whose metadata lists its
/// authentication methods without `private_key_jwt` is not asked.
pub(crate) fn sign(
    key: &AssertionKey,
    pem: &str,
    client_id: &str,
    metadata: &ServerMetadata,
) -> Result<String, TransportError> {
    let listed = metadata.auth_methods.as_ref();
    if listed.is_some_and(|methods| !methods.iter().any(|m| m == "private_key_jwt")) {
        return Err(TransportError::new(format!(
            "{} does not accept private_key_jwt (token_endpoint_auth_methods_supported)",
            metadata.issuer
        )));
    }
    let refused = |why: String| TransportError::new(format!("the client's signing key: {why}"));
    let algorithm = Algorithm::from_str(&key.algorithm)
        .map_err(|_| refused(format!("unknown algorithm {}", key.algorithm)))?;
    let encoding = match algorithm {
        Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(pem.as_bytes()),
        Algorithm::EdDSA => EncodingKey::from_ed_pem(pem.as_bytes()),
        Algorithm::RS256
        | Algorithm::RS384
        | Algorithm::RS512
        | Algorithm::PS256
        | Algorithm::PS384
        | Algorithm::PS512 => EncodingKey::from_rsa_pem(pem.as_bytes()),
        _ => {
            return Err(refused(format!(
                "{} is not a signature algorithm",
                key.algorithm
            )));
        }
    }
    .map_err(|error| {
        refused(format!(
            "not a {} private key in PEM: {error}",
            key.algorithm
        ))
    })?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let claims = json!({
        "iss": client_id,
        "sub": client_id,
        "aud": metadata.issuer,
        "iat": now,
        "exp": now + LIFETIME_SECS,
        "jti": random_text(),
    });
    jsonwebtoken::encode(&Header::new(algorithm), &claims, &encoding)
        .map_err(|error| refused(format!("signing failed: {error}")))
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use jsonwebtoken::jwk::Jwk;
    use jsonwebtoken::{DecodingKey, Validation};
    use serde_json::Value;

    use super::*;

    /// A test key of the resource server's tests, as PKCS#8 PEM.
    fn pem(name: &str) -> String {
        let der = match name {
            "a" => &include_bytes!("../../auth/testdata/ec-a.pk8.der")[..],
            _ => &include_bytes!("../../auth/testdata/ec-b.pk8.der")[..],
        };
        let body = STANDARD.encode(der);
        let lines: Vec<&str> = body
            .as_bytes()
            .chunks(64)
            .map(|line| std::str::from_utf8(line).unwrap())
            .collect();
        format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            lines.join("\n")
        )
    }

    fn public_a() -> DecodingKey {
        let jwk: Jwk =
            serde_json::from_str(include_str!("../../auth/testdata/ec-a.jwk.json")).unwrap();
        DecodingKey::from_jwk(&jwk).unwrap()
    }

    fn metadata(methods: Option<&[&str]>) -> ServerMetadata {
        ServerMetadata {
            issuer: "http://as.test".into(),
            authorization_endpoint: String::new(),
            token_endpoint: "http://as.test/token".into(),
            registration_endpoint: None,
            scopes_supported: None,
            auth_methods: methods.map(|m| m.iter().map(|s| (*s).to_owned()).collect()),
            grant_types: None,
            grant_profiles: None,
            iss_parameter_supported: false,
            client_id_metadata_documents: false,
            pkce_s256: false,
        }
    }

    fn key(algorithm: &str) -> AssertionKey {
        AssertionKey {
            source: SecretSource::Inline(pem("a")),
            algorithm: algorithm.into(),
        }
    }

    #[test]
    fn an_assertion_is_the_clients_signed_for_the_issuer() {
        let jwt = sign(&key("ES256"), &pem("a"), "cli", &metadata(None)).unwrap();
        let mut validation = Validation::new(Algorithm::ES256);
        validation.set_audience(&["http://as.test"]);
        validation.set_issuer(&["cli"]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let claims = jsonwebtoken::decode::<Value>(&jwt, &public_a(), &validation)
            .unwrap()
            .claims;
        assert_eq!(claims["sub"], "cli");
        assert_eq!(
            claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap(),
            60
        );
        assert_eq!(claims["jti"].as_str().unwrap().len(), 43);
        let again = sign(&key("ES256"), &pem("a"), "cli", &metadata(None)).unwrap();
        let jti = |jwt: &str| {
            jsonwebtoken::decode::<Value>(jwt, &public_a(), &validation)
                .unwrap()
                .claims["jti"]
                .clone()
        };
        assert_ne!(jti(&jwt), jti(&again), "a fresh jti each time");
        // Signed by another key, it does not verify with this one's.
        let other = sign(&key("ES256"), &pem("b"), "cli", &metadata(None)).unwrap();
        assert!(jsonwebtoken::decode::<Value>(&other, &public_a(), &validation).is_err());
    }

    #[test]
    fn what_cannot_sign_is_refused_with_the_reason() {
        let refused = |key: AssertionKey, pem: &str, methods: Option<&[&str]>| {
            sign(&key, pem, "cli", &metadata(methods))
                .unwrap_err()
                .to_string()
        };
        assert!(
            refused(key("ES256"), &pem("a"), Some(&["client_secret_basic"]))
                .contains("does not accept private_key_jwt")
        );
        assert!(refused(key("ES257"), &pem("a"), None).contains("unknown algorithm ES257"));
        assert!(
            refused(key("HS256"), &pem("a"), None).contains("HS256 is not a signature algorithm")
        );
        assert!(
            refused(key("ES256"), "not a key", None).contains("not a ES256 private key in PEM")
        );
        // Accepted where the server lists it.
        assert!(
            sign(
                &key("ES256"),
                &pem("a"),
                "cli",
                &metadata(Some(&["private_key_jwt"]))
            )
            .is_ok()
        );
    }

    #[test]
    fn the_key_is_never_in_a_debug_print() {
        let jwt = SecretSource::Inline("eyJ.secret.jwt".into());
        assert_eq!(format!("{jwt:?}"), "<redacted>");
        let printed = format!("{:?}", key("ES256"));
        assert!(
            !printed.contains("PRIVATE KEY") && printed.contains("<redacted>"),
            "{printed}"
        );
    }
}
