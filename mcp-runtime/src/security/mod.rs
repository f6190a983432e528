//! Everything a security reviewer should read: DNS-rebinding defences
//! (`Host`/`Origin` allow-lists), rate limiting, the request's
//! [`Principal`], and the sealing of what clients carry for the server
//! (`requestState`, legacy session ids) under a [`KeyRing`]. Body-size
//! limits, timeouts and concurrency caps are applied in one place, the HTTP
//! request pipeline (`transport::http::pipeline`), from `HttpOptions`.

#[cfg(feature = "http")]
pub(crate) mod origin;
mod principal;
pub(crate) mod rate_limit;
pub(crate) mod seal;

pub use self::principal::Principal;
pub use self::rate_limit::{RateLimiter, TokenBucket};
pub use self::seal::{KeyError, KeyRing, STATE_KEY_ENV, STATE_VERIFY_KEYS_ENV};
