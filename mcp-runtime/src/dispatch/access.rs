//! What the authorization layer asks the dispatcher: which scopes a
//! request needs (checked on HTTP before the handler runs), every scope
//! declared in code (for the metadata), and lists filtered to what one
//! caller may use (when the server hides the rest).

use std::collections::BTreeSet;

use bytes::Bytes;

use super::Dispatcher;
use super::envelope::{Request, json_str};
use super::method::{Method, MethodName};
use super::page::{CacheHint, Pages};
use crate::protocol::{CacheScope, ErrorObject};
use crate::security::Principal;
use crate::uri_template;

impl Dispatcher {
    /// The scopes `request` needs: those of the tool, prompt or resource it
    /// names (a URI several templates match needs the scopes of all of
    /// them, since a read may fall through to any), or that a completion
    /// refers to. Empty when it names
    /// nothing known: the dispatcher then answers "not found" as usual.
    pub(crate) fn required_scopes(&self, request: &Request) -> Vec<&'static str> {
        let head = request.head();
        let text = |range| request.member(range).and_then(json_str);
        let registry = &self.registry;
        match request.method {
            MethodName::Known(Method::ToolsCall) => text(&head.name)
                .and_then(|name| registry.tool(&name).map(|t| t.entry.scopes.to_vec()))
                .unwrap_or_default(),
            MethodName::Known(Method::PromptsGet) => text(&head.name)
                .and_then(|name| registry.prompt(&name).map(|p| p.scopes.to_vec()))
                .unwrap_or_default(),
            MethodName::Known(Method::ResourcesRead) => {
                let Some(uri) = text(&head.uri) else {
                    return Vec::new();
                };
                let mut scopes: Vec<&'static str> = Vec::new();
                let statics = registry.resource(&uri).into_iter();
                let templates = registry
                    .templates()
                    .iter()
                    .filter(|(_, parts)| uri_template::match_uri(parts, &uri).is_some())
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
            MethodName::Known(Method::CompletionComplete) => request
                .params()
                .map(|params| super::completion::reference_scopes(registry, params).to_vec())
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// Every scope declared with `scopes = [...]`, sorted.
    pub(crate) fn declared_scopes(&self) -> BTreeSet<&'static str> {
        let registry = &self.registry;
        let tools = registry.tools().iter().flat_map(|t| t.entry.scopes);
        let prompts = registry.prompts().iter().flat_map(|p| p.scopes);
        let resources = registry.resources().iter().flat_map(|r| r.scopes);
        let templates = registry.templates().iter().flat_map(|(r, _)| r.scopes);
        tools
            .chain(prompts)
            .chain(resources)
            .chain(templates)
            .copied()
            .collect()
    }

    /// Every item that declares scopes, as `(manifest section, key,
    /// scopes)`, for the contract lock file.
    pub(crate) fn scoped_items(
        &self,
    ) -> Vec<(&'static str, &'static str, &'static [&'static str])> {
        let registry = &self.registry;
        let tools = registry
            .tools()
            .iter()
            .map(|t| ("tools", t.entry.name, t.entry.scopes));
        let resources = registry
            .resources()
            .iter()
            .map(|r| ("resources", r.uri, r.scopes));
        let templates = registry
            .templates()
            .iter()
            .map(|(r, _)| ("resourceTemplates", r.uri, r.scopes));
        let prompts = registry
            .prompts()
            .iter()
            .map(|p| ("prompts", p.name, p.scopes));
        tools
            .chain(resources)
            .chain(templates)
            .chain(prompts)
            .filter(|(_, _, scopes)| !scopes.is_empty())
            .collect()
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
        let settings = &self.settings;
        let cache = CacheHint {
            scope: CacheScope::Private,
            ..settings.list_cache
        };
        let info = self.server_info.as_deref();
        let pages = |kind, list_key, names: &mut dyn ExactSizeIterator<Item = &str>| {
            Pages::new(kind, list_key, names, settings.page_size, cache)
        };
        match method {
            Method::ToolsList => {
                let tools: Vec<_> = registry
                    .tools()
                    .iter()
                    .filter(|t| allowed(t.entry.scopes))
                    .collect();
                pages("tools", "tools", &mut tools.iter().map(|t| t.entry.name)).page(
                    cursor,
                    info,
                    |range| {
                        tools[range]
                            .iter()
                            .map(|t| t.descriptor())
                            .collect::<Vec<_>>()
                    },
                )
            }
            Method::PromptsList => {
                let prompts: Vec<_> = registry
                    .prompts()
                    .iter()
                    .filter(|p| allowed(p.scopes))
                    .collect();
                pages("prompts", "prompts", &mut prompts.iter().map(|p| p.name)).page(
                    cursor,
                    info,
                    |range| {
                        prompts[range]
                            .iter()
                            .map(|p| p.to_prompt())
                            .collect::<Vec<_>>()
                    },
                )
            }
            Method::ResourcesList => {
                let resources: Vec<_> = registry
                    .resources()
                    .iter()
                    .filter(|r| allowed(r.scopes))
                    .collect();
                pages(
                    "resources",
                    "resources",
                    &mut resources.iter().map(|r| r.uri),
                )
                .page(cursor, info, |range| {
                    resources[range]
                        .iter()
                        .map(|r| r.to_resource())
                        .collect::<Vec<_>>()
                })
            }
            Method::ResourcesTemplatesList => {
                let templates: Vec<_> = registry
                    .templates_by_text()
                    .into_iter()
                    .filter(|t| allowed(t.scopes))
                    .collect();
                let names = &mut templates.iter().map(|t| t.uri);
                pages("templates", "resourceTemplates", names).page(cursor, info, |range| {
                    templates[range]
                        .iter()
                        .map(|t| t.to_template())
                        .collect::<Vec<_>>()
                })
            }
            other => Err(ErrorObject::method_not_found(other.name())),
        }
    }
}
