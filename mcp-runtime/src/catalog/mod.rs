//! Runtime catalogs: tools, prompts and resources that exist only while
//! the server runs, beside the `#[tool]`, `#[prompt]` and `#[resource]`
//! functions linked into the binary.
//!
//! A gateway learns tools from another server, an OpenAPI file or a plugin
//! directory; a notes server's notes and a file server's files are
//! resources that come and go. Add them to a [`Catalog`], give the catalog
//! to the server builder, and add or remove items at any time:
//!
//! ```no_run
//! use mcp_runtime::catalog::{Catalog, RuntimeTool};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Shout {
//!     text: String,
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     let catalog = Catalog::new();
//!     let handle = catalog.clone();
//!     std::thread::spawn(move || {
//!         // Later, from anywhere: `tools/list` changes and subscribed
//!         // clients get `notifications/tools/list_changed`.
//!         let shout = RuntimeTool::new("shout", |args: Shout, _ctx| async move {
//!             args.text.to_uppercase()
//!         });
//!         handle.add_tool(shout).expect("no other tool is named shout");
//!     });
//!     mcp_runtime::server!().catalog(&catalog).run()
//! }
//! ```
//!
//! What holds for a runtime item is what holds for a static one: it is
//! called through the same `tools/call` path (the same [`Context`](crate::Context),
//! asks, scopes, error mapping and audit events); it is listed with the
//! static items in one sorted, paginated list; a name (or URI) already
//! taken, by a static item or another runtime one, is an error when it is
//! added ([`CatalogError::Duplicate`]); `hide_unpermitted` filters it by
//! its scopes. Every change fires `list_changed` for its kind: a server
//! with a catalog advertises `listChanged` for the kinds the catalog serves
//! (all three by default; [`Catalog::of`] narrows them).
//!
//! Static list pages stay as they were while the catalog holds no item of
//! their kind; otherwise the merged list is paginated again after each
//! change (each page serialized on its first request, as static pages
//! are), so a cursor of the list before the change is refused with the
//! spec's invalid-cursor error. The contract lock
//! ([`assert_contract!`](crate::assert_contract)) covers static items only.

mod items;
mod lists;

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use arc_swap::ArcSwap;
use bytes::Bytes;
use serde_json::value::RawValue;

pub use self::items::{NoArguments, ResourceProvider, RuntimePrompt, RuntimeResource, RuntimeTool};
use self::lists::Snapshot;
use crate::changes::Changes;
use crate::mrtr::state::StatePolicy;
use crate::protocol::method::Method;
use crate::protocol::{CacheHint, ErrorObject};
use crate::registry::{
    self, PromptEntry, RegisteredTool, ResourceEntry, RuntimeItems, RuntimePromptEntry,
    RuntimeResourceEntry, ToolParts,
};
/// What a [`ResourceProvider`] read returns: `Box::pin(async move { ... })`
/// of anything a resource read results in.
pub use crate::resource::ResourceFuture;
use crate::security::Principal;

/// A kind of item a catalog can serve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kind {
    /// Tools.
    Tools,
    /// Prompts.
    Prompts,
    /// Resources (single ones and providers').
    Resources,
}

/// Why an item was not added.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CatalogError {
    /// The name (or URI) is taken, by a static item or a runtime one.
    Duplicate {
        /// `tool`, `prompt` or `resource`.
        kind: &'static str,
        /// The name or URI.
        name: String,
        /// Who has it: `a #[tool]`, `a runtime tool`, `provider files`...
        holder: String,
    },
    /// The item breaks a rule (its name, its schema, a scope).
    Invalid {
        /// The item's name or URI.
        name: String,
        /// What is wrong.
        problem: String,
    },
    /// The catalog was not created to serve this kind (see [`Catalog::of`]).
    NotServed(Kind),
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CatalogError::Duplicate { kind, name, holder } => write!(
                f,
                "{kind} `{name}` already exists ({holder}); remove it first or pick another name"
            ),
            CatalogError::Invalid { name, problem } => write!(f, "`{name}`: {problem}"),
            CatalogError::NotServed(kind) => write!(
                f,
                "this catalog does not serve {kind:?}: create it with Catalog::of([...]) naming it"
            ),
        }
    }
}

impl std::error::Error for CatalogError {}

/// Items added and removed while the server runs. Cheap to clone: clones
/// share the items. Give it to one server with
/// [`ServerBuilder::catalog`](crate::ServerBuilder::catalog).
#[derive(Clone)]
pub struct Catalog {
    shared: Arc<Shared>,
}

impl fmt::Debug for Catalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.state();
        f.debug_struct("Catalog")
            .field("tools", &state.tools.len())
            .field("prompts", &state.prompts.len())
            .field("resources", &state.resources.len())
            .field("providers", &state.providers.len())
            .finish()
    }
}

impl Default for Catalog {
    fn default() -> Self {
        Catalog::new()
    }
}

/// What clones of a catalog share.
struct Shared {
    kinds: HashSet<Kind>,
    state: Mutex<Entries>,
    /// What the dispatcher reads, rebuilt on each change.
    snapshot: ArcSwap<Snapshot>,
    /// The server it serves, once built.
    attached: OnceLock<Attached>,
}

/// The runtime items, by name or URI.
#[derive(Default)]
struct Entries {
    tools: BTreeMap<String, Arc<RegisteredTool>>,
    prompts: BTreeMap<String, Arc<RuntimePromptEntry>>,
    resources: BTreeMap<String, Arc<RuntimeResourceEntry>>,
    providers: BTreeMap<u64, Provided>,
}

/// A provider and its items as last listed.
struct Provided {
    name: String,
    provider: Arc<dyn ResourceProvider>,
    scopes: Box<[&'static str]>,
    items: BTreeMap<String, Arc<RuntimeResourceEntry>>,
}

/// What a catalog learns from its server when it is built.
pub(crate) struct Attached {
    pub(crate) tools: Vec<Arc<RegisteredTool>>,
    pub(crate) resources: Vec<&'static ResourceEntry>,
    pub(crate) prompts: Vec<&'static PromptEntry>,
    pub(crate) page_size: usize,
    pub(crate) list_cache: CacheHint,
    pub(crate) server_info: Option<Box<RawValue>>,
    pub(crate) changes: Changes,
}

impl Catalog {
    /// A catalog of tools, prompts and resources.
    pub fn new() -> Catalog {
        Catalog::of([Kind::Tools, Kind::Prompts, Kind::Resources])
    }

    /// A catalog of the given kinds only: the server advertises (and
    /// offers `listChanged` for) these, and adding another kind is an
    /// error.
    pub fn of(kinds: impl IntoIterator<Item = Kind>) -> Catalog {
        Catalog {
            shared: Arc::new(Shared {
                kinds: kinds.into_iter().collect(),
                state: Mutex::new(Entries::default()),
                snapshot: ArcSwap::from_pointee(Snapshot::default()),
                attached: OnceLock::new(),
            }),
        }
    }

    /// Whether it serves `kind`.
    pub fn serves(&self, kind: Kind) -> bool {
        self.shared.kinds.contains(&kind)
    }

    /// Adds a tool.
    pub fn add_tool(&self, tool: RuntimeTool) -> Result<(), CatalogError> {
        self.shared.serves(Kind::Tools)?;
        let name = tool.descriptor.name.clone();
        let registered = Arc::new(register_tool(tool)?);
        let added = self.shared.edit(Kind::Tools, |state, attached| {
            check_tool_name(state, attached, &name)?;
            state.tools.insert(name, registered);
            Ok(())
        });
        settled(added)
    }

    /// Removes the runtime tool `name`; `false` if there is none.
    pub fn remove_tool(&self, name: &str) -> bool {
        self.shared
            .edit(Kind::Tools, |state, _| match state.tools.remove(name) {
                Some(_) => Ok(()),
                None => Err(None),
            })
            .is_ok()
    }

    /// Adds a prompt.
    pub fn add_prompt(&self, prompt: RuntimePrompt) -> Result<(), CatalogError> {
        self.shared.serves(Kind::Prompts)?;
        let name = prompt.prompt.name.clone();
        let entry = Arc::new(RuntimePromptEntry {
            scopes: interned(&name, &prompt.scopes)?,
            prompt: prompt.prompt,
            get: prompt.get,
        });
        let added = self.shared.edit(Kind::Prompts, |state, attached| {
            let taken_static = attached.is_some_and(|a| a.prompts.iter().any(|p| p.name == name));
            if taken_static || state.prompts.contains_key(&name) {
                let holder = if taken_static {
                    "a #[prompt]"
                } else {
                    "a runtime prompt"
                };
                return Err(Some(duplicate("prompt", &name, holder)));
            }
            state.prompts.insert(name, entry);
            Ok(())
        });
        settled(added)
    }

    /// Removes the runtime prompt `name`; `false` if there is none.
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.shared
            .edit(Kind::Prompts, |state, _| match state.prompts.remove(name) {
                Some(_) => Ok(()),
                None => Err(None),
            })
            .is_ok()
    }

    /// Adds a resource.
    pub fn add_resource(&self, resource: RuntimeResource) -> Result<(), CatalogError> {
        self.shared.serves(Kind::Resources)?;
        let uri = resource.resource.uri.clone();
        check_uri(&uri)?;
        let entry = Arc::new(RuntimeResourceEntry {
            scopes: interned(&uri, &resource.scopes)?,
            resource: resource.resource,
            read: resource.read,
            cache: resource.cache,
        });
        let added = self.shared.edit(Kind::Resources, |state, attached| {
            check_uri_free(state, attached, &uri, None)?;
            state.resources.insert(uri, entry);
            Ok(())
        });
        settled(added)
    }

    /// Removes the runtime resource at `uri`; `false` if there is none.
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.shared
            .edit(Kind::Resources, |state, _| {
                match state.resources.remove(uri) {
                    Some(_) => Ok(()),
                    None => Err(None),
                }
            })
            .is_ok()
    }

    /// Adds a provider, listing its resources now. `name` identifies it in
    /// errors; `scopes` are what reading any of its resources needs.
    pub fn add_provider<S: Into<String>>(
        &self,
        name: impl Into<String>,
        provider: impl ResourceProvider,
        scopes: impl IntoIterator<Item = S>,
    ) -> Result<ProviderHandle, CatalogError> {
        self.shared.serves(Kind::Resources)?;
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = name.into();
        let scopes: Vec<String> = scopes.into_iter().map(Into::into).collect();
        let provided = Provided {
            scopes: interned(&name, &scopes)?,
            name,
            provider: Arc::new(provider),
            items: BTreeMap::new(),
        };
        let items = list_provider(&provided)?;
        let added = self.shared.edit(Kind::Resources, |state, attached| {
            for uri in items.keys() {
                check_uri_free(state, attached, uri, None)?;
            }
            state.providers.insert(id, Provided { items, ..provided });
            Ok(())
        });
        settled(added)?;
        let handle = ProviderHandle {
            shared: self.shared.clone(),
            id,
        };
        // Outside the lock: the provider may refresh itself right away.
        let provider = (self.shared.state().providers.get(&id)).map(|p| p.provider.clone());
        if let Some(provider) = provider {
            provider.added(&handle);
        }
        Ok(handle)
    }

    /// Gives the catalog its server's static items and settings, checking
    /// what was added before against them.
    pub(crate) fn attach(&self, attached: Attached) -> Result<Arc<dyn RuntimeItems>, String> {
        let shared = &self.shared;
        let state = shared.state();
        check_all(&state, &attached)?;
        if shared.attached.set(attached).is_err() {
            return Err("this catalog already serves another server; create one per server".into());
        }
        let attached = shared.attached.get().expect("just set");
        shared
            .snapshot
            .store(Arc::new(Snapshot::build(&state, attached)));
        drop(state);
        Ok(self.shared.clone())
    }

    /// The kinds it serves.
    pub(crate) fn kinds(&self) -> impl Iterator<Item = Kind> + '_ {
        self.shared.kinds.iter().copied()
    }
}

/// A provider in a catalog: refresh it when its collection changed.
#[derive(Clone)]
pub struct ProviderHandle {
    shared: Arc<Shared>,
    id: u64,
}

impl fmt::Debug for ProviderHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderHandle")
            .field("id", &self.id)
            .finish()
    }
}

impl ProviderHandle {
    /// Lists the provider's resources again. When the set (or an item's
    /// descriptor) changed, `resources/list` changes and subscribed clients
    /// get `notifications/resources/list_changed`. A URI that is taken
    /// leaves the previous list in place and is the error.
    pub fn refresh(&self) -> Result<(), CatalogError> {
        // Listed outside the catalog's lock: it is the provider's own code
        // (a directory walk, a query), which may take time or use the
        // catalog itself.
        let source = {
            let state = self.shared.state();
            let Some(provided) = state.providers.get(&self.id) else {
                return Ok(());
            };
            Provided {
                name: provided.name.clone(),
                provider: provided.provider.clone(),
                scopes: provided.scopes.clone(),
                items: BTreeMap::new(),
            }
        };
        let items = list_provider(&source)?;
        let refreshed = self.shared.edit(Kind::Resources, |state, attached| {
            let Some(provided) = state.providers.get(&self.id) else {
                return Err(None);
            };
            let unchanged = items.len() == provided.items.len()
                && items
                    .iter()
                    .zip(&provided.items)
                    .all(|((a, x), (b, y))| a == b && x.resource == y.resource);
            if unchanged {
                return Err(None);
            }
            for uri in items.keys() {
                check_uri_free(state, attached, uri, Some(self.id))?;
            }
            if let Some(provided) = state.providers.get_mut(&self.id) {
                provided.items = items;
            }
            Ok(())
        });
        // Nothing to do is not an error.
        settled(refreshed)
    }

    /// Tells subscribed clients that the resource at `uri` changed
    /// (`notifications/resources/updated`, to subscriptions that watch it).
    /// Nothing happens before the server is built.
    pub fn updated(&self, uri: impl Into<String>) {
        if let Some(attached) = self.shared.attached.get() {
            attached.changes.resource_updated(uri);
        }
    }

    /// Removes the provider and its resources.
    pub fn remove(&self) -> bool {
        self.shared
            .edit(Kind::Resources, |state, _| {
                match state.providers.remove(&self.id) {
                    Some(_) => Ok(()),
                    None => Err(None),
                }
            })
            .is_ok()
    }
}

/// An edit's failure: `None` when nothing changed (a removal of nothing),
/// or the error.
type EditError = Option<CatalogError>;

/// An edit's outcome for the caller: nothing to change is no error.
fn settled(edited: Result<(), EditError>) -> Result<(), CatalogError> {
    match edited {
        Ok(()) | Err(None) => Ok(()),
        Err(Some(error)) => Err(error),
    }
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, Entries> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn serves(&self, kind: Kind) -> Result<(), CatalogError> {
        match self.kinds.contains(&kind) {
            true => Ok(()),
            false => Err(CatalogError::NotServed(kind)),
        }
    }

    /// Applies `edit`; when it changed something and a server is attached,
    /// rebuilds that kind's lists and announces the change.
    fn edit<T>(
        &self,
        kind: Kind,
        edit: impl FnOnce(&mut Entries, Option<&Attached>) -> Result<T, EditError>,
    ) -> Result<T, EditError> {
        let attached = self.attached.get();
        let mut state = self.state();
        let value = edit(&mut state, attached)?;
        if let Some(attached) = attached {
            let snapshot = self.snapshot.load().rebuilt(kind, &state, attached);
            self.snapshot.store(Arc::new(snapshot));
            drop(state);
            match kind {
                Kind::Tools => attached.changes.tools_changed(),
                Kind::Prompts => attached.changes.prompts_changed(),
                Kind::Resources => attached.changes.resources_changed(),
            }
        }
        Ok(value)
    }
}

impl RuntimeItems for Shared {
    fn tool(&self, name: &str) -> Option<Arc<RegisteredTool>> {
        self.snapshot.load().tool_index.get(name).cloned()
    }

    fn prompt(&self, name: &str) -> Option<Arc<RuntimePromptEntry>> {
        self.snapshot.load().prompt_index.get(name).cloned()
    }

    fn resource(&self, uri: &str) -> Option<Arc<RuntimeResourceEntry>> {
        self.snapshot.load().resource_index.get(uri).cloned()
    }

    fn list(
        &self,
        method: Method,
        cursor: Option<&str>,
        filter: Option<&Principal>,
    ) -> Option<Result<Bytes, ErrorObject>> {
        let attached = self.attached.get()?;
        self.snapshot.load().page(method, cursor, filter, attached)
    }

    fn scopes(&self) -> Vec<&'static str> {
        let state = self.state();
        let tools = state.tools.values().flat_map(|t| t.scopes().iter());
        let prompts = state.prompts.values().flat_map(|p| p.scopes.iter());
        let resources = state.resources.values().flat_map(|r| r.scopes.iter());
        let providers = state.providers.values().flat_map(|p| p.scopes.iter());
        tools
            .chain(prompts)
            .chain(resources)
            .chain(providers)
            .copied()
            .collect()
    }
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Catalog")
            .field("kinds", &self.kinds)
            .finish_non_exhaustive()
    }
}

/// A runtime tool, checked and registered as a static one is.
fn register_tool(tool: RuntimeTool) -> Result<RegisteredTool, CatalogError> {
    let name = tool.descriptor.name.clone();
    let invalid = |problem: String| CatalogError::Invalid {
        name: name.clone(),
        problem,
    };
    if !is_tool_name(&name) {
        return Err(invalid(
            "a tool name is 1 to 128 characters of A-Z, a-z, 0-9, `_`, `-` and `.`".into(),
        ));
    }
    if let Some(problem) = tool.problem {
        return Err(invalid(problem.to_string()));
    }
    let annotations = tool.descriptor.annotations.clone().unwrap_or_default();
    let effects = registry::repeat_has_effects(
        annotations.read_only_hint,
        annotations.destructive_hint,
        annotations.idempotent_hint,
    );
    let state = StatePolicy {
        single_use: effects && !tool.replayable_state,
        bound_answers: effects,
    };
    let scopes = interned(&name, &tool.scopes)?;
    ToolParts::runtime(tool.descriptor, tool.call, scopes, state, tool.hand_written)
        .finish()
        .map_err(|problem| invalid(problem.to_string()))
}

/// The spec's tool name rule (the macros check static names the same way).
fn is_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Checks and interns scope names.
fn interned(item: &str, scopes: &[String]) -> Result<Box<[&'static str]>, CatalogError> {
    scopes
        .iter()
        .map(|scope| {
            let invalid = |problem| CatalogError::Invalid {
                name: item.to_owned(),
                problem,
            };
            if !crate::security::is_scope_token(scope) {
                return Err(invalid(format!(
                    "`{scope}` is not an OAuth scope (RFC 6749 scope-token)"
                )));
            }
            registry::intern(scope).ok_or_else(|| {
                let (count, bytes) = registry::SCOPE_NAMES;
                invalid(format!(
                    "`{scope}` is a scope name too many: this process holds {count} distinct runtime scope names ({bytes} bytes) at most"
                ))
            })
        })
        .collect()
}

/// A resource URI: a scheme, no whitespace, not a template.
fn check_uri(uri: &str) -> Result<(), CatalogError> {
    let scheme = uri.split_once(':').map(|(scheme, _)| scheme);
    let valid = scheme.is_some_and(|s| {
        s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    }) && !uri.contains(|c: char| c.is_whitespace() || c == '{' || c == '}');
    match valid {
        true => Ok(()),
        false => Err(CatalogError::Invalid {
            name: uri.to_owned(),
            problem: "a resource URI needs a scheme (`notes://7`, `file:///a.txt`), without spaces or `{`".into(),
        }),
    }
}

fn duplicate(kind: &'static str, name: &str, holder: &str) -> CatalogError {
    CatalogError::Duplicate {
        kind,
        name: name.to_owned(),
        holder: holder.to_owned(),
    }
}

fn check_tool_name(
    state: &Entries,
    attached: Option<&Attached>,
    name: &str,
) -> Result<(), CatalogError> {
    if attached.is_some_and(|a| a.tools.iter().any(|t| t.name() == name)) {
        return Err(duplicate("tool", name, "a #[tool]"));
    }
    if state.tools.contains_key(name) {
        return Err(duplicate("tool", name, "a runtime tool"));
    }
    Ok(())
}

/// Whether `uri` is free for a resource (of the provider `owner`, which
/// may keep its own).
fn check_uri_free(
    state: &Entries,
    attached: Option<&Attached>,
    uri: &str,
    owner: Option<u64>,
) -> Result<(), CatalogError> {
    if attached.is_some_and(|a| a.resources.iter().any(|r| r.uri == uri)) {
        return Err(duplicate("resource", uri, "a #[resource]"));
    }
    if state.resources.contains_key(uri) {
        return Err(duplicate("resource", uri, "a runtime resource"));
    }
    for (id, provided) in &state.providers {
        if Some(*id) != owner && provided.items.contains_key(uri) {
            return Err(duplicate(
                "resource",
                uri,
                &format!("provider `{}`", provided.name),
            ));
        }
    }
    Ok(())
}

/// Everything added before the server was built, against its statics.
fn check_all(state: &Entries, attached: &Attached) -> Result<(), String> {
    let empty = Entries::default();
    for name in state.tools.keys() {
        check_tool_name(&empty, Some(attached), name).map_err(|e| e.to_string())?;
    }
    for name in state.prompts.keys() {
        if attached.prompts.iter().any(|p| p.name == name) {
            return Err(duplicate("prompt", name, "a #[prompt]").to_string());
        }
    }
    let uris = state
        .resources
        .keys()
        .chain(state.providers.values().flat_map(|p| p.items.keys()));
    for uri in uris {
        check_uri_free(&empty, Some(attached), uri, None).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// A provider's items, as it lists them now; two with one URI are an
/// error.
fn list_provider(
    provided: &Provided,
) -> Result<BTreeMap<String, Arc<RuntimeResourceEntry>>, CatalogError> {
    let mut items = BTreeMap::new();
    for resource in provided.provider.list() {
        let uri = resource.uri.clone();
        check_uri(&uri)?;
        let provider = provided.provider.clone();
        let entry = RuntimeResourceEntry {
            resource,
            read: Arc::new(move |uri, context| provider.read(uri, context)),
            cache: None,
            scopes: provided.scopes.clone(),
        };
        if items.insert(uri.clone(), Arc::new(entry)).is_some() {
            return Err(duplicate(
                "resource",
                &uri,
                &format!("provider `{}`", provided.name),
            ));
        }
    }
    Ok(items)
}
