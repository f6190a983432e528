//! Everything a security reviewer should read: DNS-rebinding defences
//! (`Host`/`Origin` allow-lists), rate limiting, the request's
//! [`Principal`], and the sealing of what clients carry for the server
//! (`requestState`, legacy session ids) under a [`KeyRing`], and the
//! per-client caps on connections and requests (`clients`). Body-size
//! limits, timeouts and concurrency caps are applied by the HTTP transport,
//! from `HttpOptions`: per connection in its accept loop
//! (`transport::http::server`), per request in its pipeline
//! (`transport::http::pipeline`).

#[cfg(feature = "http")]
pub(crate) mod clients;
#[cfg(feature = "http")]
pub(crate) mod origin;
mod principal;
pub(crate) mod rate_limit;
pub(crate) mod seal;

pub use self::principal::Principal;
pub(crate) use self::principal::is_scope_token;
pub(crate) use self::rate_limit::SharedLimits;
pub use self::rate_limit::{RateCheck, RateLimiter, TokenBucket};
pub use self::seal::{KeyError, KeyRing, STATE_KEY_ENV, STATE_VERIFY_KEYS_ENV};
