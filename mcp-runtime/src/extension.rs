//! MCP extensions: what a server adds beyond the core protocol, negotiated
//! under `capabilities.extensions` (the spec's `extensions/overview`).
//!
//! An [`Extension`] is advertised in `server/discover` under its identifier
//! with its settings, and serves its own methods ([`ExtensionMethod`]):
//! names with its vendor prefix (`com.example/ping`) or the extension's own
//! names (`tasks/get`). Its handlers get the same [`Context`] as a tool
//! (progress, logging, cancellation, the caller), its methods obey the same
//! HTTP header rules and authorization scopes, and they may answer with a
//! `resultType` of their own. A method, or a tool declared with
//! `#[tool(requires_extension = "...")]`, can require that the client has
//! negotiated the extension: a client that has not gets `-32021` naming it.
//!
//! ```
//! use mcp_runtime::extension::{Extension, ExtensionMethod, MethodResult};
//! use serde_json::json;
//!
//! #[derive(serde::Deserialize)]
//! struct Ping {
//!     message: String,
//! }
//!
//! let ping = Extension::new("com.example/ping")
//!     .settings(json!({"maxLength": 64}))
//!     .method(ExtensionMethod::new(
//!         "com.example/ping",
//!         |ping: Ping, _ctx: mcp_runtime::Context| async move {
//!             Ok(MethodResult::of_type("pong", json!({"echo": ping.message})))
//!         },
//!     ));
//! let server = mcp_runtime::server!().with(ping).build();
//! # let _ = server;
//! ```
//!
//! Two more points let an extension take part in what the server is built
//! from: [`Extension::check`] runs at startup over the server's [`Catalog`]
//! (its tools and resources, with their `_meta`), so that what handlers
//! declare for the extension can be checked before anything is served; and
//! [`LINKED_EXTENSIONS`] lets code that uses an extension (a macro's
//! expansion, say) bring it along, so that a server offers it without being
//! told twice. MCP Apps ([`crate::apps`]) is built on these alone.

pub(crate) use crate::protocol::method_result::Members;
pub use crate::protocol::method_result::MethodResult;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::context::Context;
use crate::protocol::{ErrorObject, JsonObject};
use crate::registry::{Registry, ResourceEntry, ToolEntry};
use crate::uri_template;

/// The future an extension method's handler returns, boxed.
pub(crate) type MethodFuture = Pin<Box<dyn Future<Output = Result<MethodResult, ErrorObject>>>>;

/// A method handler, type-erased: the request's `params` (without `_meta`)
/// and its context in, the result out.
pub(crate) type MethodFn = dyn Fn(Map<String, Value>, Context) -> MethodFuture + Send + Sync;

/// A startup check over the server's catalog (see [`Extension::check`]).
pub(crate) type CheckFn = dyn Fn(&Catalog<'_>) -> Result<(), String> + Send + Sync;

/// Extensions that linked code brings along: each is added when the server
/// is built, unless the builder was given one with the same identifier
/// (which then wins). Code generated for a handler that uses an extension
/// registers it here, so that writing the handler is the opt-in:
///
/// ```
/// use mcp_runtime::extension::{Extension, LINKED_EXTENSIONS};
///
/// fn my_extension() -> Extension {
///     Extension::new("com.example/ping")
/// }
///
/// #[linkme::distributed_slice(LINKED_EXTENSIONS)]
/// #[linkme(crate = mcp_runtime::__private::linkme)]
/// static PING: fn() -> Extension = my_extension;
/// ```
#[linkme::distributed_slice]
pub static LINKED_EXTENSIONS: [fn() -> Extension];

/// An extension a server offers. See the [module docs](self).
#[derive(Clone)]
#[must_use]
pub struct Extension {
    pub(crate) id: String,
    pub(crate) settings: Value,
    pub(crate) methods: Vec<ExtensionMethod>,
    pub(crate) checks: Vec<Arc<CheckFn>>,
}

impl fmt::Debug for Extension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Extension")
            .field("id", &self.id)
            .field("settings", &self.settings)
            .field("methods", &self.methods)
            .field("checks", &self.checks.len())
            .finish()
    }
}

impl Extension {
    /// The extension identified as `id`: `{vendor-prefix}/{name}`, such as
    /// `com.example/ping` or `io.modelcontextprotocol/tasks` (checked when
    /// the server is built).
    pub fn new(id: impl Into<String>) -> Self {
        Extension {
            id: id.into(),
            settings: Value::Object(Map::new()),
            methods: Vec::new(),
            checks: Vec::new(),
        }
    }

    /// The settings object advertised under `capabilities.extensions.<id>`
    /// (default `{}`). Must be a JSON object.
    pub fn settings(mut self, settings: Value) -> Self {
        self.settings = settings;
        self
    }

    /// Serves `method` as part of this extension.
    pub fn method(mut self, method: ExtensionMethod) -> Self {
        self.methods.push(method);
        self
    }

    /// Runs `check` when the server is built, over its [`Catalog`]: an
    /// `Err` stops the build with a [`BuildError::Extension`] naming the
    /// extension and the problem (say what to fix, and where).
    ///
    /// [`BuildError::Extension`]: crate::BuildError::Extension
    pub fn check(
        mut self,
        check: impl Fn(&Catalog<'_>) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.checks.push(Arc::new(check));
        self
    }

    /// The identifier.
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// The tools and resources a server is built from, as an extension's
/// [check](Extension::check) sees them.
#[derive(Clone, Copy, Debug)]
pub struct Catalog<'a> {
    registry: &'a Registry,
}

impl<'a> Catalog<'a> {
    pub(crate) fn new(registry: &'a Registry) -> Self {
        Catalog { registry }
    }

    /// Every tool, sorted by name.
    pub fn tools(&self) -> impl Iterator<Item = CatalogTool> + 'a {
        self.registry
            .tools()
            .iter()
            .filter_map(|tool| tool.entry())
            .map(|entry| CatalogTool { entry })
    }

    /// Every static resource (sorted by URI), then every template.
    pub fn resources(&self) -> impl Iterator<Item = CatalogResource> + 'a {
        let templates = self.registry.templates_by_text().iter();
        self.registry
            .resources()
            .iter()
            .chain(templates)
            .map(|&entry| CatalogResource { entry })
    }

    /// What a `resources/read` of `uri` would read: the static resource at
    /// that URI, or else the most specific template matching it.
    pub fn resource_for(&self, uri: &str) -> Option<CatalogResource> {
        let entry = self.registry.resource(uri).or_else(|| {
            let mut templates = self.registry.templates().iter();
            templates
                .find(|(_, parts)| uri_template::match_uri(parts, uri).is_some())
                .map(|(entry, _)| *entry)
        })?;
        Some(CatalogResource { entry })
    }
}

/// One tool in a [`Catalog`].
#[derive(Clone, Copy, Debug)]
pub struct CatalogTool {
    entry: &'static ToolEntry,
}

impl CatalogTool {
    /// Its name.
    pub fn name(&self) -> &'static str {
        self.entry.name
    }

    /// Its `_meta`, as `tools/list` shows it.
    pub fn meta(&self) -> Option<JsonObject> {
        self.entry.meta.map(parse_meta)
    }

    /// Where it is defined (`file:line`).
    pub fn location(&self) -> String {
        self.entry.location.to_string()
    }
}

/// One resource or resource template in a [`Catalog`].
#[derive(Clone, Copy, Debug)]
pub struct CatalogResource {
    entry: &'static ResourceEntry,
}

impl CatalogResource {
    /// Its URI, or its URI template.
    pub fn uri(&self) -> &'static str {
        self.entry.uri
    }

    /// Its name.
    pub fn name(&self) -> &'static str {
        self.entry.name
    }

    /// Whether it is a template.
    pub fn is_template(&self) -> bool {
        self.entry.template.is_some()
    }

    /// Its declared MIME type.
    pub fn mime_type(&self) -> Option<&'static str> {
        self.entry.mime_type
    }

    /// Its `_meta`, as `resources/list` shows it.
    pub fn meta(&self) -> Option<JsonObject> {
        self.entry.meta.map(parse_meta)
    }

    /// Where it is defined (`file:line`).
    pub fn location(&self) -> String {
        self.entry.location.to_string()
    }
}

/// `_meta` the macros checked at compile time.
fn parse_meta(json: &'static str) -> JsonObject {
    serde_json::from_str(json).unwrap_or_default()
}

/// One method an [`Extension`] serves.
#[derive(Clone)]
#[must_use]
pub struct ExtensionMethod {
    pub(crate) name: String,
    pub(crate) handler: Arc<MethodFn>,
    pub(crate) needs_negotiation: bool,
    pub(crate) scopes: Vec<&'static str>,
    /// The param that HTTP's `Mcp-Name` header mirrors, if any.
    pub(crate) named_by: Option<&'static str>,
}

impl fmt::Debug for ExtensionMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExtensionMethod")
            .field("name", &self.name)
            .field("needs_negotiation", &self.needs_negotiation)
            .field("scopes", &self.scopes)
            .field("named_by", &self.named_by)
            .finish_non_exhaustive()
    }
}

impl ExtensionMethod {
    /// The method `name`, answered by `handler` with the request's params
    /// (read into `P`; `_meta` is left out, and a mismatch is `-32602`
    /// naming the field) and its [`Context`].
    ///
    /// Only clients that negotiated the extension may call it; see
    /// [`open_to_all_clients`](Self::open_to_all_clients).
    pub fn new<P, F, Fut>(name: impl Into<String>, handler: F) -> Self
    where
        P: DeserializeOwned + 'static,
        F: Fn(P, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<MethodResult, ErrorObject>> + 'static,
    {
        let handler = Arc::new(handler);
        let erased = move |params: Map<String, Value>, context: Context| -> MethodFuture {
            match read_params::<P>(params) {
                Ok(params) => Box::pin(handler(params, context)),
                Err(error) => Box::pin(std::future::ready(Err(error))),
            }
        };
        ExtensionMethod {
            name: name.into(),
            handler: Arc::new(erased),
            needs_negotiation: true,
            scopes: Vec::new(),
            named_by: None,
        }
    }

    /// Names the string param that HTTP's `Mcp-Name` header must carry
    /// (as `tasks/get` does with `taskId`): over Streamable HTTP, a request
    /// whose body has the param and whose header is missing or differs is
    /// refused with `-32020` (HTTP 400), like a `tools/call` whose header
    /// does not name its tool.
    pub fn named_by(mut self, param: &'static str) -> Self {
        self.named_by = Some(param);
        self
    }

    /// Lets clients that did not negotiate the extension call this method
    /// too (by default they get `-32021` naming it).
    pub fn open_to_all_clients(mut self) -> Self {
        self.needs_negotiation = false;
        self
    }

    /// The OAuth scopes a caller needs (HTTP with authorization), as
    /// `#[tool(scopes = [...])]` declares them for a tool.
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = &'static str>) -> Self {
        self.scopes.extend(scopes);
        self
    }

    /// The method's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Reads a method's params into `P`, naming the first field that does not
/// fit.
fn read_params<P: DeserializeOwned>(params: Map<String, Value>) -> Result<P, ErrorObject> {
    serde_path_to_error::deserialize(Value::Object(params)).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        let message = if path == "." {
            format!("Invalid params: {inner}")
        } else {
            format!("Invalid params: `{path}`: {inner}")
        };
        ErrorObject::invalid_params(message)
    })
}
