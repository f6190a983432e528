//! Registered resources and resource templates.

use super::common::{Location, StaticAnnotations, StaticIcon, icons, parse_static_meta};
use crate::complete::ArgumentCompleter;
use crate::protocol::CacheHint;
use crate::protocol::{Resource, ResourceTemplate};
use crate::resource::ResourceReadFn;
use crate::uri_template::TemplatePart;

/// One `#[resource]` function, as the macro registers it.
///
/// Built only by generated code; not a stable API.
#[derive(Debug)]
pub struct ResourceEntry {
    /// The URI, or the URI template text.
    pub uri: &'static str,
    /// The parsed template; `None` for a static resource.
    pub template: Option<&'static [TemplatePart]>,
    /// `name = "..."`, defaulting to the function name.
    pub name: &'static str,
    /// `title = "..."`.
    pub title: Option<&'static str>,
    /// From doc comments or `description = "..."`.
    pub description: Option<&'static str>,
    /// `mime_type = "..."` (checked at compile time).
    pub mime_type: Option<&'static str>,
    /// `size = ...` in bytes, when known up front.
    pub size: Option<u64>,
    /// `annotations(...)`.
    pub annotations: StaticAnnotations,
    /// `icon(...)` entries.
    pub icons: &'static [StaticIcon],
    /// `meta = "{...}"`.
    pub meta: Option<&'static str>,
    /// `ttl_ms = ..., cache = public|private` for reads of this resource.
    pub cache: Option<CacheHint>,
    /// Binds variables and starts the read.
    pub read: ResourceReadFn,
    /// `complete(variable = function)` entries.
    pub completers: &'static [ArgumentCompleter],
    /// Asks declared on parameters (`#[elicit]`, `#[sample]`, ...).
    pub asks: &'static [crate::mrtr::declared::DeclaredAsk],
    /// Whether a context parameter lets the handler send log messages.
    pub can_log: bool,
    /// `scopes = [...]`: OAuth scopes a caller needs (checked at compile
    /// time against RFC 6749 scope-token syntax).
    pub scopes: &'static [&'static str],
    /// `group = "..."`: the group a server selects it by
    /// ([`Items::group`](crate::Items::group)).
    pub group: Option<&'static str>,
    /// What its `#[ctx]` parameters need (one list per parameter):
    /// states, checked when the server is built, and request extensions,
    /// checked before each call.
    pub requires: &'static [&'static [crate::state::Requirement]],
    /// `layer = ...`: the item's own layer, inside the server's
    /// ([`middleware`](crate::middleware)).
    pub layer: Option<fn() -> crate::middleware::ItemLayer>,
    /// `timeout_ms = ...`: how long one invocation may run; past it the
    /// handler is dropped and the request answered with `-31002`.
    pub timeout_ms: Option<u64>,
    /// Definition site.
    pub location: Location,
}

impl ResourceEntry {
    pub(crate) fn to_resource(&self) -> Resource {
        Resource {
            uri: self.uri.to_owned(),
            name: self.name.to_owned(),
            title: self.title.map(str::to_owned),
            description: self.description.map(str::to_owned),
            mime_type: self.mime_type.map(str::to_owned),
            size: self.size,
            icons: icons(self.icons),
            annotations: self.annotations.to_annotations(),
            meta: self.meta.map(parse_static_meta),
        }
    }

    pub(crate) fn to_template(&self) -> ResourceTemplate {
        ResourceTemplate {
            uri_template: self.uri.to_owned(),
            name: self.name.to_owned(),
            title: self.title.map(str::to_owned),
            description: self.description.map(str::to_owned),
            mime_type: self.mime_type.map(str::to_owned),
            icons: icons(self.icons),
            annotations: self.annotations.to_annotations(),
            meta: self.meta.map(parse_static_meta),
        }
    }
}
