//! The legacy-era adapter: serves clients of the revisions that open with
//! an `initialize` handshake (2025-11-25, 2025-06-18, 2025-03-26) with the
//! same handlers, through the same stateless dispatcher (the guide's
//! chapter "Older clients").
//!
//! Its public part is what the instances of a server share of legacy HTTP
//! sessions, when a shared backend keeps them
//! ([`SharedParts::legacy_sessions`](crate::plugin::SharedParts::legacy_sessions)):
//! implement [`SessionShare`] to keep them in a store of your own.
//!
//! Inside, nothing in the core knows about this module: it implements the
//! hooks the transports offer (the stdio connection's and the HTTP
//! endpoint's), and `run.rs` plugs it in. Through them the transports hand
//! it the traffic that is legacy by the spec's era rules
//! (`basic/versioning.md`): on stdio, an `initialize` switches that
//! connection to the legacy era; on HTTP, the era follows the
//! `MCP-Protocol-Version` header, `initialize` and `Mcp-Session-Id`. The
//! adapter then
//!
//! - answers the lifecycle itself (`initialize`, `ping`, `logging/setLevel`,
//!   `resources/subscribe`/`unsubscribe`), keeping what the handshake
//!   negotiated for that connection or session only;
//! - turns every other request into a modern one, with `_meta` synthesized
//!   from the handshake, runs it through the dispatcher, and translates the
//!   answer back to the legacy shapes (`translate`);
//! - bridges multi round-trip requests: the asks of an `input_required`
//!   result become real server-to-client requests, whose answers resume
//!   the handler (`bridge`).

pub(crate) mod adapter;
pub(crate) mod bridge;
#[cfg(feature = "http")]
pub(crate) mod http;
pub(crate) mod notify;
pub(crate) mod session;
#[cfg(feature = "http")]
pub(crate) mod session_id;
#[cfg(feature = "http")]
pub(crate) mod shared;
pub(crate) mod stdio;
pub(crate) mod translate;

#[cfg(feature = "http")]
pub use self::session::Live;
#[cfg(feature = "http")]
pub use self::shared::{Forwarded, Receiver, SessionShare, Setting, ShareFuture, ShareUnavailable};

/// The legacy revisions served, newest first.
pub(crate) const LEGACY_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26"];

/// The version to use with a client that asked for `requested`: the same
/// one if it is served, else the newest legacy one (the client then
/// decides whether it can speak it, as the legacy lifecycle says).
pub(crate) fn negotiate(requested: &str) -> &'static str {
    LEGACY_VERSIONS
        .iter()
        .find(|v| **v == requested)
        .copied()
        .unwrap_or(LEGACY_VERSIONS[0])
}

/// Whether `version` is one of the legacy revisions served.
#[cfg(feature = "http")]
pub(crate) fn is_legacy_version(version: &str) -> bool {
    LEGACY_VERSIONS.contains(&version)
}

/// Whether a request's `params._meta` (its JSON text) is modern: it names
/// a protocol version. Legacy requests may carry `_meta` too (a
/// `progressToken`), so its mere presence decides nothing.
pub(crate) fn is_modern_meta(meta: Option<&str>) -> bool {
    #[derive(serde::Deserialize)]
    struct Meta {
        #[serde(rename = "io.modelcontextprotocol/protocolVersion", default)]
        version: Option<serde::de::IgnoredAny>,
    }
    meta.and_then(|meta| serde_json::from_str::<Meta>(meta).ok())
        .is_some_and(|meta| meta.version.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_protocol_version_makes_meta_modern() {
        assert!(is_modern_meta(Some(
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#
        )));
        assert!(!is_modern_meta(Some(r#"{"progressToken":1}"#)));
        assert!(!is_modern_meta(Some("[]")));
        assert!(!is_modern_meta(None));
    }

    #[test]
    fn negotiation_keeps_served_versions_and_offers_the_newest_otherwise() {
        assert_eq!(negotiate("2025-06-18"), "2025-06-18");
        assert_eq!(negotiate("2025-03-26"), "2025-03-26");
        assert_eq!(negotiate("2024-11-05"), "2025-11-25");
        assert_eq!(negotiate("2026-07-28"), "2025-11-25");
        #[cfg(feature = "http")]
        assert!(!is_legacy_version("2026-07-28"));
    }
}
