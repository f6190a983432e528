//! `requestState`: what the server needs across rounds of a multi
//! round-trip request, sealed so that the client, which carries it, can
//! neither read nor change it.
//!
//! The state is sealed (`security::seal`) under a key from a [`KeyRing`],
//! and bound to the method, the tool/prompt name or
//! resource URI, a digest of the arguments, an expiry and (when there is
//! one) the authenticated principal. Any instance holding the key can open
//! it; tampering, expiry, a rotated-out key or use on another request all
//! fail the same way, with a message that reveals nothing about the key.
//!
//! Each state lists the keys its round asked, each with the digest of the
//! question sent under it, so that an answer counts only for the question
//! it answered. A handler's [`StatePolicy`] adds two rules for the tools a
//! repeat could change things with: each of their states opens once (a
//! [`ReplayGuard`] remembers its nonce), and answers count only with the
//! state of the round that asked them.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

pub(crate) use super::canonical::canonical_json;
use super::question::QuestionDigest;
use super::round::Asked;
use crate::protocol::ErrorObject;
use crate::security::seal::{KeyRing, random_hex, write_hex};

/// The largest `requestState` accepted, checked before any decoding.
pub const MAX_STATE_BYTES: usize = 64 * 1024;

const VERSION: &str = "v2";
const ASSOCIATED_DATA: &[u8] = b"mcp-runtime requestState v2";

/// What a sealed state is bound to: the request it was sealed for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Binding<'a> {
    /// The method: `tools/call`, `prompts/get` or `resources/read`.
    pub(crate) method: &'a str,
    /// The tool or prompt name, or the resource URI.
    pub(crate) name: &'a str,
    /// The arguments' JSON text, as the request carries it.
    pub(crate) arguments: &'a str,
    /// The authenticated principal, when there is one.
    pub(crate) principal: Option<&'a str>,
}

impl<'a> Binding<'a> {
    pub(crate) fn new(
        method: &'a str,
        name: &'a str,
        arguments: &'a str,
        principal: Option<&'a str>,
    ) -> Binding<'a> {
        Binding {
            method,
            name,
            arguments,
            principal,
        }
    }

    fn sealed(&self) -> SealedBinding<'a> {
        SealedBinding {
            method: self.method,
            name: self.name,
            arguments: canonical_digest(self.arguments),
            text: HexDigest::of(self.arguments.as_bytes()),
            principal: self.principal,
        }
    }

    /// Whether a state sealed with `sealed` belongs to this request. A
    /// retry that echoes the arguments verbatim is recognized by one hash
    /// of their text; any other is parsed and compared canonically.
    fn matches(&self, sealed: &UnsealedBinding<'_>) -> bool {
        sealed.method == self.method
            && sealed.name == self.name
            && sealed.principal.as_deref() == self.principal
            && (sealed.text == HexDigest::of(self.arguments.as_bytes()).as_str()
                || sealed.arguments == canonical_digest(self.arguments).as_str())
    }
}

/// A [`Binding`] as sealed. The arguments are digested twice: their text,
/// which the usual retry (arguments echoed as sent) matches cheaply, and
/// their canonical JSON, which a retry with equal arguments written
/// differently (keys in another order, other spacing) matches.
#[derive(Serialize)]
struct SealedBinding<'a> {
    #[serde(rename = "m")]
    method: &'a str,
    #[serde(rename = "n")]
    name: &'a str,
    /// SHA-256 of the canonical JSON of the arguments.
    #[serde(rename = "a")]
    arguments: HexDigest,
    /// SHA-256 of the arguments' text.
    #[serde(rename = "t")]
    text: HexDigest,
    #[serde(rename = "p", skip_serializing_if = "Option::is_none")]
    principal: Option<&'a str>,
}

/// A SHA-256 digest as lowercase hex, on the stack.
struct HexDigest([u8; 64]);

impl HexDigest {
    fn of(bytes: &[u8]) -> HexDigest {
        let mut hex = [0; 64];
        write_hex(&Sha256::digest(bytes), &mut hex);
        HexDigest(hex)
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl Serialize for HexDigest {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// The digest of the arguments' canonical JSON (text that is not JSON
/// digests as `null`; the dispatcher refuses it before any round).
fn canonical_digest(arguments: &str) -> HexDigest {
    let value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    HexDigest::of(&canonical_json(&value))
}

/// How a handler's `requestState` may be used, decided once per handler
/// when the registry is built (`registry::tool`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StatePolicy {
    /// Each state opens once: a replayed one is refused.
    pub(crate) single_use: bool,
    /// Answers count only together with the state of the round that asked
    /// them: an answer sent up front (without a state, or with the state
    /// of a round that asked something else) is not used, and its question
    /// is asked.
    pub(crate) bound_answers: bool,
}

impl StatePolicy {
    /// Reads (prompts, resources, read-only tools): states may be used
    /// again within their lifetime, and answers may come up front.
    pub(crate) const LENIENT: StatePolicy = StatePolicy {
        single_use: false,
        bound_answers: false,
    };
}

/// What travels in `requestState`.
#[derive(Serialize)]
struct Sealed<'a> {
    #[serde(rename = "b")]
    binding: SealedBinding<'a>,
    /// Expiry, seconds since the Unix epoch.
    #[serde(rename = "e")]
    expires: u64,
    /// The round this state starts (1 for the first retry).
    #[serde(rename = "r")]
    round: u32,
    /// A random identifier, for single-use enforcement.
    #[serde(rename = "i")]
    nonce: String,
    /// Answers and remembered values from earlier rounds, by key.
    #[serde(rename = "s")]
    steps: Map<String, Value>,
    /// The keys the sealing round asked, each with the digest of the
    /// question it sent: `{key: digest}`.
    #[serde(rename = "d")]
    asked: AskedDigests<'a>,
}

/// The keys a round asked with their questions' digests, sealed as an
/// object in the order asked.
struct AskedDigests<'a>(&'a [(String, QuestionDigest)]);

impl Serialize for AskedDigests<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(key, digest)| (key, digest.hex())))
    }
}

/// A [`Sealed`] state as read back, borrowing its text from the decrypted
/// bytes (the server wrote it, so it has no escapes to undo).
#[derive(Deserialize)]
struct Unsealed<'a> {
    #[serde(rename = "b", borrow)]
    binding: UnsealedBinding<'a>,
    #[serde(rename = "e")]
    expires: u64,
    #[serde(rename = "r")]
    round: u32,
    #[serde(rename = "i", borrow)]
    nonce: Cow<'a, str>,
    #[serde(rename = "s", default)]
    steps: Map<String, Value>,
    #[serde(rename = "d", default)]
    digests: Option<Map<String, Value>>,
    /// The keys asked, without digests, in states sealed before digests
    /// were (and only under [`StatePolicy::bound_answers`]).
    #[serde(rename = "q", borrow, default)]
    asked: Option<Vec<Cow<'a, str>>>,
}

impl Unsealed<'_> {
    /// What the sealing round asked, and whether only that counts.
    fn asked(&mut self, bound: bool) -> Asked {
        let questions = match (self.digests.take(), self.asked.take()) {
            (Some(digests), _) => digests
                .into_iter()
                .map(|(key, digest)| (key, digest.as_str().and_then(QuestionDigest::parse)))
                .collect(),
            // No question to match these keys' answers to: asked again.
            (None, Some(keys)) => keys
                .into_iter()
                .map(|key| (key.into_owned(), None))
                .collect(),
            (None, None) => Vec::new(),
        };
        Asked { questions, bound }
    }
}

#[derive(Deserialize)]
struct UnsealedBinding<'a> {
    #[serde(rename = "m", borrow)]
    method: Cow<'a, str>,
    #[serde(rename = "n", borrow)]
    name: Cow<'a, str>,
    #[serde(rename = "a", borrow)]
    arguments: Cow<'a, str>,
    #[serde(rename = "t", borrow)]
    text: Cow<'a, str>,
    #[serde(rename = "p", borrow, default)]
    principal: Option<Cow<'a, str>>,
}

/// What an opened state carries into the round it starts.
#[derive(Debug, PartialEq)]
pub(crate) struct Opened {
    /// The round this state starts (1 for the first retry).
    pub(crate) round: u32,
    /// Answers and remembered values from earlier rounds, by key.
    pub(crate) steps: Map<String, Value>,
    /// What the sealing round asked: the keys whose answers this request
    /// may carry, each for the question it was asked with (and only those
    /// keys, with [`StatePolicy::bound_answers`]).
    pub(crate) asked: Asked,
    /// For a single-use state: the claim to make on it before the round
    /// runs ([`StateSealer::claim`]).
    pub(crate) claim: Option<Claim>,
}

/// A single-use state's nonce, to be recorded as used.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Claim {
    nonce: String,
    issued: SystemTime,
    expires: SystemTime,
}

/// Refuses a state that was already used once, across every instance that
/// shares the store.
///
/// States are single use by default for tools a repeat could change things
/// with (not `read_only`, and `destructive` or not `idempotent`, with the
/// spec's defaults for hints not given), tracked by an
/// [`InMemoryReplayGuard`]; see
/// [`Setup::replay_guard`](crate::plugin::Setup::replay_guard) (in a plugin) for a
/// store shared by several instances and
/// [`RequestStateOptions::single_use_everywhere`](crate::RequestStateOptions::single_use_everywhere)
/// to make every state single use.
pub trait ReplayGuard: Send + Sync + 'static {
    /// Records the state's nonce: `Ok(true)` the first time, `Ok(false)`
    /// if it was seen, or if the store cannot vouch for the time the state
    /// was issued (it lost what it recorded since: a Redis that restarted
    /// without persistence, was flushed, or failed over). `now` is the
    /// sealer's clock, for forgetting
    /// expired nonces. `Err` when the store cannot tell (it is
    /// unreachable): the state is then refused with a retryable error, so
    /// that a replay is never accepted because a store was down.
    fn first_use<'a>(&'a self, state: StateUse<'a>, now: SystemTime) -> GuardFuture<'a>;

    /// As [`first_use`](ReplayGuard::first_use), telling a state seen
    /// before from one the store cannot vouch for because its memory
    /// begins after the state was issued ([`FirstUse::BeforeMemory`]), so
    /// that a refusal can say which it is. The default answers
    /// [`FirstUse::Seen`] for every `false` of `first_use`: override it in
    /// a store whose memory can begin again.
    fn verdict<'a>(&'a self, state: StateUse<'a>, now: SystemTime) -> VerdictFuture<'a> {
        let first = self.first_use(state, now);
        Box::pin(async move {
            Ok(if first.await? {
                FirstUse::First
            } else {
                FirstUse::Seen
            })
        })
    }
}

/// What [`ReplayGuard::verdict`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FirstUse {
    /// Never seen: now recorded.
    First,
    /// Recorded before: a replay.
    Seen,
    /// Issued before the store's memory begins (or too near its
    /// beginning to tell, across clocks): it may have been used, so it is
    /// refused, but a state issued now will pass once the memory is older.
    BeforeMemory,
}

impl FirstUse {
    /// Whether the state may be used.
    pub fn is_first(self) -> bool {
        self == FirstUse::First
    }
}

/// What [`ReplayGuard::verdict`] returns.
pub type VerdictFuture<'a> =
    Pin<Box<dyn Future<Output = Result<FirstUse, GuardUnavailable>> + Send + 'a>>;

/// A single-use state being used.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct StateUse<'a> {
    /// Random, unique to the state.
    pub nonce: &'a str,
    /// When it was sealed, to the second, never later than it was: a
    /// store that forgot what it recorded before some moment refuses
    /// states issued before then.
    pub issued: SystemTime,
    /// When it expires: recording the nonce longer is useless.
    pub expires: SystemTime,
}

impl<'a> StateUse<'a> {
    /// A state with `nonce`, sealed at `issued`, valid until `expires`.
    pub fn new(nonce: &'a str, issued: SystemTime, expires: SystemTime) -> Self {
        StateUse {
            nonce,
            issued,
            expires,
        }
    }
}

/// What [`ReplayGuard::first_use`] returns.
pub type GuardFuture<'a> =
    Pin<Box<dyn Future<Output = Result<bool, GuardUnavailable>> + Send + 'a>>;

/// Why a [`ReplayGuard`] could not tell whether a state was used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuardUnavailable(pub String);

impl fmt::Display for GuardUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the replay store is unavailable: {}", self.0)
    }
}

impl std::error::Error for GuardUnavailable {}

/// A [`ReplayGuard`] for one process, forgetting nonces once they expire:
/// the default. It holds one entry per single-use state opened within the
/// state lifetime. Instances behind a load balancer need a shared guard (a
/// database or a cache with `SET NX`): a state replayed on another
/// instance than the one that saw it is not caught by this one. Implement
/// [`ReplayGuard`] over the shared store.
#[derive(Debug, Default)]
pub struct InMemoryReplayGuard {
    seen: Mutex<SeenNonces>,
}

#[derive(Debug, Default)]
struct SeenNonces {
    expiry: std::collections::HashMap<String, SystemTime>,
    /// Size after the last sweep: sweeping again once it doubles keeps
    /// the amortized cost per request constant.
    swept_at: usize,
}

impl ReplayGuard for InMemoryReplayGuard {
    fn first_use<'a>(&'a self, state: StateUse<'a>, now: SystemTime) -> GuardFuture<'a> {
        let first = self.record(state.nonce, state.expires, now);
        Box::pin(std::future::ready(Ok(first)))
    }
}

impl InMemoryReplayGuard {
    /// Records `nonce`: `false` if it was seen (and has not expired).
    pub fn record(&self, nonce: &str, expires: SystemTime, now: SystemTime) -> bool {
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if seen.expiry.len() >= (2 * seen.swept_at).max(1024) {
            seen.expiry.retain(|_, until| *until > now);
            seen.swept_at = seen.expiry.len();
        }
        match seen.expiry.get(nonce) {
            Some(until) if *until > now => false,
            _ => {
                seen.expiry.insert(nonce.to_owned(), expires);
                true
            }
        }
    }
}

/// The time source for expiry (tests substitute a controllable one).
pub type Clock = Arc<dyn Fn() -> SystemTime + Send + Sync>;

/// Sealing and opening with the server's settings.
#[derive(Clone)]
pub(crate) struct StateSealer {
    pub(crate) keys: KeyRing,
    pub(crate) ttl: Duration,
    pub(crate) max_rounds: u32,
    /// Where single-use states are remembered.
    pub(crate) replay: Arc<dyn ReplayGuard>,
    /// Every state single use, whatever the handler's policy.
    pub(crate) single_use_everywhere: bool,
    pub(crate) clock: Clock,
}

impl fmt::Debug for StateSealer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateSealer")
            .field("keys", &self.keys)
            .field("ttl", &self.ttl)
            .field("max_rounds", &self.max_rounds)
            .field("single_use_everywhere", &self.single_use_everywhere)
            .finish_non_exhaustive()
    }
}

/// The one message every state failure gets: it says nothing about why.
pub(crate) fn invalid_state() -> ErrorObject {
    ErrorObject::invalid_params(
        "Invalid requestState: it is malformed, expired, or does not belong to this request; retry without it",
    )
}

fn seconds(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl StateSealer {
    /// Seals the state for the round after `round`; `asked` (the keys this
    /// round asks, with the digests of their questions) travels with it.
    pub(crate) fn seal(
        &self,
        binding: Binding<'_>,
        round: u32,
        steps: Map<String, Value>,
        asked: &[(String, QuestionDigest)],
    ) -> Result<String, ErrorObject> {
        if round >= self.max_rounds {
            return Err(ErrorObject::invalid_params(format!(
                "This request needs more rounds of input than the server allows ({}); start it again",
                self.max_rounds
            )));
        }
        let sealed = Sealed {
            binding: binding.sealed(),
            expires: seconds((self.clock)() + self.ttl),
            round: round + 1,
            nonce: random_hex(),
            steps,
            asked: AskedDigests(asked),
        };
        let plaintext = serde_json::to_vec(&sealed).map_err(|_| ErrorObject::internal_error())?;
        let out = self
            .keys
            .seal(ASSOCIATED_DATA, &plaintext)
            .ok_or_else(ErrorObject::internal_error)?;
        if out.len() * 4 / 3 > MAX_STATE_BYTES {
            return Err(ErrorObject::new(
                crate::protocol::error_code::INTERNAL_ERROR,
                "The request's state outgrew the requestState size limit",
            ));
        }
        Ok(format!("{VERSION}.{}", URL_SAFE_NO_PAD.encode(out)))
    }

    /// Opens and checks a state against the request it came back with,
    /// under the policy of the handler it names.
    pub(crate) fn open(
        &self,
        text: &str,
        expected: &Binding<'_>,
        policy: StatePolicy,
    ) -> Result<Opened, ErrorObject> {
        if text.len() > MAX_STATE_BYTES {
            return Err(invalid_state());
        }
        let encoded = text
            .strip_prefix(VERSION)
            .and_then(|r| r.strip_prefix('.'))
            .ok_or_else(invalid_state)?;
        let mut bytes = URL_SAFE_NO_PAD
            .decode(encoded)
            .map_err(|_| invalid_state())?;
        let plaintext = self
            .keys
            .open_in_place(ASSOCIATED_DATA, &mut bytes)
            .ok_or_else(invalid_state)?;
        let mut sealed: Unsealed<'_> =
            serde_json::from_slice(plaintext).map_err(|_| invalid_state())?;
        if !expected.matches(&sealed.binding) || sealed.expires <= seconds((self.clock)()) {
            return Err(invalid_state());
        }
        let asked = sealed.asked(policy.bound_answers);
        let expires = UNIX_EPOCH + Duration::from_secs(sealed.expires);
        let claim = (policy.single_use || self.single_use_everywhere).then(|| Claim {
            nonce: sealed.nonce.into_owned(),
            // Sealed `ttl` before it expires (`expires` was rounded down,
            // so this is never later than the real moment).
            issued: expires.checked_sub(self.ttl).unwrap_or(UNIX_EPOCH),
            expires,
        });
        Ok(Opened {
            round: sealed.round,
            steps: sealed.steps,
            asked,
            claim,
        })
    }

    /// Records a single-use state as used: a replay gets the error every
    /// bad state gets; a store that cannot tell gets a retryable
    /// `-32002`-style busy error (never an accepted replay).
    pub(crate) async fn claim(&self, claim: Claim) -> Result<(), ErrorObject> {
        let verdict = self
            .replay
            .first_use(
                StateUse::new(&claim.nonce, claim.issued, claim.expires),
                (self.clock)(),
            )
            .await;
        match verdict {
            Ok(true) => Ok(()),
            Ok(false) => Err(invalid_state()),
            Err(unavailable) => {
                tracing::warn!(%unavailable, "a single-use requestState could not be checked");
                Err(ErrorObject::new(
                    crate::protocol::error_code::SERVER_BUSY,
                    "requestState is single use, and whether it was used cannot be checked now; retry shortly",
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl StateSealer {
        /// `open`, then the claim of a single-use state (the in-memory
        /// guard answers at once).
        fn open_and_claim(
            &self,
            text: &str,
            expected: &Binding<'_>,
            policy: StatePolicy,
        ) -> Result<Opened, ErrorObject> {
            use futures_util::FutureExt as _;
            let mut opened = self.open(text, expected, policy)?;
            if let Some(claim) = opened.claim.take() {
                self.claim(claim)
                    .now_or_never()
                    .expect("the in-memory guard answers at once")?;
            }
            Ok(opened)
        }
    }
    use serde_json::json;

    const LENIENT: StatePolicy = StatePolicy::LENIENT;
    const STRICT: StatePolicy = StatePolicy {
        single_use: true,
        bound_answers: true,
    };

    fn sealer(keys: KeyRing, now: u64) -> StateSealer {
        StateSealer {
            keys,
            ttl: Duration::from_secs(300),
            max_rounds: 4,
            replay: Arc::new(InMemoryReplayGuard::default()),
            single_use_everywhere: false,
            clock: Arc::new(move || UNIX_EPOCH + Duration::from_secs(now)),
        }
    }

    fn binding(name: &'static str, arguments: Value) -> Binding<'static> {
        let text = Box::leak(arguments.to_string().into_boxed_str());
        Binding::new("tools/call", name, text, None)
    }

    #[test]
    fn sealed_state_round_trips_and_binds() {
        let sealer = sealer(KeyRing::new([7; 32]), 1_000);
        let bound = binding("a", json!({"x": 1, "y": [1, 2]}));
        let mut steps = Map::new();
        steps.insert("k".into(), json!({"v": true}));
        let text = sealer.seal(bound, 0, steps.clone(), &[]).unwrap();
        let opened = sealer
            .open(&text, &binding("a", json!({"y": [1, 2], "x": 1})), LENIENT)
            .unwrap();
        let asked = Asked::default();
        assert_eq!(
            (opened.round, opened.steps, opened.asked),
            (1, steps, asked)
        );
        // Another tool, other arguments: refused.
        assert!(
            sealer
                .open(&text, &binding("b", json!({"x": 1, "y": [1, 2]})), LENIENT)
                .is_err()
        );
        assert!(
            sealer
                .open(&text, &binding("a", json!({"x": 2, "y": [1, 2]})), LENIENT)
                .is_err()
        );
    }

    #[test]
    fn arguments_match_by_text_or_canonically() {
        let sealer = sealer(KeyRing::new([7; 32]), 1_000);
        let sent = r#"{"x": 1, "y": [1, 2]}"#;
        let text = sealer
            .seal(
                Binding::new("tools/call", "a", sent, None),
                0,
                Map::new(),
                &[],
            )
            .unwrap();
        let opens = |arguments: &str| {
            sealer
                .open(
                    &text,
                    &Binding::new("tools/call", "a", arguments, None),
                    LENIENT,
                )
                .is_ok()
        };
        // Echoed as sent, or equal but written differently.
        assert!(opens(sent));
        assert!(opens(r#"{"y":[1,2],"x":1}"#));
        // Different values, or not JSON.
        assert!(!opens(r#"{"x": 1, "y": [2, 1]}"#));
        assert!(!opens(r#"{"x": 1, "y": [1, 2"#));
        // The principal is part of the binding.
        let mine = Binding::new("tools/call", "a", sent, Some("alice"));
        let text = sealer.seal(mine, 0, Map::new(), &[]).unwrap();
        assert!(sealer.open(&text, &mine, LENIENT).is_ok());
        let theirs = Binding::new("tools/call", "a", sent, Some("bob"));
        assert!(sealer.open(&text, &theirs, LENIENT).is_err());
        let nobody = Binding::new("tools/call", "a", sent, None);
        assert!(sealer.open(&text, &nobody, LENIENT).is_err());
    }

    #[test]
    fn tampering_expiry_and_rotation() {
        let old = [1; 32];
        let new = [2; 32];
        let text = sealer(KeyRing::new(old), 1_000)
            .seal(binding("a", json!({})), 0, Map::new(), &[])
            .unwrap();
        let bound = binding("a", json!({}));
        // One flipped character anywhere is refused.
        for index in [3, text.len() / 2, text.len() - 1] {
            let mut bytes = text.clone().into_bytes();
            bytes[index] = if bytes[index] == b'A' { b'B' } else { b'A' };
            let tampered = String::from_utf8(bytes).unwrap();
            assert!(
                sealer(KeyRing::new(old), 1_000)
                    .open(&tampered, &bound, LENIENT)
                    .is_err()
            );
        }
        assert!(
            sealer(KeyRing::new(old), 1_000)
                .open(&format!("{text}-TAMPERED"), &bound, LENIENT)
                .is_err()
        );
        // Expired.
        assert!(
            sealer(KeyRing::new(old), 1_300)
                .open(&text, &bound, LENIENT)
                .is_err()
        );
        // A rotated-out key that is still trusted opens; an unknown one does not.
        assert!(
            sealer(KeyRing::new(new).with_verification_key(old), 1_000)
                .open(&text, &bound, LENIENT)
                .is_ok()
        );
        assert!(
            sealer(KeyRing::new(new), 1_000)
                .open(&text, &bound, LENIENT)
                .is_err()
        );
        // Oversized input is refused before decoding.
        assert!(
            sealer(KeyRing::new(old), 1_000)
                .open(&"v2.".repeat(30_000), &bound, LENIENT)
                .is_err()
        );
    }

    #[test]
    fn round_limit_and_single_use() {
        let mut sealer = sealer(KeyRing::new([3; 32]), 1_000);
        assert!(
            sealer
                .seal(binding("a", json!({})), 4, Map::new(), &[])
                .is_err()
        );
        let text = sealer
            .seal(binding("a", json!({})), 0, Map::new(), &[])
            .unwrap();
        // Lenient: opens as often as it is presented.
        for _ in 0..3 {
            assert!(
                sealer
                    .open_and_claim(&text, &binding("a", json!({})), LENIENT)
                    .is_ok()
            );
        }
        // Single use by policy: the first use is remembered, a replay is
        // refused with the message every state failure gets, and other
        // handlers' states are not affected.
        let once = StatePolicy {
            single_use: true,
            bound_answers: false,
        };
        assert!(
            sealer
                .open_and_claim(&text, &binding("a", json!({})), once)
                .is_ok()
        );
        assert_eq!(
            sealer.open_and_claim(&text, &binding("a", json!({})), once),
            Err(invalid_state())
        );
        assert!(
            sealer
                .open_and_claim(&text, &binding("a", json!({})), LENIENT)
                .is_ok()
        );
        // Single use everywhere: every handler's states.
        sealer.single_use_everywhere = true;
        let text = sealer
            .seal(binding("a", json!({})), 0, Map::new(), &[])
            .unwrap();
        assert!(
            sealer
                .open_and_claim(&text, &binding("a", json!({})), LENIENT)
                .is_ok()
        );
        assert!(
            sealer
                .open_and_claim(&text, &binding("a", json!({})), LENIENT)
                .is_err()
        );
    }

    /// The digest of a question that asks with `message`.
    fn question(message: &str) -> QuestionDigest {
        super::super::question::Question::Plain(json!({"message": message}))
            .digest(super::super::AskKind::ElicitUrl)
    }

    #[test]
    fn states_carry_the_questions_their_round_asked() {
        let sealer = sealer(KeyRing::new([5; 32]), 1_000);
        let bound = binding("a", json!({}));
        let asked = [
            ("answer".to_owned(), question("Sure?")),
            ("elicitation_2".to_owned(), question("Really?")),
        ];
        let text = sealer.seal(bound, 0, Map::new(), &asked).unwrap();
        let questions: Vec<_> = asked.iter().map(|(k, d)| (k.clone(), Some(*d))).collect();
        for (policy, bound_answers) in [(STRICT, true), (LENIENT, false)] {
            let opened = sealer.open(&text, &bound, policy).unwrap();
            let expected = Asked {
                questions: questions.clone(),
                bound: bound_answers,
            };
            assert_eq!(opened.asked, expected);
        }
    }

    #[test]
    fn states_sealed_before_digests_match_no_question() {
        // A state as the release before question digests sealed it: the
        // keys its round asked, without their questions.
        let sealer = sealer(KeyRing::new([5; 32]), 1_000);
        let bound = binding("a", json!({}));
        let binding = bound.sealed();
        let old = json!({
            "b": binding, "e": 2_000, "r": 1, "i": "n", "s": {}, "q": ["answer"]
        });
        let sealed = sealer
            .keys
            .seal(ASSOCIATED_DATA, old.to_string().as_bytes());
        let text = format!("{VERSION}.{}", URL_SAFE_NO_PAD.encode(sealed.unwrap()));
        let opened = sealer.open(&text, &bound, STRICT).unwrap();
        let questions = vec![("answer".to_owned(), None)];
        assert_eq!(
            opened.asked,
            Asked {
                questions,
                bound: true
            }
        );
    }

    #[test]
    fn each_question_costs_its_key_and_a_digest() {
        let sealer = sealer(KeyRing::new([5; 32]), 1_000);
        let bound = binding("a", json!({}));
        let none = sealer.seal(bound, 0, Map::new(), &[]).unwrap();
        let one = [("answer".to_owned(), question("Sure?"))];
        let listed = sealer.seal(bound, 0, Map::new(), &one).unwrap();
        // `"answer":"<32 hex digits>"`: 43 bytes of JSON, base64's 4 for 3.
        let entry = format!(r#""answer":"{}""#, one[0].1.hex());
        assert_eq!(entry.len(), 43);
        assert_eq!(listed.len() - none.len(), 57);
    }
}
