//! What the dispatcher reads of a catalog: indexes of the runtime items,
//! and for each kind that has some, the merged list (static and runtime
//! items in one order) with its pages, rebuilt when the kind changes.

use std::borrow::{Borrow, Cow};
use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use serde::Serialize;

use super::{Attached, Entries, Kind};
use crate::dispatch::page::{Listing, Pages};
use crate::dispatch::{Permitted, Tools};
use crate::protocol::method::Method;
use crate::protocol::{CacheHint, CacheScope, ErrorObject, Prompt, Resource};
use crate::registry::{
    PromptEntry, RegisteredTool, ResourceEntry, RuntimePromptEntry, RuntimeResourceEntry,
};
use crate::security::Principal;

/// One version of the catalog as the dispatcher sees it. Each part is
/// shared with the next version unless its kind changed.
#[derive(Default)]
pub(super) struct Snapshot {
    tools: Option<Arc<Merged<Tools, Arc<RegisteredTool>>>>,
    prompts: Option<Arc<Merged<AnyPrompts, ListedPrompt>>>,
    resources: Option<Arc<Merged<AnyResources, ListedResource>>>,
    pub(super) tool_index: Arc<HashMap<String, Arc<RegisteredTool>>>,
    pub(super) prompt_index: Arc<HashMap<String, Arc<RuntimePromptEntry>>>,
    pub(super) resource_index: Arc<HashMap<String, Arc<RuntimeResourceEntry>>>,
}

/// A merged list and its pages.
struct Merged<L: Listing, I> {
    items: Vec<I>,
    pages: Pages<L>,
}

impl Snapshot {
    /// Every kind built from `state`.
    pub(super) fn build(state: &Entries, attached: &Attached) -> Snapshot {
        [Kind::Tools, Kind::Prompts, Kind::Resources]
            .into_iter()
            .fold(Snapshot::default(), |snapshot, kind| {
                snapshot.rebuilt(kind, state, attached)
            })
    }

    /// This snapshot with `kind` built again from `state`.
    pub(super) fn rebuilt(&self, kind: Kind, state: &Entries, attached: &Attached) -> Snapshot {
        let mut next = Snapshot {
            tools: self.tools.clone(),
            prompts: self.prompts.clone(),
            resources: self.resources.clone(),
            tool_index: self.tool_index.clone(),
            prompt_index: self.prompt_index.clone(),
            resource_index: self.resource_index.clone(),
        };
        match kind {
            Kind::Tools => {
                let statics = attached.tools.iter().cloned();
                let runtime = state.tools.values().cloned();
                next.tools = merged(statics, runtime, |t| t.name().to_owned(), attached);
                next.tool_index = Arc::new(state.tools.clone().into_iter().collect());
            }
            Kind::Prompts => {
                let statics = attached.prompts.iter().map(|p| ListedPrompt::Static(p));
                let runtime = state
                    .prompts
                    .values()
                    .map(|p| ListedPrompt::Runtime(p.clone()));
                next.prompts = merged(statics, runtime, |p| p.name().to_owned(), attached);
                next.prompt_index = Arc::new(state.prompts.clone().into_iter().collect());
            }
            Kind::Resources => {
                let singles = state.resources.values();
                let provided = state.providers.values().flat_map(|p| p.items.values());
                let runtime: Vec<_> = singles.chain(provided).cloned().collect();
                next.resource_index = Arc::new(
                    runtime
                        .iter()
                        .map(|r| (r.resource.uri.clone(), r.clone()))
                        .collect(),
                );
                let statics = attached.resources.iter().map(|r| ListedResource::Static(r));
                let runtime = runtime.into_iter().map(ListedResource::Runtime);
                next.resources = merged(statics, runtime, |r| r.uri().to_owned(), attached);
            }
        }
        next
    }

    /// The page a list request asks for, when its kind has runtime items.
    pub(super) fn page(
        &self,
        method: Method,
        cursor: Option<&str>,
        filter: Option<&Principal>,
        attached: &Attached,
    ) -> Option<Result<Bytes, ErrorObject>> {
        Some(match method {
            Method::ToolsList => self
                .tools
                .as_ref()?
                .page(cursor, filter, attached, |t| t.scopes()),
            Method::PromptsList => {
                self.prompts
                    .as_ref()?
                    .page(cursor, filter, attached, ListedPrompt::scopes)
            }
            Method::ResourcesList => {
                self.resources
                    .as_ref()?
                    .page(cursor, filter, attached, ListedResource::scopes)
            }
            _ => return None,
        })
    }
}

/// The static and runtime items in one sorted list, paginated; `None`
/// when there are no runtime items (the static pages serve).
fn merged<L: Listing, I: Borrow<L::Item>>(
    statics: impl Iterator<Item = I>,
    runtime: impl ExactSizeIterator<Item = I>,
    key: impl Fn(&I) -> String,
    attached: &Attached,
) -> Option<Arc<Merged<L, I>>> {
    if runtime.len() == 0 {
        return None;
    }
    let mut items: Vec<I> = statics.chain(runtime).collect();
    items.sort_by_cached_key(|item| key(item));
    let pages = Pages::new(&items, attached.page_size, attached.list_cache);
    Some(Arc::new(Merged { items, pages }))
}

impl<L: Listing, I: Borrow<L::Item> + Clone> Merged<L, I> {
    fn page(
        &self,
        cursor: Option<&str>,
        filter: Option<&Principal>,
        attached: &Attached,
        scopes: impl Fn(&I) -> &[&'static str],
    ) -> Result<Bytes, ErrorObject> {
        let server_info = attached.server_info.as_deref();
        let Some(principal) = filter else {
            return self.pages.page(cursor, server_info, &self.items);
        };
        let permitted = Permitted {
            cursor,
            server_info,
            page_size: attached.page_size,
            cache: CacheHint {
                scope: CacheScope::Private,
                ..attached.list_cache
            },
        };
        let allowed = self
            .items
            .iter()
            .filter(|item| principal.has_scopes(scopes(item)));
        permitted.of::<L, I>(allowed.cloned())
    }
}

/// A resource in a merged `resources/list`.
#[derive(Clone)]
pub(super) enum ListedResource {
    Static(&'static ResourceEntry),
    Runtime(Arc<RuntimeResourceEntry>),
}

impl ListedResource {
    fn uri(&self) -> &str {
        match self {
            ListedResource::Static(entry) => entry.uri,
            ListedResource::Runtime(entry) => &entry.resource.uri,
        }
    }

    fn scopes(&self) -> &[&'static str] {
        match self {
            ListedResource::Static(entry) => entry.scopes,
            ListedResource::Runtime(entry) => &entry.scopes,
        }
    }
}

/// `resources/list` over static and runtime resources.
pub(super) struct AnyResources;

impl Listing for AnyResources {
    const KIND: &'static str = "resources";
    const KEY: &'static str = "resources";
    type Item = ListedResource;
    fn name(item: &ListedResource) -> &str {
        item.uri()
    }
    fn show(item: &ListedResource) -> impl Serialize + '_ {
        match item {
            ListedResource::Static(entry) => Cow::<Resource>::Owned(entry.to_resource()),
            ListedResource::Runtime(entry) => Cow::Borrowed(&entry.resource),
        }
    }
}

/// A prompt in a merged `prompts/list`.
#[derive(Clone)]
pub(super) enum ListedPrompt {
    Static(&'static PromptEntry),
    Runtime(Arc<RuntimePromptEntry>),
}

impl ListedPrompt {
    fn name(&self) -> &str {
        match self {
            ListedPrompt::Static(entry) => entry.name,
            ListedPrompt::Runtime(entry) => &entry.prompt.name,
        }
    }

    fn scopes(&self) -> &[&'static str] {
        match self {
            ListedPrompt::Static(entry) => entry.scopes,
            ListedPrompt::Runtime(entry) => &entry.scopes,
        }
    }
}

/// `prompts/list` over static and runtime prompts.
pub(super) struct AnyPrompts;

impl Listing for AnyPrompts {
    const KIND: &'static str = "prompts";
    const KEY: &'static str = "prompts";
    type Item = ListedPrompt;
    fn name(item: &ListedPrompt) -> &str {
        item.name()
    }
    fn show(item: &ListedPrompt) -> impl Serialize + '_ {
        match item {
            ListedPrompt::Static(entry) => Cow::<Prompt>::Owned(entry.to_prompt()),
            ListedPrompt::Runtime(entry) => Cow::Borrowed(&entry.prompt),
        }
    }
}
