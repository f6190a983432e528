//! The single-use `requestState` guard, shared by every instance.

use std::time::SystemTime;

use super::Redis;
use crate::mrtr::{GuardFuture, GuardUnavailable, ReplayGuard, StateUse};

/// A [`ReplayGuard`] in Redis: each single-use state's nonce is recorded
/// with an atomic `SET NX`, expiring with the state, so a state replayed on
/// any instance is refused. When Redis cannot be reached the state is
/// refused with a retryable error: a replay is never accepted because the
/// guard could not look. States issued before this Redis started are
/// refused as used: after a restart without persistence it cannot know
/// whether they were, and the client starts its call again.
#[derive(Debug, Clone)]
pub struct RedisReplayGuard {
    redis: Redis,
}

impl RedisReplayGuard {
    /// A guard over `redis`.
    pub fn new(redis: &Redis) -> Self {
        RedisReplayGuard {
            redis: redis.clone(),
        }
    }
}

impl ReplayGuard for RedisReplayGuard {
    fn first_use<'a>(&'a self, state: StateUse<'a>, now: SystemTime) -> GuardFuture<'a> {
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
            let mut verdict: i64 = self
                .redis
                .script(&FIRST_USE, keys.clone(), args.clone())
                .await
                .map_err(unavailable)?;
            if verdict == NO_MEMORY {
                start_memory(&self.redis).await.map_err(unavailable)?;
                verdict = self
                    .redis
                    .script(&FIRST_USE, keys, args)
                    .await
                    .map_err(unavailable)?;
            }
            if verdict == FORGOTTEN {
                FORGOT.note(|suppressed| {
                    tracing::warn!(
                        suppressed,
                        "a single-use requestState was issued before this Redis started (it \
                         restarted, and what it recorded before may be lost): the state is \
                         refused, and the client starts the call again"
                    );
                });
            }
            Ok(verdict == 1)
        })
    }
}

/// [`FIRST_USE`]'s answer for a state issued before Redis's memory begins.
const FORGOTTEN: i64 = -1;
/// [`FIRST_USE`]'s answer when Redis has no memory key (yet, or any more).
const NO_MEMORY: i64 = -2;

static FORGOT: crate::diagnostics::Throttle = crate::diagnostics::Throttle::new();

/// Records a nonce once, unless the state was issued before Redis's memory
/// of this server's states begins. KEYS[1]: the memory key (when this
/// Redis started, in its own clock's ms); KEYS[2]: the nonce's key.
/// ARGV[1]: when the state was issued (ms); ARGV[2]: how long to keep the
/// nonce (ms). Answers 1 (first use), 0 (seen), -1 (issued before the
/// memory, or within 2 s of its start: the instances' clocks are not
/// Redis's) or -2 (no memory key).
static FIRST_USE: std::sync::LazyLock<::redis::Script> = std::sync::LazyLock::new(|| {
    ::redis::Script::new(
        r"
        local since = redis.call('GET', KEYS[1])
        if not since then
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

/// Records when this Redis started (from its uptime, rounded up) as the
/// beginning of its memory, unless one is recorded: a Redis that restarted
/// without persistence lost every nonce it had, and lost the memory key
/// with them, so states issued before it started are refused from then on.
async fn start_memory(redis: &super::Redis) -> Result<(), super::RedisUnavailable> {
    static START: std::sync::LazyLock<::redis::Script> = std::sync::LazyLock::new(|| {
        ::redis::Script::new(
            r"
            local t = redis.call('TIME')
            redis.call('SET', KEYS[1], (t[1] - ARGV[1] + 1) * 1000, 'NX')
            return 1
            ",
        )
    });
    let mut info = ::redis::cmd("INFO");
    info.arg("server");
    let info: String = redis.query(info).await?;
    let uptime = info
        .lines()
        .find_map(|line| line.strip_prefix("uptime_in_seconds:"))
        .and_then(|value| value.trim().parse::<u64>().ok())
        .ok_or_else(|| super::RedisUnavailable("INFO server has no uptime_in_seconds".into()))?;
    redis
        .script::<i64>(&START, vec![redis.memory_key()], vec![uptime.to_string()])
        .await
        .map(drop)
}

fn unix_ms(time: SystemTime) -> u64 {
    time.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
