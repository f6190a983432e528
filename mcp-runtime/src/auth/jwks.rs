//! The signing keys of one trusted issuer: fetched from the `jwks_uri` of
//! its metadata (or a configured URI), cached, refreshed when a token names
//! a key we do not have (at most once per `min_refresh`, so a flood of
//! tokens with made-up `kid`s cannot make us hammer the issuer), and
//! re-fetched after `max_age`.

use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::Algorithm;
use jsonwebtoken::jwk::{Jwk, JwkSet, KeyAlgorithm, PublicKeyUse};
use tokio::sync::Mutex;
use tokio::time::Instant;

use super::discovery;
use super::fetch::Fetcher;
use super::verifier::VerifyError;

/// How soon a key set without any usable key is tried again, and a
/// `kid` we lack after a failed fetch: until then such tokens get 503.
const RETRY_EMPTY: Duration = Duration::from_secs(1);

#[derive(Debug)]
pub(crate) struct KeyStore {
    issuer: String,
    fetcher: Fetcher,
    min_refresh: Duration,
    max_age: Duration,
    /// Held while fetching: one fetch at a time.
    state: Mutex<KeyCache>,
    /// The last keys fetched, readable without waiting for a fetch in
    /// progress.
    published: std::sync::RwLock<Option<(Arc<JwkSet>, Instant)>>,
}

#[derive(Debug, Default)]
struct KeyCache {
    jwks_uri: Option<String>,
    keys: Option<JwkSet>,
    fetched: Option<Instant>,
    attempted: Option<Instant>,
    /// Whether the last fetch failed: the keys held may not be the
    /// issuer's current ones, so a `kid` missing from them proves nothing.
    failing: bool,
    fetches: u32,
}

impl KeyStore {
    pub(crate) fn new(
        issuer: String,
        jwks_uri: Option<String>,
        fetcher: Fetcher,
        min_refresh: Duration,
        max_age: Duration,
    ) -> KeyStore {
        KeyStore {
            issuer,
            fetcher,
            min_refresh,
            max_age,
            state: Mutex::new(KeyCache {
                jwks_uri,
                ..KeyCache::default()
            }),
            published: std::sync::RwLock::new(None),
        }
    }

    /// How many times the key set was fetched (for tests and metrics).
    #[cfg(test)]
    pub(crate) async fn fetches(&self) -> u32 {
        self.state.lock().await.fetches
    }

    /// The keys that may have signed a token with header `kid` and `alg`.
    pub(crate) async fn keys_for(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<Vec<Jwk>, VerifyError> {
        let now = Instant::now();
        // Fast path: known keys are used without waiting for anyone. Stale
        // keys are refreshed by one request while the others keep using
        // them, so an hourly refresh never stalls the server.
        let published = self
            .published
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let mut refreshing = None;
        if let Some((keys, fetched)) = published {
            let found = candidates(Some(&keys), kid, alg);
            if !found.is_empty() {
                if now.duration_since(fetched) < self.max_age {
                    return Ok(found);
                }
                match self.state.try_lock() {
                    Ok(guard) => refreshing = Some(guard),
                    Err(_) => return Ok(found),
                }
            }
        }
        // One fetch at a time: concurrent requests with a new `kid` wait
        // for the same refresh instead of each starting one.
        let mut state = match refreshing {
            Some(guard) => guard,
            None => self.state.lock().await,
        };
        let stale = state
            .fetched
            .is_none_or(|at| now.duration_since(at) >= self.max_age);
        let missing = candidates(state.keys.as_ref(), kid, alg).is_empty();
        // Unknown `kid`s refresh at most every `min_refresh` (and, with no
        // keys at all or after a failed fetch, every second: those
        // requests are answered 503 until the issuer is back); age-based
        // refreshes once per `max_age` (or `min_refresh`, if shorter,
        // after a failure).
        let cooldown = if state.keys.is_none() || (missing && state.failing) {
            RETRY_EMPTY
        } else if missing {
            self.min_refresh
        } else {
            self.min_refresh.min(self.max_age)
        };
        let may_fetch = state
            .attempted
            .is_none_or(|at| now.duration_since(at) >= cooldown);
        if (stale || missing) && may_fetch {
            self.refresh(&mut state, now).await;
        }
        let found = candidates(state.keys.as_ref(), kid, alg);
        if !found.is_empty() {
            return Ok(found);
        }
        // A key we lack while the issuer cannot be reached may be one it
        // rotated in: the token cannot be judged (503, not 401, or the
        // client would discard a good token and re-authorize against a
        // server that is down). This holds for the requests that waited on
        // the failed fetch and for those in its cooldown alike.
        if state.failing {
            return Err(VerifyError::Unavailable(
                "the authorization server's keys are unavailable".into(),
            ));
        }
        Err(VerifyError::UnknownKey)
    }

    /// Fetches the keys now and publishes them; a failure keeps the keys
    /// we have, and marks them as possibly out of date.
    async fn refresh(&self, state: &mut KeyCache, now: Instant) {
        state.attempted = Some(now);
        match self.fetch(state).await {
            Ok(keys) => {
                *self
                    .published
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) =
                    Some((Arc::new(keys.clone()), now));
                state.keys = Some(keys);
                state.fetched = Some(now);
                state.failing = false;
                state.fetches += 1;
            }
            Err(problem) => {
                tracing::warn!(issuer = %self.issuer, %problem, "could not fetch the issuer's signing keys");
                state.failing = true;
            }
        }
    }

    async fn fetch(&self, state: &mut KeyCache) -> Result<JwkSet, String> {
        let uri = match &state.jwks_uri {
            Some(uri) => uri.clone(),
            None => {
                let metadata = discovery::discover(&self.fetcher, &self.issuer).await?;
                let uri = metadata
                    .get("jwks_uri")
                    .and_then(|u| u.as_str())
                    .ok_or_else(|| format!("the metadata of `{}` has no jwks_uri", self.issuer))?
                    .to_owned();
                state.jwks_uri = Some(uri.clone());
                uri
            }
        };
        let document = self.fetcher.get_json(&uri).await?;
        // Keys we cannot parse (other key types, encryption keys) are
        // skipped one by one rather than failing the whole set.
        let keys = document
            .get("keys")
            .and_then(|k| k.as_array())
            .ok_or_else(|| format!("{uri}: not a JWK set"))?
            .iter()
            .filter_map(|key| serde_json::from_value::<Jwk>(key.clone()).ok())
            .collect();
        Ok(JwkSet { keys })
    }
}

/// The keys of `set` usable for `alg` and named by `kid` (any usable key
/// when the token names none).
fn candidates(set: Option<&JwkSet>, kid: Option<&str>, alg: Algorithm) -> Vec<Jwk> {
    let Some(set) = set else {
        return Vec::new();
    };
    set.keys
        .iter()
        .filter(|key| match kid {
            Some(kid) => key.common.key_id.as_deref() == Some(kid),
            None => true,
        })
        .filter(|key| {
            !matches!(
                key.common.public_key_use,
                Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))
            )
        })
        .filter(|key| {
            key.common
                .key_algorithm
                .is_none_or(|declared| key_algorithm(declared) == Some(alg))
        })
        .cloned()
        .collect()
}

fn key_algorithm(alg: KeyAlgorithm) -> Option<Algorithm> {
    Some(match alg {
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::ES384 => Algorithm::ES384,
        KeyAlgorithm::RS256 => Algorithm::RS256,
        KeyAlgorithm::RS384 => Algorithm::RS384,
        KeyAlgorithm::RS512 => Algorithm::RS512,
        KeyAlgorithm::PS256 => Algorithm::PS256,
        KeyAlgorithm::PS384 => Algorithm::PS384,
        KeyAlgorithm::PS512 => Algorithm::PS512,
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        _ => return None,
    })
}
