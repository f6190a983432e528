//! MCP Apps (`io.modelcontextprotocol/ui`): tools that come with an
//! interactive HTML view, which hosts render in a sandboxed iframe next to
//! the conversation.
//!
//! Declared with the macros alone:
//!
//! ```standalone_crate
//! use mcp_runtime::apps::UiCapability;
//! use mcp_runtime::{Structured, resource, tool};
//!
//! /// The view: HTML embedded at compile time (rebuilt when the file
//! /// changes), served as `text/html;profile=mcp-app` with its metadata.
//! #[resource("ui://sales/view.html", app(prefers_border = true))]
//! fn sales_view() -> &'static str {
//!     "<!doctype html><title>Sales</title>" // include_str!("sales.html")
//! }
//!
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! struct Sales {
//!     total: u64,
//! }
//!
//! /// Sales, shown in the view by hosts with Apps; text for the others.
//! #[tool(ui = "ui://sales/view.html")]
//! fn sales(#[ctx] ui: UiCapability<'_>) -> Structured<Sales> {
//!     let sales = Sales { total: 42 };
//!     let text = match ui.supports_apps() {
//!         true => "Shown in the sales view.".to_owned(),
//!         false => format!("Total sales: {}", sales.total),
//!     };
//!     Structured::new(sales).with_text(text)
//! }
//!
//! /// Called by the view only: hosts hide it from the model.
//! #[tool(visibility = ["app"])]
//! fn refresh_sales() -> Structured<Sales> {
//!     Structured::new(Sales { total: 43 })
//! }
//! # fn main() { let _ = mcp_runtime::server!().build().unwrap(); }
//! ```
//!
//! What the macros emit is what the official TypeScript helpers
//! (`registerAppTool`, `registerAppResource`) emit:
//!
//! - `#[tool(ui = "ui://...")]` puts `_meta.ui.resourceUri` on the tool,
//!   and the older hosts' `_meta["ui/resourceUri"]`; `visibility = [...]`
//!   puts `_meta.ui.visibility` (`"model"`, `"app"`; both by default).
//! - `#[resource("ui://...", app(...))]` serves the view with the MIME type
//!   [`RESOURCE_MIME_TYPE`] and its `_meta.ui` (CSP domains, permissions,
//!   `prefersBorder`, `domain`) both in `resources/list` and on the
//!   contents each read returns (hosts prefer the latter).
//! - Either brings this module's [`extension`] along: `server/discover`
//!   advertises `io.modelcontextprotocol/ui`, and at startup every tool's
//!   view must be an app resource of this server (an unknown or non-app
//!   target is an error naming the tool and, if there is one, the
//!   resource).
//!
//! A handler reads what the host declared with a `#[ctx] ui:
//! UiCapability<'_>` parameter (or [`ui_capability`]), so that it can
//! answer hosts without Apps with text.
//!
//! Everything here is built on public extension points
//! ([`Extension::check`], [`LINKED_EXTENSIONS`](crate::extension::LINKED_EXTENSIONS),
//! [`FromContext`]); the dispatcher knows nothing of Apps.

use serde_json::{Map, Value};

use crate::context::{Context, FromContext};
use crate::extension::{Catalog, CatalogTool, Extension};
use crate::protocol::{ClientCapabilities, ReadResourceResult, ResourceContents};
use crate::resource::ReadError;

/// The extension's identifier.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an app's HTML view.
pub const RESOURCE_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The `_meta` key older hosts read a tool's view from (the official
/// helpers write it beside `_meta.ui.resourceUri`).
pub const RESOURCE_URI_META_KEY: &str = "ui/resourceUri";

/// The extension, advertised as `"io.modelcontextprotocol/ui": {}`, with
/// its startup check: every tool's `_meta.ui.resourceUri` (or
/// `_meta["ui/resourceUri"]`) must name a resource of this server whose
/// MIME type is [`RESOURCE_MIME_TYPE`].
///
/// `#[tool(ui = ...)]`, `#[tool(visibility = ...)]` and
/// `#[resource(..., app(...))]` add it by themselves; add it with
/// [`ServerBuilder::with(extension)`](crate::ServerBuilder::with) only to
/// advertise Apps from a server that declares its views otherwise.
pub fn extension() -> Extension {
    Extension::new(EXTENSION_ID).check(check_views)
}

/// Every tool that links to a view links to an app resource. Every broken
/// link is reported, one a line.
fn check_views(catalog: &Catalog<'_>) -> Result<(), String> {
    let problems: Vec<String> = catalog
        .tools()
        .filter_map(|tool| Some((view_of(&tool)?, tool)))
        .filter_map(|(uri, tool)| broken_link(catalog, &tool, &uri))
        .collect();
    match problems.is_empty() {
        true => Ok(()),
        false => Err(problems.join("\n")),
    }
}

/// What is wrong with `tool`'s link to `uri`, if anything.
fn broken_link(catalog: &Catalog<'_>, tool: &CatalogTool, uri: &str) -> Option<String> {
    let (name, at) = (tool.name(), tool.location());
    let Some(resource) = catalog.resource_for(uri) else {
        return Some(format!(
            "tool `{name}` (at {at}) links to the view `{uri}`, which no resource of this server serves; \
             declare it with `#[resource(\"{uri}\", app)]`"
        ));
    };
    if resource.mime_type().is_some_and(is_app_mime_type) {
        return None;
    }
    let mime = resource
        .mime_type()
        .map_or_else(|| "not declared".to_owned(), |mime| format!("`{mime}`"));
    Some(format!(
        "tool `{name}` (at {at}) links to the view `{uri}`, but the resource `{}` (at {}) serving it is not an app view: \
         its MIME type is {mime}, not `{RESOURCE_MIME_TYPE}`; declare it with `app`: `#[resource(\"{}\", app)]`",
        resource.name(),
        resource.location(),
        resource.uri()
    ))
}

/// The view a tool links to: `_meta.ui.resourceUri`, else the older key.
fn view_of(tool: &CatalogTool) -> Option<String> {
    let meta = tool.meta()?;
    let current = meta
        .get("ui")
        .and_then(|ui| ui.get("resourceUri"))
        .and_then(Value::as_str);
    let older = meta.get(RESOURCE_URI_META_KEY).and_then(Value::as_str);
    current.or(older).map(str::to_owned)
}

/// Whether `mime` is the app MIME type: `text/html` with
/// `profile=mcp-app`, compared as MIME types (case and spaces aside).
pub fn is_app_mime_type(mime: &str) -> bool {
    let Ok(parsed) = mime.parse::<mime::Mime>() else {
        return false;
    };
    parsed.essence_str() == "text/html"
        && parsed
            .get_param("profile")
            .is_some_and(|profile| profile.as_str() == "mcp-app")
}

/// What the client declared of MCP Apps on this request: its
/// `capabilities.extensions["io.modelcontextprotocol/ui"]`. Take it as a
/// `#[ctx]` parameter.
#[derive(Clone, Copy, Debug)]
pub struct UiCapability<'a> {
    settings: Option<&'a Map<String, Value>>,
}

impl<'a> UiCapability<'a> {
    /// Whether the client declared the extension at all.
    pub fn is_declared(&self) -> bool {
        self.settings.is_some()
    }

    /// The MIME types of views the client renders (`mimeTypes`).
    pub fn mime_types(&self) -> impl Iterator<Item = &'a str> + 'a {
        self.settings
            .and_then(|settings| settings.get("mimeTypes"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
    }

    /// Whether the client renders app views: it declared the extension
    /// with [`RESOURCE_MIME_TYPE`] among its `mimeTypes`. Tools linked to a
    /// view should answer other clients with text that stands on its own.
    pub fn supports_apps(&self) -> bool {
        self.mime_types().any(is_app_mime_type)
    }
}

/// What `capabilities` declares of MCP Apps (the official helpers'
/// `getUiCapability`).
pub fn ui_capability(capabilities: &ClientCapabilities) -> UiCapability<'_> {
    let settings = capabilities
        .extensions
        .as_ref()
        .and_then(|extensions| extensions.get(EXTENSION_ID))
        .and_then(Value::as_object);
    UiCapability { settings }
}

impl<'a> FromContext<'a> for UiCapability<'a> {
    fn from_context(ctx: &'a Context) -> Self {
        ui_capability(ctx.client_capabilities())
    }
}

/// Called by `#[resource(..., app(...))]`'s expansion: each content item
/// of the URI read carries the view's `_meta.ui` (`ui`, a JSON object the
/// macro wrote), unless the handler set one itself.
#[doc(hidden)]
pub fn with_view_meta(
    result: Result<ReadResourceResult, ReadError>,
    uri: &str,
    ui: &'static str,
) -> Result<ReadResourceResult, ReadError> {
    let mut result = result?;
    for item in &mut result.contents {
        let (item_uri, meta) = match item {
            ResourceContents::Text(text) => (&text.uri, &mut text.meta),
            ResourceContents::Blob(blob) => (&blob.uri, &mut blob.meta),
        };
        if item_uri != uri {
            continue;
        }
        let meta = meta.get_or_insert_with(Map::new);
        if !meta.contains_key("ui") {
            let ui = serde_json::from_str(ui).unwrap_or_else(|_| Value::Object(Map::new()));
            meta.insert("ui".to_owned(), ui);
        }
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_app_mime_type_is_compared_as_a_mime_type() {
        assert!(is_app_mime_type("text/html;profile=mcp-app"));
        assert!(is_app_mime_type("TEXT/HTML; profile=mcp-app"));
        assert!(is_app_mime_type(
            "text/html; charset=utf-8; profile=mcp-app"
        ));
        assert!(!is_app_mime_type("text/html"));
        assert!(!is_app_mime_type("text/html;profile=other"));
        assert!(!is_app_mime_type("text/plain;profile=mcp-app"));
        assert!(!is_app_mime_type("not a mime type"));
    }

    #[test]
    fn the_capability_is_read_from_the_extensions() {
        let declared: ClientCapabilities = serde_json::from_value(serde_json::json!({
            "extensions": {EXTENSION_ID: {"mimeTypes": ["text/html;profile=mcp-app"]}}
        }))
        .unwrap();
        let ui = ui_capability(&declared);
        assert!(ui.is_declared() && ui.supports_apps());
        assert_eq!(ui.mime_types().collect::<Vec<_>>(), [RESOURCE_MIME_TYPE]);

        let other: ClientCapabilities = serde_json::from_value(serde_json::json!({
            "extensions": {EXTENSION_ID: {"mimeTypes": ["text/uri-list"]}}
        }))
        .unwrap();
        assert!(ui_capability(&other).is_declared());
        assert!(!ui_capability(&other).supports_apps());

        let none = ClientCapabilities::default();
        assert!(!ui_capability(&none).is_declared());
        assert!(!ui_capability(&none).supports_apps());
    }
}
