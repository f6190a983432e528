//! The Redis plugin: `.with(RedisConfig::new(url))` keeps every shared part
//! of a server in Redis.

use mcp_runtime::plugin::{Plugin, PluginError, Setup, SharedParts};

use crate::{Redis, RedisBus, RedisConfig, RedisReplayGuard, RedisTaskStore};

/// Shared state in Redis is a plugin: `.with(RedisConfig::new(url))` keeps
/// change notifications, single-use states, the rate limit's budget, tasks
/// and legacy sessions in Redis (`.with(RedisConfig::from_env())` does when
/// `MCP_REDIS_URL` is set). Each server built connects on its own: its
/// `mcp-redis` thread stops with it, and its failed commands count into
/// its [`Metrics`](mcp_runtime::metrics::Metrics). What the application set
/// itself (a change bus, a replay guard, a task store, its own rate limiter)
/// stays as set. With health probes on (`HttpOptions::probes`), an
/// instance reports itself not ready while Redis does not answer.
impl Plugin for RedisConfig {
    fn install(self, server: &mut Setup<'_>) -> Result<(), PluginError> {
        server.shared_state(move |metrics| {
            let redis = Redis::connect_counting(&self, metrics.clone())?;
            let connected = redis.clone();
            let parts = SharedParts::new()
                // Ready while the pub/sub connection is up: it is lost
                // within a second of Redis going away, and remade when it
                // is back.
                .ready_when(move || connected.listening())
                .change_bus(RedisBus::new(&redis))
                .replay_guard(RedisReplayGuard::new(&redis))
                .task_store(RedisTaskStore::new(&redis));
            #[cfg(feature = "legacy")]
            let parts = parts.legacy_sessions(crate::RedisSessions::new(&redis));
            Ok(parts.rate_limits(redis))
        });
        Ok(())
    }

    fn name(&self) -> String {
        "Redis".to_owned()
    }
}
