//! Everything a security reviewer should read: DNS-rebinding defences
//! (`Host`/`Origin` allow-lists), rate limiting and the request's
//! [`Principal`]. Body-size limits,
//! timeouts and concurrency caps are applied in one place, the HTTP
//! request pipeline (`transport::http::pipeline`), from [`HttpOptions`](crate::HttpOptions)
//! (crate::HttpOptions).

#[cfg(feature = "http")]
pub(crate) mod origin;
mod principal;
pub(crate) mod rate_limit;
pub(crate) mod seal;

pub use self::principal::Principal;
pub use self::rate_limit::{RateLimiter, TokenBucket};
pub use self::seal::{KeyError, KeyRing, STATE_KEY_ENV, STATE_VERIFY_KEYS_ENV};
