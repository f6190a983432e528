//! The dispatcher's view of items added while the server runs (the
//! `catalog` module's `Catalog`), and the one kind of reference it serves
//! a static or a runtime item through.
//!
//! The dispatcher knows runtime items only through [`RuntimeItems`], a
//! trait object the server installs when it is given a catalog: a server
//! without one compiles none of the catalog's code, and one with an empty
//! catalog answers lists from the static pages as before.

use std::collections::HashSet;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use super::{PromptEntry, RegisteredTool, ResourceEntry};
use crate::context::Context;
use crate::prompt::{PromptError, PromptFuture, PromptInvocation};
use crate::protocol::method::Method;
use crate::protocol::{CacheHint, ErrorObject, Prompt, Resource};
use crate::resource::ResourceFuture;
use crate::security::Principal;

/// What the dispatcher asks of runtime items.
pub(crate) trait RuntimeItems: Send + Sync + fmt::Debug {
    /// The runtime tool named `name`.
    fn tool(&self, name: &str) -> Option<Arc<RegisteredTool>>;
    /// The runtime prompt named `name`.
    fn prompt(&self, name: &str) -> Option<Arc<RuntimePromptEntry>>;
    /// The runtime resource (or provider item) at `uri`.
    fn resource(&self, uri: &str) -> Option<Arc<RuntimeResourceEntry>>;
    /// The page of a merged list (static and runtime items together), or
    /// `None` when there are no runtime items of that kind (the static
    /// pages are then the answer). `filter`: only what that caller may use.
    fn list(
        &self,
        method: Method,
        cursor: Option<&str>,
        filter: Option<&Principal>,
    ) -> Option<Result<Bytes, ErrorObject>>;
    /// Every scope runtime items declare (for the authorization metadata
    /// of a server that starts with some).
    fn scopes(&self) -> Vec<&'static str>;
}

/// A prompt added at run time.
pub(crate) struct RuntimePromptEntry {
    pub(crate) prompt: Prompt,
    pub(crate) get: RuntimePromptFn,
    pub(crate) scopes: Box<[&'static str]>,
}

/// A runtime prompt's handler.
pub(crate) type RuntimePromptFn =
    Arc<dyn Fn(PromptInvocation<'_>) -> Result<PromptFuture, PromptError> + Send + Sync>;

/// A resource added at run time, alone or as one of a provider's.
pub(crate) struct RuntimeResourceEntry {
    pub(crate) resource: Resource,
    pub(crate) read: RuntimeReadFn,
    pub(crate) cache: Option<CacheHint>,
    pub(crate) scopes: Box<[&'static str]>,
}

/// A runtime resource's reader: the URI and the request's context.
pub(crate) type RuntimeReadFn = Arc<dyn Fn(&str, Context) -> ResourceFuture + Send + Sync>;

impl fmt::Debug for RuntimePromptEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RuntimePromptEntry({})", self.prompt.name)
    }
}

impl fmt::Debug for RuntimeResourceEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RuntimeResourceEntry({})", self.resource.uri)
    }
}

/// A tool, static or runtime: what `tools/call` looks up and runs.
#[derive(Debug)]
pub(crate) enum ToolRef<'a> {
    Static(&'a RegisteredTool),
    Runtime(Arc<RegisteredTool>),
}

impl Deref for ToolRef<'_> {
    type Target = RegisteredTool;
    fn deref(&self) -> &RegisteredTool {
        match self {
            ToolRef::Static(tool) => tool,
            ToolRef::Runtime(tool) => tool,
        }
    }
}

/// A prompt, static or runtime.
#[derive(Debug, Clone)]
pub(crate) enum PromptRef {
    Static(&'static PromptEntry),
    Runtime(Arc<RuntimePromptEntry>),
}

impl PromptRef {
    /// What its `#[ctx]` parameters need (nothing for a runtime prompt).
    pub(crate) fn requires(&self) -> &'static [&'static [crate::state::Requirement]] {
        match self {
            PromptRef::Static(entry) => entry.requires,
            PromptRef::Runtime(_) => &[],
        }
    }

    pub(crate) fn name(&self) -> &str {
        match self {
            PromptRef::Static(entry) => entry.name,
            PromptRef::Runtime(entry) => &entry.prompt.name,
        }
    }

    /// Its arguments' names, and whether each is required.
    pub(crate) fn arguments(&self) -> Vec<(&str, bool)> {
        match self {
            PromptRef::Static(entry) => entry
                .arguments
                .iter()
                .map(|a| (a.name, a.required))
                .collect(),
            PromptRef::Runtime(entry) => entry
                .prompt
                .arguments
                .iter()
                .map(|a| (a.name.as_str(), a.required))
                .collect(),
        }
    }

    pub(crate) fn scopes(&self) -> &[&'static str] {
        match self {
            PromptRef::Static(entry) => entry.scopes,
            PromptRef::Runtime(entry) => &entry.scopes,
        }
    }

    /// Parses the arguments and starts rendering.
    pub(crate) fn start(
        &self,
        invocation: PromptInvocation<'_>,
    ) -> Result<PromptFuture, PromptError> {
        match self {
            PromptRef::Static(entry) => (entry.get)(invocation),
            PromptRef::Runtime(entry) => (entry.get)(invocation),
        }
    }

    /// The `#[prompt]` it was generated from.
    pub(crate) fn entry(&self) -> Option<&'static PromptEntry> {
        match self {
            PromptRef::Static(entry) => Some(entry),
            PromptRef::Runtime(_) => None,
        }
    }
}

/// What serves a resource read: a `#[resource]` (with the template's
/// variables) or a runtime resource.
#[derive(Debug)]
pub(crate) enum ResourceRef {
    Static(&'static ResourceEntry, Vec<(&'static str, String)>),
    Runtime(Arc<RuntimeResourceEntry>),
}

impl ResourceRef {
    /// What its `#[ctx]` parameters need (nothing for a runtime resource).
    pub(crate) fn requires(&self) -> &'static [&'static [crate::state::Requirement]] {
        match self {
            ResourceRef::Static(entry, _) => entry.requires,
            ResourceRef::Runtime(_) => &[],
        }
    }
}

impl ResourceRef {
    pub(crate) fn name(&self) -> &str {
        match self {
            ResourceRef::Static(entry, _) => entry.name,
            ResourceRef::Runtime(entry) => &entry.resource.name,
        }
    }

    pub(crate) fn mime_type(&self) -> Option<&str> {
        match self {
            ResourceRef::Static(entry, _) => entry.mime_type,
            ResourceRef::Runtime(entry) => entry.resource.mime_type.as_deref(),
        }
    }

    pub(crate) fn cache(&self) -> Option<CacheHint> {
        match self {
            ResourceRef::Static(entry, _) => entry.cache,
            ResourceRef::Runtime(entry) => entry.cache,
        }
    }
}

/// How many distinct runtime scope names a process keeps, and their bytes.
pub(crate) const SCOPE_NAMES: (usize, usize) = (4096, 256 * 1024);

/// A runtime scope name as `&'static str`, or `None` once the process
/// holds [`SCOPE_NAMES`] distinct ones.
///
/// Why process-wide, and why leaked: scopes are `&'static str` everywhere
/// the authorization layer reads them, and in the public
/// [`Invocation::scopes`](crate::middleware::Invocation::scopes), so that a
/// tool call copies pointers, not strings. A `&'static str` outlives every
/// server by definition, so no server could own the set and free it. It
/// holds names only (the same text means the same scope to any server), so
/// sharing it leaks nothing between servers. What must not happen is that
/// it grows without end (a catalog fed scope names from outside): hence
/// the bound, past which a new name is refused as the catalog item that
/// brings it, while names already held are still served.
pub(crate) fn intern(scope: &str) -> Option<&'static str> {
    static NAMES: Mutex<ScopeNames> = Mutex::new(ScopeNames::new(SCOPE_NAMES));
    let mut names = NAMES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    names.intern(scope)
}

/// Interned names under a bound: how many, and how many bytes.
#[derive(Debug)]
struct ScopeNames {
    names: Option<HashSet<&'static str>>,
    bytes: usize,
    bound: (usize, usize),
}

impl ScopeNames {
    const fn new(bound: (usize, usize)) -> ScopeNames {
        ScopeNames {
            names: None,
            bytes: 0,
            bound,
        }
    }

    fn intern(&mut self, scope: &str) -> Option<&'static str> {
        let names = self.names.get_or_insert_with(HashSet::new);
        if let Some(name) = names.get(scope) {
            return Some(name);
        }
        let (count, bytes) = self.bound;
        if names.len() >= count || self.bytes + scope.len() > bytes {
            return None;
        }
        let name: &'static str = Box::leak(scope.to_owned().into_boxed_str());
        self.bytes += name.len();
        names.insert(name);
        Some(name)
    }
}

#[cfg(test)]
mod tests {
    use super::ScopeNames;

    #[test]
    fn scope_names_are_interned_once_and_bounded() {
        let mut names = ScopeNames::new((2, 64));
        let read = names.intern("files:read").unwrap();
        assert!(std::ptr::eq(read, names.intern("files:read").unwrap()));
        assert_eq!(names.intern("files:write"), Some("files:write"));
        // A third distinct name is one too many; those held still are.
        assert_eq!(names.intern("admin"), None);
        assert_eq!(names.intern("files:write"), Some("files:write"));
        let mut small = ScopeNames::new((10, 12));
        assert_eq!(small.intern("files:read"), Some("files:read"));
        assert_eq!(small.intern("abc"), None, "10 + 3 bytes is over 12");
        assert_eq!(small.intern("ab"), Some("ab"));
    }
}
