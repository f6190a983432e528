//! The single-use `requestState` guard, shared by every instance.

use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use super::Redis;
use mcp_runtime::mrtr::{
    FirstUse, GuardFuture, GuardUnavailable, ReplayGuard, StateUse, VerdictFuture,
};

/// A [`ReplayGuard`] in Redis: each single-use state's nonce is recorded
/// with an atomic `SET NX`, expiring with the state, so a state replayed on
/// any instance is refused. When Redis cannot be reached the state is
/// refused with a retryable error: a replay is never accepted because the
/// guard could not look.
///
/// The guard's memory begins with a marker it keeps beside the nonces:
/// when they were first recorded (Redis's own clock) and by which Redis
/// process (its `run_id`). A marker that is gone (`FLUSHALL`, eviction, a
/// restart without persistence) or names another process (a restart, a
/// failover to a replica that may lack the latest nonces) means the nonces
/// may be lost: the memory begins again *now*, and every state issued
/// before is refused as used (the client starts its call again). That
/// holds only while the marker outlives the nonces: run Redis with
/// `maxmemory-policy noeviction` (or no `maxmemory`), since any evicting
/// policy may drop a nonce and keep the marker; the guard warns at its
/// first use when the policy is another.
#[derive(Debug, Clone)]
pub struct RedisReplayGuard {
    redis: Redis,
    /// The `run_id` of the Redis process the memory is trusted for, as
    /// last read.
    run_id: Arc<Mutex<String>>,
}

impl RedisReplayGuard {
    /// A guard over `redis`. Its memory is looked at (and begun, for a
    /// Redis that has none) at once, in the background: a state issued
    /// within 2 s of the memory's beginning (3 s: a state's time is kept
    /// in whole seconds) is refused.
    pub fn new(redis: &Redis) -> Self {
        let guard = RedisReplayGuard {
            redis: redis.clone(),
            run_id: Arc::default(),
        };
        let early = guard.clone();
        redis.spawn(async move {
            if let Err(error) = early.renew().await {
                tracing::debug!(%error, "the replay guard will look at Redis on first use");
            }
        });
        guard
    }

    fn run_id(&self) -> String {
        self.run_id
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Reads the Redis process's `run_id` again, and begins the memory
    /// anew unless it begins for that process already.
    async fn renew(&self) -> Result<(), super::RedisUnavailable> {
        let info = server_info(&self.redis).await?;
        let run_id = info_field(&info, "run_id")?.to_owned();
        if let Ok(policy) = eviction_policy(&self.redis).await {
            warn_if_evicting(&policy);
        }
        let rebuilt = self
            .redis
            .script::<i64>(&BEGIN, vec![self.redis.memory_key()], vec![run_id.clone()])
            .await?;
        if rebuilt == 1 {
            tracing::warn!(
                "Redis had no memory of this server's single-use requestStates for its current \
                 process (a first start, or its data was lost: FLUSHALL, eviction, a restart \
                 without persistence, a failover): every state issued before now is refused \
                 as used, and clients start those calls again"
            );
        }
        *self
            .run_id
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = run_id;
        Ok(())
    }

    async fn check(
        &self,
        keys: &[String],
        args: &[String],
    ) -> Result<i64, super::RedisUnavailable> {
        let mut args = args.to_vec();
        args.push(self.run_id());
        self.redis.script(&FIRST_USE, keys.to_vec(), args).await
    }
}

impl ReplayGuard for RedisReplayGuard {
    fn first_use<'a>(&'a self, state: StateUse<'a>, now: SystemTime) -> GuardFuture<'a> {
        let verdict = self.verdict(state, now);
        Box::pin(async move { Ok(verdict.await?.is_first()) })
    }

    fn verdict<'a>(&'a self, state: StateUse<'a>, now: SystemTime) -> VerdictFuture<'a> {
        // Kept until the state expires (at least a millisecond: Redis
        // refuses a zero expiry).
        let remaining = state.expires.duration_since(now).unwrap_or_default();
        let millis = u64::try_from(remaining.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        let keys = vec![
            self.redis.memory_key(),
            self.redis.key(&format!("replay:{}", state.nonce)),
        ];
        let args = vec![unix_ms(state.issued).to_string(), millis.to_string()];
        Box::pin(async move {
            let unavailable = |error: super::RedisUnavailable| GuardUnavailable(error.0);
            let mut verdict = self.check(&keys, &args).await.map_err(unavailable)?;
            if verdict == NO_MEMORY {
                self.renew().await.map_err(unavailable)?;
                verdict = self.check(&keys, &args).await.map_err(unavailable)?;
            }
            Ok(match verdict {
                1 => FirstUse::First,
                FORGOTTEN => {
                    FORGOT.note(|suppressed| {
                        tracing::warn!(
                            suppressed,
                            "a single-use requestState was issued before Redis's memory of used \
                             states begins (it lost its data, restarted or failed over): the state \
                             is refused, and the client starts the call again"
                        );
                    });
                    FirstUse::BeforeMemory
                }
                _ => FirstUse::Seen,
            })
        })
    }
}

/// [`FIRST_USE`]'s answer for a state issued before Redis's memory begins.
const FORGOTTEN: i64 = -1;
/// [`FIRST_USE`]'s answer when the memory is gone, or is another Redis
/// process's (or this guard has not read the `run_id` yet).
const NO_MEMORY: i64 = -2;

static FORGOT: mcp_runtime::diagnostics::Throttle = mcp_runtime::diagnostics::Throttle::new();

/// Records a nonce once, unless the state was issued before Redis's memory
/// of this server's states begins. KEYS[1]: the marker (`<ms>:<run_id>`:
/// when the memory began, by Redis's clock, and for which Redis process);
/// KEYS[2]: the nonce's key. ARGV[1]: when the state was issued (ms);
/// ARGV[2]: how long to keep the nonce (ms); ARGV[3]: the `run_id` the
/// caller read. Answers 1 (first use), 0 (seen), -1 (issued before the
/// memory, or within 2 s of its start: the instances' clocks are not
/// Redis's) or -2 (no marker, or another process's).
static FIRST_USE: std::sync::LazyLock<::redis::Script> = std::sync::LazyLock::new(|| {
    ::redis::Script::new(
        r"
        local marker = redis.call('GET', KEYS[1])
        if not marker then
            return -2
        end
        local since, run_id = string.match(marker, '^(%d+):(.*)$')
        if not since or run_id ~= ARGV[3] then
            return -2
        end
        if tonumber(ARGV[1]) < tonumber(since) + 2000 then
            return -1
        end
        if redis.call('SET', KEYS[2], 1, 'NX', 'PX', ARGV[2]) then
            return 1
        end
        return 0
        ",
    )
});

/// Begins the memory now for Redis process ARGV[1], unless it already
/// begins for that process (another instance renewed it first). Answers 1
/// when it began it. KEYS[1]: the marker.
static BEGIN: std::sync::LazyLock<::redis::Script> = std::sync::LazyLock::new(|| {
    ::redis::Script::new(
        r"
        local marker = redis.call('GET', KEYS[1])
        if marker and string.match(marker, '^%d+:(.*)$') == ARGV[1] then
            return 0
        end
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        redis.call('SET', KEYS[1], string.format('%d:%s', now, ARGV[1]))
        return 1
        ",
    )
});

/// `INFO server`.
async fn server_info(redis: &super::Redis) -> Result<String, super::RedisUnavailable> {
    let mut info = ::redis::cmd("INFO");
    info.arg("server");
    redis.query(info).await
}

/// The value of `field` in an `INFO` answer.
fn info_field<'a>(info: &'a str, field: &str) -> Result<&'a str, super::RedisUnavailable> {
    let prefix = format!("{field}:");
    info.lines()
        .find_map(|line| line.strip_prefix(prefix.as_str()))
        .map(str::trim)
        .filter(|value| !value.is_empty())
        .ok_or_else(|| super::RedisUnavailable(format!("INFO server has no {field}")))
}

/// Redis's `maxmemory-policy` (and `maxmemory`), where `CONFIG GET` is
/// allowed (managed services may refuse it).
async fn eviction_policy(redis: &super::Redis) -> Result<(String, u64), super::RedisUnavailable> {
    let mut command = ::redis::cmd("CONFIG");
    command.arg("GET").arg("maxmemory*");
    let pairs: Vec<String> = redis.query(command).await?;
    let value = |name: &str| {
        pairs
            .chunks(2)
            .find(|pair| pair.first().map(String::as_str) == Some(name))
            .and_then(|pair| pair.get(1).cloned())
            .unwrap_or_default()
    };
    let limit = value("maxmemory").parse().unwrap_or(0);
    Ok((value("maxmemory-policy"), limit))
}

/// Warns when Redis may evict a nonce and keep the marker: a replay of
/// that state would be accepted.
fn warn_if_evicting((policy, limit): &(String, u64)) {
    if *limit > 0 && policy != "noeviction" {
        static WARNED: std::sync::Once = std::sync::Once::new();
        WARNED.call_once(|| {
            tracing::warn!(
                policy,
                limit,
                "Redis may evict keys (maxmemory-policy is not noeviction): an evicted \
                 single-use requestState nonce could be replayed; use noeviction, or a Redis \
                 of its own for this server's state"
            );
        });
    }
}

fn unix_ms(time: SystemTime) -> u64 {
    time.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
