//! What the authorization layer asks the dispatcher: which scopes a
//! request needs (checked on HTTP before the handler runs), every scope
//! declared in code (for the metadata), and lists filtered to what one
//! caller may use (when the server hides the rest).

use std::borrow::Borrow;
use std::collections::BTreeSet;

use bytes::Bytes;
use serde_json::value::RawValue;

use super::Dispatcher;
use super::envelope::{Request, json_str};
use super::page::{Listing, Pages};
use super::prompts::Prompts;
use super::resources::{Resources, Templates};
use super::tools::Tools;
use crate::protocol::CacheHint;
use crate::protocol::method::{Method, MethodName};
use crate::protocol::{CacheScope, ErrorObject};
use crate::security::Principal;
use crate::uri_template;

/// A static item as the contract lock annotates it: its manifest section,
/// key, scopes and group.
pub(crate) type StaticItem = (
    &'static str,
    &'static str,
    &'static [&'static str],
    Option<&'static str>,
);

impl Dispatcher {
    /// The scopes `request` needs: those of the tool, prompt or resource it
    /// names (a URI several templates match needs the scopes of all of
    /// them, since a read may fall through to any), or that a completion
    /// refers to. Empty when it names
    /// nothing known: the dispatcher then answers "not found" as usual.
    #[cfg_attr(
        not(feature = "http"),
        expect(dead_code, reason = "used by authorization (feature `http`)")
    )]
    pub(crate) fn required_scopes(&self, request: &Request) -> Vec<&'static str> {
        let head = request.head();
        let text = |range| request.member(range).and_then(json_str);
        match request.method {
            MethodName::Known(Method::ToolsCall) => text(&head.name)
                .and_then(|name| self.tool(&name).map(|t| t.scopes().to_vec()))
                .unwrap_or_default(),
            MethodName::Known(Method::PromptsGet) => text(&head.name)
                .and_then(|name| self.prompt(&name).map(|p| p.scopes().to_vec()))
                .unwrap_or_default(),
            MethodName::Known(Method::ResourcesRead) => match text(&head.uri) {
                Some(uri) => self.read_scopes(&uri),
                None => Vec::new(),
            },
            MethodName::Known(Method::CompletionComplete) => request
                .params()
                .map(|params| super::completion::reference_scopes(self, params))
                .unwrap_or_default(),
            MethodName::Unknown(ref name) => self
                .extensions
                .method(name.as_ref())
                .map(|served| served.method.scopes.clone())
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// The scopes reading `uri` needs: those of everything that may serve
    /// it (a URI several templates match needs the scopes of all of them,
    /// since a read may fall through to any).
    pub(crate) fn read_scopes(&self, uri: &str) -> Vec<&'static str> {
        let registry = &self.registry;
        let mut scopes: Vec<&'static str> = Vec::new();
        if let Some(runtime) = self.runtime.items.as_ref().and_then(|r| r.resource(uri)) {
            scopes.extend(runtime.scopes.iter());
        }
        let statics = registry.resource(uri).into_iter();
        let templates = registry
            .templates()
            .iter()
            .filter(|(_, parts)| uri_template::match_uri(parts, uri).is_some())
            .map(|(entry, _)| *entry);
        for entry in statics.chain(templates) {
            for scope in entry.scopes {
                if !scopes.contains(scope) {
                    scopes.push(scope);
                }
            }
        }
        scopes
    }

    /// Every scope declared with `scopes = [...]`, sorted.
    #[cfg_attr(
        not(feature = "http"),
        expect(dead_code, reason = "used by authorization (feature `http`)")
    )]
    pub(crate) fn declared_scopes(&self) -> BTreeSet<&'static str> {
        let registry = &self.registry;
        let tools = registry.tools().iter().flat_map(|t| t.scopes());
        let prompts = registry.prompts().iter().flat_map(|p| p.scopes);
        let resources = registry.resources().iter().flat_map(|r| r.scopes);
        let templates = registry.templates().iter().flat_map(|(r, _)| r.scopes);
        tools
            .chain(prompts)
            .chain(resources)
            .chain(templates)
            .copied()
            .chain(self.extensions.scopes())
            .chain(self.runtime.items.iter().flat_map(|r| r.scopes()))
            .collect()
    }

    /// Every static item, as `(manifest section, key, scopes, group)`, for
    /// the contract lock file.
    #[cfg_attr(
        not(feature = "client"),
        expect(dead_code, reason = "used by the contract lock (feature `client`)")
    )]
    pub(crate) fn static_items(&self) -> Vec<StaticItem> {
        let registry = &self.registry;
        let tools = (registry.tools().iter())
            .filter_map(|t| t.entry())
            .map(|t| ("tools", t.name, t.scopes, t.group));
        let resources =
            (registry.resources().iter()).map(|r| ("resources", r.uri, r.scopes, r.group));
        let templates = (registry.templates().iter())
            .map(|(r, _)| ("resourceTemplates", r.uri, r.scopes, r.group));
        let prompts = (registry.prompts().iter()).map(|p| ("prompts", p.name, p.scopes, p.group));
        tools
            .chain(resources)
            .chain(templates)
            .chain(prompts)
            .collect()
    }

    /// Whether the item `key` of the manifest section `section` is static
    /// (a `#[tool]`, `#[resource]` or `#[prompt]`), not a runtime one: the
    /// contract lock covers static items only.
    #[cfg_attr(
        not(feature = "client"),
        expect(dead_code, reason = "used by the contract lock (feature `client`)")
    )]
    pub(crate) fn is_static(&self, section: &str, key: &str) -> bool {
        let registry = &self.registry;
        match section {
            "tools" => registry.tool(key).is_some(),
            "resources" => registry.resource(key).is_some(),
            "prompts" => registry.prompt(key).is_some(),
            _ => true,
        }
    }

    /// Whether the server serves a runtime catalog.
    #[cfg_attr(
        not(feature = "client"),
        expect(dead_code, reason = "used by the contract lock (feature `client`)")
    )]
    pub(crate) fn has_catalog(&self) -> bool {
        self.runtime.items.is_some()
    }

    /// Every tool that requires extensions, with them, for the contract
    /// lock file.
    #[cfg_attr(
        not(feature = "client"),
        expect(dead_code, reason = "used by the contract lock (feature `client`)")
    )]
    pub(crate) fn tool_extensions(&self) -> Vec<(&'static str, &'static [&'static str])> {
        let tools = self.registry.tools().iter().filter_map(|tool| tool.entry());
        tools
            .filter(|tool| !tool.extensions.is_empty())
            .map(|tool| (tool.name, tool.extensions))
            .collect()
    }

    /// The tools that run as tasks, and whether they must (`required`),
    /// for the contract lock file.
    #[cfg_attr(
        not(feature = "client"),
        expect(dead_code, reason = "used by the contract lock (feature `client`)")
    )]
    pub(crate) fn task_tools(&self) -> Vec<(&'static str, bool)> {
        let tools = self.registry.tools().iter();
        tools
            .filter_map(|tool| {
                let entry = tool.entry()?;
                Some((entry.name, entry.task?.required))
            })
            .collect()
    }

    /// Every method the extensions serve, by name, for the contract lock
    /// file.
    #[cfg_attr(
        not(feature = "client"),
        expect(dead_code, reason = "used by the contract lock (feature `client`)")
    )]
    pub(crate) fn extension_methods(&self) -> Vec<&super::Served> {
        let mut methods = self.extensions.methods();
        methods.sort_by(|a, b| a.method.name.cmp(&b.method.name));
        methods
    }

    /// A `*/list` page holding only what `principal` may use. It differs
    /// between callers, so it is `cacheScope: "private"` (caching spec:
    /// "filtered list results that vary per user").
    pub(crate) fn list_for(
        &self,
        method: Method,
        principal: &Principal,
        cursor: Option<&str>,
    ) -> Result<Bytes, ErrorObject> {
        let allowed = |scopes: &[&str]| principal.has_scopes(scopes);
        let registry = &self.registry;
        let page = Permitted {
            cursor,
            server_info: self.server_info.as_deref(),
            page_size: self.settings.page_size,
            cache: CacheHint {
                scope: CacheScope::Private,
                ..self.settings.list_cache
            },
        };
        match method {
            Method::ToolsList => {
                let tools = registry.tools().iter().map(|t| &**t);
                page.of::<Tools, _>(tools.filter(|t| allowed(t.scopes())))
            }
            Method::ResourcesList => {
                let resources = registry.resources().iter().copied();
                page.of::<Resources, _>(resources.filter(|r| allowed(r.scopes)))
            }
            Method::ResourcesTemplatesList => {
                let templates = registry.templates_by_text().iter().copied();
                page.of::<Templates, _>(templates.filter(|t| allowed(t.scopes)))
            }
            Method::PromptsList => {
                let prompts = registry.prompts().iter().copied();
                page.of::<Prompts, _>(prompts.filter(|p| allowed(p.scopes)))
            }
            other => Err(ErrorObject::method_not_found(other.name())),
        }
    }
}

/// One page of a list filtered for one caller.
pub(crate) struct Permitted<'a> {
    pub(crate) cursor: Option<&'a str>,
    pub(crate) server_info: Option<&'a RawValue>,
    pub(crate) page_size: usize,
    pub(crate) cache: CacheHint,
}

impl Permitted<'_> {
    /// The page the cursor points at in a list of only `items`: pages of
    /// their own, whose cursors the fingerprint ties to this caller's list.
    pub(crate) fn of<L: Listing, I: Borrow<L::Item>>(
        &self,
        items: impl Iterator<Item = I>,
    ) -> Result<Bytes, ErrorObject> {
        let items: Vec<I> = items.collect();
        let pages = Pages::<L>::new(&items, self.page_size, self.cache);
        pages.page(self.cursor, self.server_info, &items)
    }
}
