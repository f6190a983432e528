//! Everything a security reviewer should read: DNS-rebinding defences
//! (`Host`/`Origin` allow-lists) and rate limiting. Body-size limits,
//! timeouts and concurrency caps are applied in one place, the HTTP
//! request pipeline (`transport::http::pipeline`), from [`HttpOptions`]
//! (crate::HttpOptions).

pub(crate) mod origin;
pub(crate) mod rate_limit;

pub use self::rate_limit::{RateLimiter, TokenBucket};
