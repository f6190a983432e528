//! `server/discover` and the caching hints shared by cacheable results.

use serde::{Deserialize, Serialize};

use super::JsonObject;

/// Who may cache a cacheable result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Only the same authorization context may reuse the result.
    #[default]
    Private,
    /// Any client or shared intermediary may cache the result.
    Public,
}

/// Caching hints attached to a cacheable result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheHint {
    /// How long the client may consider the result fresh, in milliseconds.
    pub ttl_ms: u64,
    /// Who may cache it.
    pub scope: CacheScope,
}

impl CacheHint {
    /// A hint with the given freshness and scope.
    pub const fn new(ttl_ms: u64, scope: CacheScope) -> Self {
        CacheHint { ttl_ms, scope }
    }
}

/// The caching hints a server gives its results, by kind: given to
/// [`ServerBuilder::cache_hints`](crate::ServerBuilder::cache_hints).
/// Each is `ttlMs` 0, `private` until set.
///
/// ```
/// use mcp_runtime::{CacheHint, CacheHints, CacheScope};
///
/// let hints = CacheHints::new()
///     .lists(CacheHint::new(60_000, CacheScope::Public))
///     .reads(CacheHint::new(5_000, CacheScope::Private));
/// let server = mcp_runtime::ServerBuilder::new("notes", "1.0.0").cache_hints(hints);
/// # let _ = server;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[must_use]
pub struct CacheHints {
    pub(crate) list: CacheHint,
    pub(crate) discover: CacheHint,
    pub(crate) read: CacheHint,
}

impl CacheHints {
    /// Every hint `ttlMs` 0, `private`.
    pub fn new() -> Self {
        CacheHints::default()
    }

    /// The hint of list results (`tools/list`, `resources/list`, ...).
    pub fn lists(mut self, hint: CacheHint) -> Self {
        self.list = hint;
        self
    }

    /// The hint of `server/discover`.
    pub fn discover(mut self, hint: CacheHint) -> Self {
        self.discover = hint;
        self
    }

    /// The default hint of `resources/read` results.
    pub fn reads(mut self, hint: CacheHint) -> Self {
        self.read = hint;
        self
    }
}

/// `{"listChanged": bool}` capability objects.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListChangedCapability {
    /// Whether list-changed notifications are sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// What this server offers, as advertised by `server/discover`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ServerCapabilities {
    /// Present when the server offers tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListChangedCapability>,
    /// Present when the server offers resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<JsonObject>,
    /// Present when the server offers prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListChangedCapability>,
    /// Present when the server completes arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// Present when handlers may send `notifications/message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// Extensions, keyed by identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// Experimental capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
}
