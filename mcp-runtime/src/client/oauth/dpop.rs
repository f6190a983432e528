//! DPoP (RFC 9449): the client proves, with each request, that it holds
//! the key its access token is bound to, so a stolen token is useless to
//! anyone else. One P-256 key per client (made here with `p256`; kept in
//! the token cache beside the token it binds), and a fresh proof (a JWT
//! signed with it by `jsonwebtoken`) for every token request and every
//! request to the server.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use p256::pkcs8::EncodePrivateKey as _;
use serde_json::json;
use sha2::{Digest as _, Sha256};

use super::random::random_text;
use crate::client::transport::TransportError;

/// The proof's media type (RFC 9449 §4.2).
const PROOF_TYPE: &str = "dpop+jwt";

/// A DPoP key: the private key (PKCS#8), the public JWK every proof
/// carries, and its thumbprint, which a bound token names (`cnf.jkt`).
#[derive(Clone)]
pub(crate) struct DpopKey {
    pkcs8: Vec<u8>,
    encoding: EncodingKey,
    jwk: Jwk,
}

/// Without the private key: a debug print must not leak it.
impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopKey")
            .field("thumbprint", &self.thumbprint())
            .finish_non_exhaustive()
    }
}

impl DpopKey {
    /// A new P-256 key, from the operating system's random source.
    pub(crate) fn generate() -> Result<DpopKey, TransportError> {
        let failed = |why: String| TransportError::new(format!("no DPoP key could be made: {why}"));
        let mut bytes = [0u8; 32];
        // A random scalar is a valid key but for about one value in 2^32.
        let secret = loop {
            getrandom::fill(&mut bytes).map_err(|error| failed(error.to_string()))?;
            if let Ok(secret) = p256::SecretKey::from_slice(&bytes) {
                break secret;
            }
        };
        bytes.fill(0);
        let der = secret
            .to_pkcs8_der()
            .map_err(|error| failed(error.to_string()))?;
        DpopKey::from_pkcs8(der.as_bytes().to_vec())
    }

    /// The key kept in the token cache (base64 PKCS#8).
    pub(crate) fn from_cached(text: &str) -> Result<DpopKey, TransportError> {
        let der = STANDARD
            .decode(text)
            .map_err(|_| TransportError::new("the cached DPoP key is not base64".into()))?;
        DpopKey::from_pkcs8(der)
    }

    /// The key as the token cache keeps it.
    pub(crate) fn to_cached(&self) -> String {
        STANDARD.encode(&self.pkcs8)
    }

    fn from_pkcs8(pkcs8: Vec<u8>) -> Result<DpopKey, TransportError> {
        let encoding = EncodingKey::from_ec_der(&pkcs8);
        let mut jwk = Jwk::from_encoding_key(&encoding, Algorithm::ES256)
            .map_err(|error| TransportError::new(format!("not a P-256 DPoP key: {error}")))?;
        // The public key only: its members, nothing the thumbprint leaves out.
        jwk.common = Default::default();
        Ok(DpopKey {
            pkcs8,
            encoding,
            jwk,
        })
    }

    /// The key's JWK SHA-256 thumbprint (RFC 7638): what a token bound to
    /// it carries as `cnf.jkt`.
    pub(crate) fn thumbprint(&self) -> String {
        self.jwk
            .thumbprint(ThumbprintHash::SHA256)
            .unwrap_or_default()
    }

    /// A proof for one request: `method` to `url` (its query and fragment
    /// left out, as `htu` must be), with the access token's hash (`ath`)
    /// for a request to the resource, and the server's `nonce` when it
    /// demands one.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, TransportError> {
        let htu = url.split(['?', '#']).next().unwrap_or(url);
        let iat = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_secs());
        let mut claims = json!({"jti": random_text(), "htm": method, "htu": htu, "iat": iat});
        if let Some(token) = access_token {
            claims["ath"] = URL_SAFE_NO_PAD
                .encode(Sha256::digest(token.as_bytes()))
                .into();
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = nonce.into();
        }
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some(PROOF_TYPE.to_owned());
        header.jwk = Some(self.jwk.clone());
        jsonwebtoken::encode(&header, &claims, &self.encoding).map_err(|error| {
            TransportError::new(format!("the DPoP proof could not be signed: {error}"))
        })
    }
}

#[cfg(test)]
mod tests {
    use jsonwebtoken::{DecodingKey, Validation};
    use serde_json::Value;

    use super::*;

    fn decode(proof: &str) -> (Header, Value) {
        let header = jsonwebtoken::decode_header(proof).unwrap();
        let key = DecodingKey::from_jwk(header.jwk.as_ref().unwrap()).unwrap();
        let mut validation = Validation::new(Algorithm::ES256);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        let claims = jsonwebtoken::decode::<Value>(proof, &key, &validation)
            .unwrap()
            .claims;
        (header, claims)
    }

    #[test]
    fn a_proof_is_signed_by_the_key_it_carries_and_names_the_request() {
        let key = DpopKey::generate().unwrap();
        let proof = key
            .proof("POST", "http://rs.test/mcp?x=1#y", Some("tok"), Some("n-1"))
            .unwrap();
        let (header, claims) = decode(&proof);
        assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
        let jwk = serde_json::to_value(header.jwk.unwrap()).unwrap();
        assert!(jwk.get("d").is_none(), "no private key in the proof: {jwk}");
        assert_eq!(jwk["kty"], "EC");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "http://rs.test/mcp");
        assert_eq!(claims["nonce"], "n-1");
        // ath = base64url(SHA-256("tok")).
        assert_eq!(claims["ath"], "GnZ0607njffhrEOak8P6jjyUV4TU3sn9jjARc4svHWI");
        let again = key.proof("POST", "http://rs.test/mcp", None, None).unwrap();
        let (_, second) = decode(&again);
        assert_ne!(claims["jti"], second["jti"], "a fresh jti per proof");
        assert!(second.get("ath").is_none() && second.get("nonce").is_none());
    }

    #[test]
    fn a_cached_key_is_the_same_key() {
        let key = DpopKey::generate().unwrap();
        let again = DpopKey::from_cached(&key.to_cached()).unwrap();
        assert_eq!(key.thumbprint(), again.thumbprint());
        assert_eq!(key.thumbprint().len(), 43);
        assert_ne!(key.thumbprint(), DpopKey::generate().unwrap().thumbprint());
        assert!(DpopKey::from_cached("not base64!").is_err());
        assert!(!format!("{key:?}").contains(&key.to_cached()));
    }
}
