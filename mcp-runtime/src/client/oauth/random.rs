//! Random values of the flows: PKCE verifiers, `state`, and the `jti` of
//! assertions and DPoP proofs.

use aes_gcm_siv::aead::Generate as _;
use aes_gcm_siv::{Aes256GcmSiv, Key};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// 32 random bytes, base64url.
pub(crate) fn random_text() -> String {
    // The system's random source, as the `requestState` keys use it.
    let key = Key::<Aes256GcmSiv>::generate();
    URL_SAFE_NO_PAD.encode(key)
}
