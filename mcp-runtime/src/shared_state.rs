//! A shared backend: what the instances of one server keep in a store they
//! all reach (Redis is one: the `mcp-runtime-redis` crate), so that no
//! request needs sticky routing. A leaf module: the builder holds it and
//! plugins make it ([`crate::plugin::Setup::shared_state`]).

use std::fmt;
use std::sync::Arc;

use crate::changes::ChangeBus;
use crate::dispatch::ReadyCheck;
use crate::metrics::Metrics;
use crate::mrtr::ReplayGuard;
use crate::security::SharedLimits;
use crate::tasks::TaskStore;

/// What a shared backend keeps for one server: each part it leaves out
/// stays in this process. Made by the function given to
/// [`Setup::shared_state`](crate::plugin::Setup::shared_state), once for every
/// server built. What the application set itself (a change bus, a replay
/// guard, a task store, its own rate limiter) stays as set.
#[derive(Default)]
#[must_use]
pub struct SharedParts {
    pub(crate) bus: Option<Arc<dyn ChangeBus>>,
    pub(crate) replay: Option<Arc<dyn ReplayGuard>>,
    pub(crate) tasks: Option<Arc<dyn TaskStore>>,
    pub(crate) limits: Option<Arc<dyn SharedLimits>>,
    /// Whether the backend answers now (the readiness probe).
    pub(crate) ready: Option<ReadyCheck>,
    /// Legacy HTTP sessions' shared part (the HTTP endpoints take it).
    #[cfg(all(feature = "http", feature = "legacy"))]
    pub(crate) sessions: Option<Arc<dyn crate::legacy::SessionShare>>,
}

impl fmt::Debug for SharedParts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedParts")
            .field("change_bus", &self.bus.is_some())
            .field("replay_guard", &self.replay.is_some())
            .field("task_store", &self.tasks.is_some())
            .field("rate_limits", &self.limits.is_some())
            .field("ready_when", &self.ready.is_some())
            .finish_non_exhaustive()
    }
}

impl SharedParts {
    /// Nothing shared yet.
    pub fn new() -> Self {
        SharedParts::default()
    }

    /// Fans changes out through `bus`, so that a change on one instance
    /// reaches subscriptions on every other.
    pub fn change_bus(mut self, bus: impl ChangeBus) -> Self {
        self.bus = Some(Arc::new(bus));
        self
    }

    /// Remembers used single-use `requestState`s in `guard`, so that a
    /// state used on one instance is refused on every other.
    pub fn replay_guard(mut self, guard: impl ReplayGuard) -> Self {
        self.replay = Some(Arc::new(guard));
        self
    }

    /// Keeps tasks in `store`, so that any instance reads and answers any
    /// task.
    pub fn task_store(mut self, store: impl TaskStore) -> Self {
        self.tasks = Some(Arc::new(store));
        self
    }

    /// Keeps the built-in rate limit's budget in `limits`: one budget per
    /// client for every instance together.
    pub fn rate_limits(mut self, limits: impl SharedLimits) -> Self {
        self.limits = Some(Arc::new(limits));
        self
    }

    /// Tells the readiness probe (`HttpOptions::probes`) whether the
    /// backend answers now: while `ready` says no, the instance reports
    /// itself not ready, so that a load balancer sends its requests to
    /// instances that can serve them. Called on every probe: make it cheap
    /// (a flag the connection keeps, not a round trip).
    pub fn ready_when(mut self, ready: impl Fn() -> bool + Send + Sync + 'static) -> Self {
        self.ready = Some(ReadyCheck::new(ready));
        self
    }

    /// Shares legacy HTTP sessions' settings, ends and forwarded messages
    /// through `share` (see [`SessionShare`](crate::legacy::SessionShare)).
    #[cfg(all(feature = "http", feature = "legacy"))]
    #[cfg_attr(docsrs, doc(cfg(all(feature = "http", feature = "legacy"))))]
    pub fn legacy_sessions(mut self, share: impl crate::legacy::SessionShare + 'static) -> Self {
        self.sessions = Some(Arc::new(share));
        self
    }
}

/// Makes the shared parts of one server, counting the backend's failures
/// into its [`Metrics`].
/// (Its error is a [`PluginError`](crate::plugin::PluginError).)
pub(crate) type ConnectShared = Arc<
    dyn Fn(&Metrics) -> Result<SharedParts, Box<dyn std::error::Error + Send + Sync>> + Send + Sync,
>;
