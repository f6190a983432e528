//! Legacy `Mcp-Session-Id`s that carry their session: the negotiated
//! version and client capabilities, an expiry and a random id, sealed
//! (encrypted and authenticated) with the server's `requestState` keys.
//! Any instance holding the keys can serve a session's plain requests
//! without shared storage.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::session::Negotiated;
use crate::security::seal::{KeyRing, random_hex};

/// How long a session lives after `initialize`; the client then gets 404
/// and starts a new one, as the legacy transport specifies.
pub(crate) const SESSION_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// Binds the ciphertext to this use, so that no other sealed value of the
/// server (a `requestState`) can pass for a session id.
const AAD: &[u8] = b"mcp-runtime legacy session v1";
const PREFIX: &str = "L1.";

/// What a session id carries.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct SessionToken {
    #[serde(flatten)]
    pub(crate) negotiated: Negotiated,
    /// Expiry, seconds since the Unix epoch.
    #[serde(rename = "e")]
    pub(crate) expires: u64,
    /// A random id, naming the session in this instance's tables.
    #[serde(rename = "n")]
    pub(crate) nonce: String,
}

pub(crate) fn now_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl SessionToken {
    pub(crate) fn new(negotiated: Negotiated) -> SessionToken {
        SessionToken {
            negotiated,
            expires: now_seconds() + SESSION_TTL.as_secs(),
            nonce: random_hex(),
        }
    }

    /// The header value: visible ASCII only (`L1.` and base64url).
    pub(crate) fn seal(&self, keys: &KeyRing) -> Option<String> {
        let plaintext = serde_json::to_vec(self).ok()?;
        keys.seal_token(AAD, &plaintext)
            .map(|sealed| format!("{PREFIX}{sealed}"))
    }

    /// The session a header names, unless it is forged, altered, sealed
    /// under a key no longer held, or expired.
    pub(crate) fn open(keys: &KeyRing, header: &str) -> Option<SessionToken> {
        // Far larger than any real id: refuse before decoding.
        if header.len() > 8 * 1024 {
            return None;
        }
        let plaintext = keys.open_token(AAD, header.strip_prefix(PREFIX)?)?;
        let token: SessionToken = serde_json::from_slice(&plaintext).ok()?;
        (token.expires > now_seconds()).then_some(token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;

    fn token() -> SessionToken {
        SessionToken::new(Negotiated {
            version: "2025-11-25".into(),
            capabilities: Map::new(),
            client_info: None,
        })
    }

    #[test]
    fn ids_round_trip_and_refuse_tampering_and_other_keys() {
        let keys = KeyRing::new([7; 32]);
        let token = token();
        let id = token.seal(&keys).unwrap();
        assert!(id.bytes().all(|b| (0x21..=0x7e).contains(&b)), "{id}");
        assert_eq!(SessionToken::open(&keys, &id), Some(token.clone()));
        let mut altered = id.clone().into_bytes();
        let last = altered.len() - 3;
        altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
        assert_eq!(
            SessionToken::open(&keys, &String::from_utf8(altered).unwrap()),
            None
        );
        assert_eq!(SessionToken::open(&KeyRing::new([8; 32]), &id), None);
        assert_eq!(SessionToken::open(&keys, "L1.garbage"), None);
        assert_ne!(token.nonce, self::token().nonce);
    }

    #[test]
    fn expired_ids_are_refused() {
        let keys = KeyRing::new([7; 32]);
        let mut token = token();
        token.expires = now_seconds() - 1;
        let id = token.seal(&keys).unwrap();
        assert_eq!(SessionToken::open(&keys, &id), None);
    }
}
