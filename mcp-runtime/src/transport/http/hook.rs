//! What the endpoint hands a hook (`endpoint::HttpHook`) another era's
//! traffic with: the headers that tell the eras apart, and a POST with
//! what the pipeline already established.

use std::net::SocketAddr;

use super::slot::Slot;
use bytestring::ByteString;
use http::request::Parts;

/// The headers that tell the eras apart, read with the endpoint's other
/// headers (before authorization edits them).
#[derive(Clone, Copy, Debug, Default)]
#[allow(dead_code, reason = "used by the legacy adapter (feature `legacy`)")]
pub(crate) struct EraHeaders<'a> {
    /// `MCP-Protocol-Version`.
    pub(crate) version: Option<&'a str>,
    /// `Mcp-Session-Id`.
    pub(crate) session_id: Option<&'a str>,
}

/// A POST the hook claimed, with what the pipeline already established.
#[allow(dead_code, reason = "used by the legacy adapter (feature `legacy`)")]
pub(crate) struct Post {
    pub(crate) parts: Parts,
    pub(crate) body: ByteString,
    /// Whether the client accepts SSE.
    pub(crate) sse: bool,
    /// Its slot among the requests in flight.
    pub(crate) permit: Slot,
    pub(crate) peer: Option<SocketAddr>,
}
