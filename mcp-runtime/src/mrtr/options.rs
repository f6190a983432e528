//! How a server seals `requestState`: keys, lifetime, rounds, single use.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::Clock;
use crate::security::KeyRing;

/// How `requestState` is sealed and checked: give it to
/// [`ServerBuilder::request_state`](crate::ServerBuilder::request_state).
///
/// ```
/// use std::time::Duration;
/// use mcp_runtime::{KeyRing, RequestStateOptions, ServerBuilder};
///
/// let server = ServerBuilder::new("notes", "1.0.0")
///     .request_state(
///         RequestStateOptions::new()
///             .keys(KeyRing::new([7; 32]))
///             .ttl(Duration::from_secs(300))
///             .max_rounds(4),
///     )
///     .build();
/// # let _ = server;
/// ```
#[derive(Clone)]
#[must_use]
pub struct RequestStateOptions {
    pub(crate) keys: Option<KeyRing>,
    pub(crate) ttl: Duration,
    pub(crate) max_rounds: u32,
    pub(crate) single_use_everywhere: bool,
    pub(crate) clock: Clock,
}

impl Default for RequestStateOptions {
    fn default() -> Self {
        RequestStateOptions {
            keys: None,
            ttl: Duration::from_secs(600),
            max_rounds: 16,
            single_use_everywhere: false,
            clock: Arc::new(SystemTime::now),
        }
    }
}

impl fmt::Debug for RequestStateOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestStateOptions")
            .field("keys", &self.keys.is_some())
            .field("ttl", &self.ttl)
            .field("max_rounds", &self.max_rounds)
            .field("single_use_everywhere", &self.single_use_everywhere)
            .finish_non_exhaustive()
    }
}

impl RequestStateOptions {
    /// The defaults: keys from the environment, states valid 10 minutes,
    /// 16 rounds, single use for the tools a repeat could change things
    /// with, the system clock.
    pub fn new() -> Self {
        RequestStateOptions::default()
    }

    /// The keys that seal `requestState`. Without this, keys come from
    /// `MCP_STATE_KEY` (and `MCP_STATE_VERIFY_KEYS`), or else a random
    /// per-process key is used, which only works with a single instance.
    pub fn keys(mut self, keys: KeyRing) -> Self {
        self.keys = Some(keys);
        self
    }

    /// How long a `requestState` stays valid (default 10 minutes).
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// The most `input_required` results one request may get before it
    /// must start again (default 16).
    pub fn max_rounds(mut self, rounds: u32) -> Self {
        self.max_rounds = rounds.max(1);
        self
    }

    /// Makes every `requestState` usable once: a replayed state is refused
    /// with `-32602`, whatever the handler.
    ///
    /// Without this, states are single use for the tools a repeat could
    /// change things with: those not annotated `read_only` that are
    /// `destructive` or not `idempotent` (the spec's defaults for hints
    /// left out: a tool without annotations is single use), unless the tool
    /// says `#[tool(replayable_state)]`. The states of other tools, prompts
    /// and resource reads can be used again until they expire. Used states
    /// are remembered in this process; with several instances, a plugin
    /// gives a shared store ([`Setup::replay_guard`](crate::plugin::Setup::replay_guard),
    /// as the Redis plugin does).
    pub fn single_use_everywhere(mut self) -> Self {
        self.single_use_everywhere = true;
        self
    }

    /// The clock `requestState` expiry is measured with (for tests).
    pub fn clock(mut self, clock: impl Fn() -> SystemTime + Send + Sync + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }
}
