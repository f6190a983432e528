//! The per-client rate limit, one budget for every instance.

use std::sync::Arc;
use std::time::Duration;

use super::Redis;
use mcp_runtime::diagnostics::Throttle;
use mcp_runtime::security::{RateCheck, RateLimiter, TokenBucket};

/// GCRA (the generic cell rate algorithm): one key per client holds the
/// theoretical arrival time of its next call, in microseconds of Redis's
/// own clock (so that instances whose clocks differ agree). ARGV: the
/// emission interval and the burst tolerance, in microseconds. Returns 0
/// to admit, else the microseconds to wait.
const GCRA: &str = r"
local now = redis.call('TIME')
now = tonumber(now[1]) * 1000000 + tonumber(now[2])
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
if tat - now > tolerance then
  return math.ceil(tat - now - tolerance)
end
tat = tat + interval
redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000) + 1)
return 0
";

/// A [`RateLimiter`] whose budget (`per_second` sustained, `burst` at once,
/// as [`TokenBucket`]'s) is shared by every instance over one Redis: an
/// atomic script per call, so N instances allow the budget, not N times it.
///
/// When Redis cannot be reached, each instance falls back to its own
/// bucket of the same budget (logged once a second): calls keep working,
/// limited per instance, until Redis is back.
#[derive(Debug, Clone)]
pub struct RedisRateLimiter {
    redis: Redis,
    interval_us: u64,
    tolerance_us: u64,
    fallback: Arc<TokenBucket>,
}

impl RedisRateLimiter {
    /// `burst` calls at once and `per_second` sustained, per client, across
    /// every instance sharing `redis`.
    pub fn new(redis: &Redis, per_second: f64, burst: u32) -> Self {
        let per_second = per_second.max(f64::MIN_POSITIVE);
        // At least a microsecond between calls, at most a day.
        let interval_us = (1e6 / per_second).clamp(1.0, 86_400e6) as u64;
        RedisRateLimiter {
            redis: redis.clone(),
            interval_us,
            tolerance_us: interval_us.saturating_mul(u64::from(burst.max(1) - 1)),
            fallback: Arc::new(TokenBucket::new(per_second, burst)),
        }
    }
}

static FALLBACK: Throttle = Throttle::new();

impl RateLimiter for RedisRateLimiter {
    fn check(&self, key: &str) -> RateCheck {
        static SCRIPT: std::sync::OnceLock<::redis::Script> = std::sync::OnceLock::new();
        let script = SCRIPT.get_or_init(|| ::redis::Script::new(GCRA));
        let limiter = self.clone();
        let key = key.to_owned();
        RateCheck::Later(Box::pin(async move {
            let keys = vec![limiter.redis.key(&format!("rate:{key}"))];
            let args = vec![
                limiter.interval_us.to_string(),
                limiter.tolerance_us.to_string(),
            ];
            match limiter.redis.script::<u64>(script, keys, args).await {
                Ok(0) => Ok(()),
                Ok(wait_us) => Err(Duration::from_micros(wait_us)),
                Err(error) => {
                    FALLBACK.note(|suppressed| {
                        tracing::warn!(%error, suppressed, "the shared rate limit is unavailable: limiting per instance until Redis is back");
                    });
                    limiter.fallback.take(&key)
                }
            }
        }))
    }
}

impl mcp_runtime::security::SharedLimits for Redis {
    fn rate_limiter(&self, per_second: f64, burst: u32) -> Arc<dyn RateLimiter> {
        Arc::new(RedisRateLimiter::new(self, per_second, burst))
    }
}
