//! Sealing what the client carries for the server: `requestState` and
//! the legacy adapter's session ids. Both are encrypted and authenticated
//! with AES-256-GCM-SIV (RFC 8452) under the keys of one [`KeyRing`], each
//! bound to its use by its own associated data, so that no sealed value
//! passes for another. Any instance holding the keys opens what another
//! sealed; tampering, a rotated-out key or another use all fail alike.

use std::fmt;

use aes_gcm_siv::aead::array::Array;
use aes_gcm_siv::aead::consts::U16;
use aes_gcm_siv::aead::{Aead, AeadInOut, Generate, KeyInit, Payload as AeadPayload};
use aes_gcm_siv::{Aes256GcmSiv, Key, Nonce, Tag};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use hmac::Hmac;
use sha2::{Digest, Sha256};

/// Environment variable holding the signing key (32 bytes, base64).
pub const STATE_KEY_ENV: &str = "MCP_STATE_KEY";
/// Environment variable holding further keys that still open states
/// (comma-separated base64), for rotation.
pub const STATE_VERIFY_KEYS_ENV: &str = "MCP_STATE_VERIFY_KEYS";

/// Key id, nonce and tag: the framing around the ciphertext.
const ID_BYTES: usize = 8;
const NONCE_BYTES: usize = 12;
const TAG_BYTES: usize = 16;

/// One 256-bit key and its public identifier.
///
/// AES-256-GCM-SIV: with AES instructions it opens a state in a fraction of
/// the time XChaCha20-Poly1305 takes (measured in `benches/NOTES.md`), and
/// a repeated random nonce, unlikely as it is at 96 bits, would only reveal
/// that two states are equal rather than the key's authenticator.
#[derive(Clone)]
struct StateKey {
    id: [u8; ID_BYTES],
    cipher: Aes256GcmSiv,
}

impl StateKey {
    fn new(bytes: &[u8; 32]) -> StateKey {
        let digest = Sha256::digest(bytes);
        let mut id = [0; ID_BYTES];
        id.copy_from_slice(&digest[..ID_BYTES]);
        StateKey {
            id,
            cipher: Aes256GcmSiv::new(&Key::<Aes256GcmSiv>::from(*bytes)),
        }
    }
}

/// The keys that seal and open `requestState`: one signing key and any
/// number of older keys that still open states sealed before a rotation.
///
/// Every instance of a deployment must share the keys, or a round started
/// on one instance cannot finish on another.
#[derive(Clone)]
pub struct KeyRing {
    signing: StateKey,
    verifying: Vec<StateKey>,
    random: bool,
    /// Keyed for the audit log's argument digests, from the signing key:
    /// instances that share the keys write the same digest for the same
    /// arguments, and nobody without them can test a guess against one.
    audit: Hmac<Sha256>,
}

impl fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Identifiers only: the keys themselves never reach a log.
        f.debug_struct("KeyRing")
            .field("signing", &hex(&self.signing.id))
            .field(
                "verifying",
                &self
                    .verifying
                    .iter()
                    .map(|k| hex(&k.id))
                    .collect::<Vec<_>>(),
            )
            .field("random", &self.random)
            .finish()
    }
}

/// Why keys could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyError(String);

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for KeyError {}

impl KeyRing {
    /// A ring that seals with `signing_key`.
    pub fn new(signing_key: [u8; 32]) -> Self {
        let audit_key = Sha256::new()
            .chain_update(b"mcp-runtime audit digest\0")
            .chain_update(signing_key)
            .finalize();
        KeyRing {
            signing: StateKey::new(&signing_key),
            verifying: Vec::new(),
            random: false,
            audit: <Hmac<Sha256> as hmac::KeyInit>::new_from_slice(&audit_key)
                .expect("HMAC takes keys of any length"),
        }
    }

    /// The keyed digest the audit log records instead of a request's
    /// arguments: HMAC-SHA-256 under a key derived from the signing key.
    pub(crate) fn audit_digest(&self, bytes: &[u8]) -> [u8; 32] {
        let mut mac = self.audit.clone();
        hmac::Mac::update(&mut mac, bytes);
        hmac::Mac::finalize(mac).into_bytes().into()
    }

    /// Also opens states sealed with `key` (a key being rotated out).
    #[must_use]
    pub fn with_verification_key(mut self, key: [u8; 32]) -> Self {
        self.verifying.push(StateKey::new(&key));
        self
    }

    /// A ring from base64 keys: the signing key, then verification keys.
    pub fn from_base64(signing: &str, verifying: &[&str]) -> Result<Self, KeyError> {
        let mut ring = KeyRing::new(decode_key(signing)?);
        for key in verifying {
            ring = ring.with_verification_key(decode_key(key)?);
        }
        Ok(ring)
    }

    /// The ring configured by `MCP_STATE_KEY` (and `MCP_STATE_VERIFY_KEYS`),
    /// if set.
    pub fn from_env() -> Option<Result<Self, KeyError>> {
        let signing = std::env::var(STATE_KEY_ENV).ok()?;
        let verifying = std::env::var(STATE_VERIFY_KEYS_ENV).unwrap_or_default();
        let verifying: Vec<&str> = verifying
            .split(',')
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .collect();
        Some(Self::from_base64(signing.trim(), &verifying))
    }

    /// A fresh random key, valid for this process only.
    pub fn random() -> Self {
        let key: [u8; 32] = Key::<Aes256GcmSiv>::generate().into();
        KeyRing {
            random: true,
            ..KeyRing::new(key)
        }
    }

    /// A fresh random key for a process that is meant to be the only
    /// instance (the inspector): like [`random`](Self::random), without the
    /// warning about multi-instance deployments.
    pub(crate) fn single_instance() -> Self {
        KeyRing::new(Key::<Aes256GcmSiv>::generate().into())
    }

    /// Whether the key is a random per-process one.
    pub(crate) fn is_random(&self) -> bool {
        self.random
    }

    /// Seals `plaintext` under the signing key, bound to `aad`: the key's
    /// id, a random nonce, then the ciphertext and its tag.
    pub(crate) fn seal(&self, aad: &[u8], plaintext: &[u8]) -> Option<Vec<u8>> {
        let nonce = Nonce::generate();
        let ciphertext = self
            .signing
            .cipher
            .encrypt(
                &nonce,
                AeadPayload {
                    msg: plaintext,
                    aad,
                },
            )
            .ok()?;
        let mut out = Vec::with_capacity(ID_BYTES + NONCE_BYTES + ciphertext.len());
        out.extend_from_slice(&self.signing.id);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&ciphertext);
        Some(out)
    }

    /// Opens what [`seal`](Self::seal) sealed with the same `aad`, under
    /// any key of the ring, decrypting in place: the plaintext, or `None`
    /// for anything else.
    pub(crate) fn open_in_place<'a>(&self, aad: &[u8], sealed: &'a mut [u8]) -> Option<&'a [u8]> {
        if sealed.len() < ID_BYTES + NONCE_BYTES + TAG_BYTES {
            return None;
        }
        let (head, body) = sealed.split_at_mut(ID_BYTES + NONCE_BYTES);
        let (id, nonce) = head.split_at(ID_BYTES);
        let key = self.key(id)?;
        let nonce = Nonce::try_from(nonce).ok()?;
        let (ciphertext, tag) = body.split_at_mut(body.len() - TAG_BYTES);
        let tag = Tag::try_from(&*tag).ok()?;
        key.cipher
            .decrypt_inout_detached(&nonce, aad, ciphertext.into(), &tag)
            .ok()?;
        Some(ciphertext)
    }

    /// Seals `plaintext` into an opaque base64url token (for a header or a
    /// URL) with the current key: authenticated and encrypted, bound to
    /// `aad` (say what the token is for, so that a token minted for one
    /// purpose opens for no other), and opened by every instance holding
    /// the same keys (`MCP_STATE_KEY`). What the legacy adapter's session
    /// ids are. `None` only if the system's random source fails.
    pub fn seal_token(&self, aad: &[u8], plaintext: &[u8]) -> Option<String> {
        self.seal(aad, plaintext)
            .map(|sealed| URL_SAFE_NO_PAD.encode(sealed))
    }

    /// Opens what [`seal_token`](Self::seal_token) sealed with the same
    /// `aad`, with the current key or a verify-only one; `None` for
    /// anything else (another purpose, a key not held, a forged or cut
    /// token). The token is the client's: treat what it opens to as
    /// attacker-chosen unless your `aad` and plaintext say otherwise.
    pub fn open_token(&self, aad: &[u8], text: &str) -> Option<Vec<u8>> {
        let mut bytes = URL_SAFE_NO_PAD.decode(text).ok()?;
        self.open_in_place(aad, &mut bytes).map(<[u8]>::to_vec)
    }

    fn key(&self, id: &[u8]) -> Option<&StateKey> {
        std::iter::once(&self.signing)
            .chain(&self.verifying)
            .find(|k| k.id == id)
    }
}

fn decode_key(text: &str) -> Result<[u8; 32], KeyError> {
    let bytes = STANDARD
        .decode(text)
        .or_else(|_| URL_SAFE_NO_PAD.decode(text))
        .map_err(|_| KeyError("a requestState key must be base64".into()))?;
    bytes
        .try_into()
        .map_err(|_| KeyError("a requestState key must be 32 bytes (256 bits) of base64".into()))
}

/// 128 random bits (the OS generator) as hex: single-use ids.
pub(crate) fn random_hex() -> String {
    hex(&Array::<u8, U16>::generate())
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut out = vec![0; bytes.len() * 2];
    write_hex(bytes, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// Lowercase hex of `bytes` into `out`, two digits a byte.
pub(crate) fn write_hex(bytes: &[u8], out: &mut [u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (pair, byte) in out.chunks_exact_mut(2).zip(bytes) {
        pair[0] = DIGITS[usize::from(byte >> 4)];
        pair[1] = DIGITS[usize::from(byte & 0xf)];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_load_from_base64() {
        let key = STANDARD.encode([9u8; 32]);
        assert!(KeyRing::from_base64(&key, &[&key]).is_ok());
        assert!(KeyRing::from_base64("short", &[]).is_err());
        assert!(KeyRing::from_base64(&STANDARD.encode([9u8; 16]), &[]).is_err());
        let shown = format!("{:?}", KeyRing::new([9; 32]));
        assert!(!shown.contains("9, 9"), "{shown}");
    }

    #[test]
    fn tokens_open_only_with_their_associated_data_and_keys() {
        let keys = KeyRing::new([1; 32]);
        let token = keys.seal_token(b"use a", b"payload").unwrap();
        assert_eq!(
            keys.open_token(b"use a", &token).as_deref(),
            Some(&b"payload"[..])
        );
        assert_eq!(keys.open_token(b"use b", &token), None);
        assert_eq!(KeyRing::new([2; 32]).open_token(b"use a", &token), None);
        let rotated = KeyRing::new([2; 32]).with_verification_key([1; 32]);
        assert!(rotated.open_token(b"use a", &token).is_some());
        assert_eq!(keys.open_token(b"use a", "AAAA"), None);
    }
}
