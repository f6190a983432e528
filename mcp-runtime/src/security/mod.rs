//! Everything a security reviewer should read: DNS-rebinding defences
//! (`Host`/`Origin` allow-lists), rate limiting, the request's
//! [`Principal`], and the sealing of what clients carry for the server
//! (`requestState`, legacy session ids) under a [`KeyRing`], and the
//! per-client caps on connections and requests (`clients`), and the fair
//! share of the Prometheus endpoint's connection slots (`slots`). Body-size
//! limits, timeouts and concurrency caps are applied by the HTTP transport,
//! from `HttpOptions`: per connection in its accept loop
//! (`transport::http::server`), per request in its pipeline
//! (`transport::http::pipeline`).
//!
//! ```rust,standalone_crate
//! use mcp_runtime::security::{KeyRing, Principal, TokenBucket};
//! use mcp_runtime::{ServerBuilder, tool};
//!
//! /// Reads a note: its owner's only (an object-level check).
//! #[tool(annotations(read_only))]
//! fn read_note(owner: String, #[ctx] caller: Option<&Principal>) -> Result<String, String> {
//!     match caller.and_then(Principal::subject) {
//!         Some(subject) if subject == owner => Ok(format!("{owner}'s note")),
//!         _ => Err("not your note".into()),
//!     }
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // The keys that seal `requestState`: `MCP_STATE_KEY` (the same on every
//! // instance), else a random key for this process only.
//! let keys = KeyRing::from_env().transpose()?.unwrap_or_else(KeyRing::random);
//! let server = ServerBuilder::new("notes", "1.0.0")
//!     .request_state(mcp_runtime::RequestStateOptions::new().keys(keys))
//!     .build()?;
//!
//! // The caller, as authentication establishes it.
//! let alice = Principal::new("alice").with_subject("alice").with_scopes(["notes:read"]);
//! assert!(alice.has_scope("notes:read") && !alice.has_scope("notes:write"));
//!
//! // A budget per client: two calls at once, then one a second.
//! let limiter = TokenBucket::new(1.0, 2);
//! assert!(limiter.take("203.0.113.7").is_ok() && limiter.take("203.0.113.7").is_ok());
//! assert!(limiter.take("203.0.113.7").is_err());
//! assert!(limiter.take("198.51.100.1").is_ok());
//! # let _ = server;
//! # Ok(())
//! # }
//! ```

#[cfg(feature = "http")]
pub(crate) mod clients;
pub(crate) mod fair;
#[cfg(feature = "http")]
pub(crate) mod origin;
mod principal;
pub(crate) mod rate_limit;
pub(crate) mod seal;

use std::net::{IpAddr, Ipv6Addr};

#[cfg(feature = "http")]
pub use self::origin::{HostRefusal, OriginPolicy};
pub use self::principal::Principal;
pub(crate) use self::principal::is_scope_token;
pub use self::rate_limit::{RateCheck, RateLimiter, SharedLimits, TokenBucket};
pub use self::seal::{KeyError, KeyRing, STATE_KEY_ENV, STATE_VERIFY_KEYS_ENV};

/// The key a client counts under (fair admission, task quotas): its
/// address, or its /64 for IPv6 (one host usually holds a whole /64), an
/// IPv4-mapped IPv6 address as the IPv4 address it is.
pub fn client_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(Ipv6Addr::from(prefix))
            }
        },
    }
}
