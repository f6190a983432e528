//! `resources/list`, `resources/templates/list` and `resources/read` shapes.

use serde::{Deserialize, Serialize};

use super::JsonObject;
use super::content::{Annotations, ResourceContents};
use super::discover::{CacheHint, CacheScope};
use super::meta::Icon;

/// A resource template as listed by `resources/templates/list`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceTemplate {
    /// An RFC 6570 URI template.
    pub uri_template: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resources are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type of every matching resource, if they share one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    /// Audience, priority and modification time hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Template metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// What `resources/read` returns: the contents, and optionally this read's
/// own caching hints and `_meta`.
///
/// A resource declares its caching hints once (`#[resource(..., ttl_ms =
/// ..., cache = public)]`, or the server's
/// [`cache_hints`](crate::ServerBuilder::cache_hints)); a read that returns
/// a `ReadResourceResult` with [`with_cache_scope`](Self::with_cache_scope)
/// or [`with_ttl_ms`](Self::with_ttl_ms) overrides them for this result
/// only, field by field: a resource declared `public` whose read turned
/// out to hold the caller's own data answers `private`. Its `_meta` is the
/// result's `_meta` (the runtime's `serverInfo` key stays the runtime's).
///
/// Clients get the same type back, with the hints the server sent.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ReadResourceResult {
    /// One or more contents (several when a read returns, say, a directory).
    pub contents: Vec<ResourceContents>,
    /// How long the result may be considered fresh, in milliseconds; `None`
    /// keeps the resource's declared value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache the result; `None` keeps the resource's declared scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl ReadResourceResult {
    /// A result with the given contents.
    pub fn new(contents: impl IntoIterator<Item = ResourceContents>) -> Self {
        ReadResourceResult {
            contents: contents.into_iter().collect(),
            ..ReadResourceResult::default()
        }
    }

    /// Both caching hints of this read, overriding the declared ones.
    #[must_use]
    pub fn with_cache(self, hint: CacheHint) -> Self {
        self.with_ttl_ms(hint.ttl_ms).with_cache_scope(hint.scope)
    }

    /// This read's `ttlMs`, overriding the declared one.
    #[must_use]
    pub fn with_ttl_ms(mut self, ttl_ms: u64) -> Self {
        self.ttl_ms = Some(ttl_ms);
        self
    }

    /// This read's `cacheScope`, overriding the declared one: `private` for
    /// contents that depend on who asked.
    #[must_use]
    pub fn with_cache_scope(mut self, scope: CacheScope) -> Self {
        self.cache_scope = Some(scope);
        self
    }

    /// The result's `_meta`.
    #[must_use]
    pub fn with_meta(mut self, meta: JsonObject) -> Self {
        self.meta = Some(meta);
        self
    }

    /// The hints this result is sent with: its own where it has them,
    /// `declared` elsewhere.
    pub(crate) fn cache_or(&self, declared: CacheHint) -> CacheHint {
        CacheHint {
            ttl_ms: self.ttl_ms.unwrap_or(declared.ttl_ms),
            scope: self.cache_scope.unwrap_or(declared.scope),
        }
    }
}
