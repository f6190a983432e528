//! Rate limiting of tool invocations (the spec's tools page makes this a
//! MUST for servers).

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Decides whether a caller may invoke a tool now.
///
/// The key is the authenticated principal when there is one, else the
/// client's IP address. Implement this to share limits across instances
/// (a shared store: `mcp-runtime-redis`'s limiter is one) or to apply your
/// own policy.
pub trait RateLimiter: Send + Sync + 'static {
    /// The verdict: decided at once ([`RateCheck::Now`], as a limiter in
    /// this process's memory decides), or after asking a shared store
    /// ([`RateCheck::Later`]). `Ok(())` proceeds; `Err(wait)` is how long
    /// until a retry may pass.
    fn check(&self, key: &str) -> RateCheck;
}

/// Limiters whose budget every instance shares (a shared backend's, see
/// [`SharedParts::rate_limits`](crate::plugin::SharedParts::rate_limits)):
/// the server's built-in budget (`HttpOptions::rate_limit`) is then kept
/// there instead of in each process.
pub trait SharedLimits: Send + Sync + fmt::Debug + 'static {
    /// A limiter of `burst` calls at once and `per_second` sustained, per
    /// client, for all instances together.
    fn rate_limiter(&self, per_second: f64, burst: u32) -> std::sync::Arc<dyn RateLimiter>;
}

/// A [`RateLimiter`]'s verdict.
pub enum RateCheck {
    /// Decided now.
    Now(Result<(), Duration>),
    /// Decided when the future resolves (a round trip to a shared store).
    /// The tool does not start before it has.
    Later(Pin<Box<dyn Future<Output = Result<(), Duration>> + Send>>),
}

impl RateCheck {
    /// The verdict, waiting for it if it is not decided yet.
    pub async fn verdict(self) -> Result<(), Duration> {
        match self {
            RateCheck::Now(verdict) => verdict,
            RateCheck::Later(pending) => pending.await,
        }
    }
}

impl From<Result<(), Duration>> for RateCheck {
    fn from(verdict: Result<(), Duration>) -> Self {
        RateCheck::Now(verdict)
    }
}

impl fmt::Debug for RateCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RateCheck::Now(verdict) => f.debug_tuple("Now").field(verdict).finish(),
            RateCheck::Later(_) => f.write_str("Later(..)"),
        }
    }
}

/// A token bucket per key: `burst` calls at once, refilled at `per_second`.
#[derive(Debug)]
pub struct TokenBucket {
    per_second: f64,
    burst: f64,
    buckets: Mutex<HashMap<String, Bucket>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    updated: Instant,
}

/// Above this many tracked keys, idle (full) buckets are forgotten.
const MAX_KEYS: usize = 10_000;

impl TokenBucket {
    /// A limiter allowing `burst` calls at once and `per_second` sustained.
    pub fn new(per_second: f64, burst: u32) -> Self {
        TokenBucket {
            per_second: per_second.max(f64::MIN_POSITIVE),
            burst: f64::from(burst.max(1)),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    fn check_at(&self, key: &str, now: Instant) -> Result<(), Duration> {
        let mut buckets = self
            .buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if buckets.len() >= MAX_KEYS && !buckets.contains_key(key) {
            let (per_second, burst) = (self.per_second, self.burst);
            buckets.retain(|_, b| refilled(*b, now, per_second, burst) < burst);
        }
        // Look up before inserting, so that known clients cost no allocation.
        if !buckets.contains_key(key) {
            let fresh = Bucket {
                tokens: self.burst,
                updated: now,
            };
            buckets.insert(key.to_owned(), fresh);
        }
        let Some(bucket) = buckets.get_mut(key) else {
            return Ok(());
        };
        bucket.tokens = refilled(*bucket, now, self.per_second, self.burst);
        bucket.updated = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64(
                (1.0 - bucket.tokens) / self.per_second,
            ))
        }
    }
}

fn refilled(bucket: Bucket, now: Instant, per_second: f64, burst: f64) -> f64 {
    let elapsed = now.saturating_duration_since(bucket.updated).as_secs_f64();
    (bucket.tokens + elapsed * per_second).min(burst)
}

impl TokenBucket {
    /// Takes one call from `key`'s bucket now: `Err(wait)` when it is
    /// empty.
    pub fn take(&self, key: &str) -> Result<(), Duration> {
        self.check_at(key, Instant::now())
    }
}

impl RateLimiter for TokenBucket {
    fn check(&self, key: &str) -> RateCheck {
        RateCheck::Now(self.take(key))
    }
}

#[cfg(feature = "http")]
/// The key a client's calls are counted under: its IP address as text,
/// formatted on the stack (no allocation on every tool call). One key for
/// both eras, so a client cannot double its budget by switching.
pub(crate) struct ClientKey {
    bytes: [u8; 46],
    len: usize,
}

#[cfg(feature = "http")]
impl ClientKey {
    pub(crate) fn new(ip: std::net::IpAddr) -> ClientKey {
        let mut text = ClientKey {
            bytes: [0; 46],
            len: 0,
        };
        // The longest IPv6 text is 45 bytes, so this cannot fail.
        let _ = std::fmt::Write::write_fmt(&mut text, format_args!("{ip}"));
        text
    }

    pub(crate) fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default()
    }
}

#[cfg(feature = "http")]
impl std::fmt::Write for ClientKey {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        self.bytes
            .get_mut(self.len..end)
            .ok_or(std::fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bursts_then_refills() {
        let limiter = TokenBucket::new(2.0, 3);
        let start = Instant::now();
        for _ in 0..3 {
            assert!(limiter.check_at("a", start).is_ok());
        }
        let wait = limiter.check_at("a", start).unwrap_err();
        assert_eq!(wait, Duration::from_millis(500));
        // Another key has its own bucket.
        assert!(limiter.check_at("b", start).is_ok());
        // Half a second later, one more call fits.
        let later = start + Duration::from_millis(500);
        assert!(limiter.check_at("a", later).is_ok());
        assert!(limiter.check_at("a", later).is_err());
    }
}
