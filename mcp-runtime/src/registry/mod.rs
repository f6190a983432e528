//! Link-time registration of handlers and the sorted, validated index the
//! dispatcher serves from.
//!
//! Each `#[tool]`, `#[resource]` and `#[prompt]` expansion adds one entry to
//! a distributed slice. Slice order is link order, which nobody controls, so
//! [`Registry::build`] sorts everything and detects duplicates once, at
//! startup.

mod common;
#[cfg(feature = "schema-validation")]
mod input_check;
#[cfg(all(debug_assertions, feature = "debug-checks"))]
mod output_check;
mod prompt;
mod resource;
mod runtime;
mod select;
mod tool;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use linkme::distributed_slice;

use self::common::check_unique;
pub use self::common::{Location, StaticAnnotations, StaticIcon};
pub use self::prompt::{PromptEntry, StaticPromptArgument};
pub use self::resource::ResourceEntry;
pub(crate) use self::runtime::{
    PromptRef, ResourceRef, RuntimeItems, RuntimePromptEntry, RuntimePromptFn, RuntimeReadFn,
    RuntimeResourceEntry, SCOPE_NAMES, ToolRef, intern,
};
pub use self::select::Items;
pub(crate) use self::select::{ItemInfo, ItemKind};
pub use self::tool::{
    InputSchema, OutputSchema, StaticTaskSupport, StaticToolAnnotations, ToolEntry,
};
pub(crate) use self::tool::{
    Parts as ToolParts, RegisteredTool, RuntimeToolFn, repeat_has_effects,
};
use crate::complete::ArgumentCompleter;
use crate::schema::SchemaError;
use crate::state::{Requirement, RequirementKind, States};
use crate::uri_template::{self, TemplatePart};

/// Every `#[tool]` in the final binary, in link order.
#[distributed_slice]
pub static TOOLS: [ToolEntry];

/// Every `#[resource]` in the final binary, in link order.
#[distributed_slice]
pub static RESOURCES: [ResourceEntry];

/// Every `#[prompt]` in the final binary, in link order.
#[distributed_slice]
pub static PROMPTS: [PromptEntry];

/// A problem found while building the registry at startup.
#[derive(Debug)]
#[non_exhaustive]
pub enum BuildError {
    /// Two handlers share a name or URI.
    Duplicate {
        /// What is shared: `tool name`, `resource URI`...
        kind: &'static str,
        /// The shared name or URI.
        name: String,
        /// One definition site.
        first: Location,
        /// The other definition site.
        second: Location,
    },
    /// `MCP_STATE_KEY` or `MCP_STATE_VERIFY_KEYS` does not hold a key.
    StateKeys(String),
    /// A declared ask cannot be asked (for example, a form type that is
    /// not flat).
    Ask {
        /// The handler name.
        name: String,
        /// Definition site.
        location: Location,
        /// What is wrong.
        problem: String,
    },
    /// A generated schema breaks an MCP rule.
    Schema {
        /// The handler name.
        name: String,
        /// Definition site.
        location: Location,
        /// What is wrong.
        error: SchemaError,
    },
    /// An extension is malformed (its identifier, settings or a method
    /// name), collides with another, or a tool requires one the server
    /// does not offer.
    Extension(String),
    /// An item added to a runtime catalog before the server was built
    /// collides with a static one, or the catalog serves another server.
    Catalog(String),
    /// The shared backend could not be set up (for Redis, a URL that is
    /// not a Redis URL).
    SharedState(String),
    /// A handler takes an application state (`#[ctx] State<T>`) the
    /// server was not given.
    MissingState {
        /// `tool`, `resource` or `prompt`.
        kind: &'static str,
        /// The handler name.
        name: String,
        /// Definition site.
        location: Location,
        /// The state's type.
        state: &'static str,
        /// The states the server has.
        given: Vec<&'static str>,
    },
    /// The set of items to serve (`ServerBuilder::items`) names a group,
    /// module or item that is not linked.
    Items(String),
    /// The start-up hook failed, or the server has one and was built
    /// without running it.
    Startup(String),
    /// A plugin ([`ServerBuilder::with`](crate::ServerBuilder::with))
    /// could not install itself.
    Plugin {
        /// The plugin, as [`Plugin::name`](crate::plugin::Plugin::name)
        /// names it.
        plugin: String,
        /// Why, as it said.
        error: String,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Duplicate {
                kind,
                name,
                first,
                second,
            } => write!(
                f,
                "{kind} `{name}` is defined twice: at {first} and at {second}; \
                 rename one of them (for example with `name = \"...\"`)"
            ),
            BuildError::StateKeys(problem) => write!(f, "requestState keys: {problem}"),
            BuildError::Ask {
                name,
                location,
                problem,
            } => write!(f, "`{name}` (at {location}): {problem}"),
            BuildError::Schema {
                name,
                location,
                error,
            } => write!(f, "tool `{name}` (at {location}): {error}"),
            BuildError::Extension(problem) => write!(f, "extension: {problem}"),
            BuildError::Catalog(problem) => write!(f, "catalog: {problem}"),
            BuildError::SharedState(problem) => write!(f, "shared state: {problem}"),
            BuildError::MissingState {
                kind,
                name,
                location,
                state,
                given,
            } => {
                write!(
                    f,
                    "{kind} `{name}` (at {location}) takes the state `{state}`, which this server \
                     was not given; add it with `ServerBuilder::state(...)` or in the start-up hook"
                )?;
                match given.as_slice() {
                    [] => write!(f, " (it has no states)"),
                    given => write!(f, " (it has: {})", given.join(", ")),
                }
            }
            BuildError::Items(problem) => write!(f, "items: {problem}"),
            BuildError::Startup(problem) => write!(f, "start-up: {problem}"),
            BuildError::Plugin { plugin, error } => write!(f, "plugin {plugin}: {error}"),
        }
    }
}

impl std::error::Error for BuildError {}

/// The validated, sorted view of every registered handler.
#[derive(Debug)]
pub(crate) struct Registry {
    /// Shared: a runtime catalog lists them beside its own.
    tools: Vec<Arc<RegisteredTool>>,
    tool_index: Index,
    /// Static resources, sorted by URI.
    resources: Vec<&'static ResourceEntry>,
    resource_index: Index,
    /// Templates, most specific first (the order reads try them in).
    templates: Vec<(&'static ResourceEntry, &'static [TemplatePart])>,
    /// The same templates sorted by their text (the listing order).
    templates_by_text: Vec<&'static ResourceEntry>,
    /// Prompts, sorted by name.
    prompts: Vec<&'static PromptEntry>,
    prompt_index: Index,
}

impl Registry {
    /// Builds the registry from the items of `items` linked into this
    /// binary, each of whose states `states` must hold.
    pub(crate) fn build(items: &Items, states: &States) -> Result<Registry, BuildError> {
        if !items.is_all() {
            let linked: Vec<_> = (TOOLS.iter().map(ToolEntry::info))
                .chain(RESOURCES.iter().map(ResourceEntry::info))
                .chain(PROMPTS.iter().map(PromptEntry::info))
                .collect();
            items.check(&linked)?;
        }
        let tools: Vec<_> = TOOLS.iter().filter(|e| items.contains(&e.info())).collect();
        let resources: Vec<_> = (RESOURCES.iter())
            .filter(|e| items.contains(&e.info()))
            .collect();
        let prompts: Vec<_> = PROMPTS
            .iter()
            .filter(|e| items.contains(&e.info()))
            .collect();
        let needs = (tools.iter().map(|e| (e.info(), e.requires)))
            .chain(resources.iter().map(|e| (e.info(), e.requires)))
            .chain(prompts.iter().map(|e| (e.info(), e.requires)));
        for (item, needed) in needs {
            check_states(&item, needed, states)?;
        }
        Self::from_entries(tools, resources, prompts)
    }

    pub(crate) fn from_entries(
        mut tools: Vec<&'static ToolEntry>,
        resources: Vec<&'static ResourceEntry>,
        mut prompts: Vec<&'static PromptEntry>,
    ) -> Result<Registry, BuildError> {
        let declared = tools
            .iter()
            .map(|t| (t.name, t.location, t.asks))
            .chain(resources.iter().map(|r| (r.name, r.location, r.asks)))
            .chain(prompts.iter().map(|p| (p.name, p.location, p.asks)));
        for (name, location, asks) in declared {
            check_asks(name, location, asks)?;
        }
        tools.sort_by(|a, b| a.name.cmp(b.name));
        check_unique("tool name", &tools, |e| (e.name, e.location))?;
        let tools = tools
            .into_iter()
            .map(|entry| tool::register(entry).map(Arc::new))
            .collect::<Result<Vec<_>, _>>()?;

        let mut by_name = resources.clone();
        by_name.sort_by(|a, b| a.name.cmp(b.name));
        check_unique("resource name", &by_name, |e| (e.name, e.location))?;
        let (mut statics, mut templates): (Vec<_>, Vec<_>) =
            resources.into_iter().partition(|r| r.template.is_none());
        statics.sort_by(|a, b| a.uri.cmp(b.uri));
        check_unique("resource URI", &statics, |e| (e.uri, e.location))?;
        templates.sort_by(|a, b| a.uri.cmp(b.uri));
        check_unique("resource template", &templates, |e| (e.uri, e.location))?;
        let templates_by_text = templates.clone();
        let mut templates: Vec<_> = templates
            .into_iter()
            .filter_map(|e| e.template.map(|parts| (e, parts)))
            .collect();
        templates.sort_by_key(|(e, parts)| uri_template::specificity(e.uri, parts));

        prompts.sort_by(|a, b| a.name.cmp(b.name));
        check_unique("prompt name", &prompts, |e| (e.name, e.location))?;

        Ok(Registry {
            tool_index: index(&tools, |t| t.entry().map_or("", |e| e.name)),
            tools,
            resource_index: index(&statics, |r| r.uri),
            resources: statics,
            templates,
            templates_by_text,
            prompt_index: index(&prompts, |p| p.name),
            prompts,
        })
    }

    /// Tools sorted by name.
    pub(crate) fn tools(&self) -> &[Arc<RegisteredTool>] {
        &self.tools
    }

    pub(crate) fn tool(&self, name: &str) -> Option<&RegisteredTool> {
        self.tool_index.get(name).map(|&i| &*self.tools[i])
    }

    /// Static resources sorted by URI.
    pub(crate) fn resources(&self) -> &[&'static ResourceEntry] {
        &self.resources
    }

    pub(crate) fn resource(&self, uri: &str) -> Option<&'static ResourceEntry> {
        self.resource_index.get(uri).map(|&i| self.resources[i])
    }

    /// Templates, most specific first.
    pub(crate) fn templates(&self) -> &[(&'static ResourceEntry, &'static [TemplatePart])] {
        &self.templates
    }

    /// Templates sorted by their template text (the listing order).
    pub(crate) fn templates_by_text(&self) -> &[&'static ResourceEntry] {
        &self.templates_by_text
    }

    pub(crate) fn has_resources(&self) -> bool {
        !self.resources.is_empty() || !self.templates.is_empty()
    }

    /// Prompts sorted by name.
    pub(crate) fn prompts(&self) -> &[&'static PromptEntry] {
        &self.prompts
    }

    pub(crate) fn prompt(&self, name: &str) -> Option<&'static PromptEntry> {
        self.prompt_index.get(name).map(|&i| self.prompts[i])
    }

    /// Whether any prompt argument or template variable has a completer.
    pub(crate) fn has_completers(&self) -> bool {
        self.prompts.iter().any(|p| !p.completers.is_empty())
            || self.templates.iter().any(|(e, _)| !e.completers.is_empty())
    }

    /// Whether any handler can send `notifications/message`.
    pub(crate) fn can_log(&self) -> bool {
        self.tools.iter().any(|t| t.can_log())
            || self.resources.iter().any(|r| r.can_log)
            || self.templates.iter().any(|(r, _)| r.can_log)
            || self.prompts.iter().any(|p| p.can_log)
    }
}

/// Every state a handler's parameters read must have been given.
fn check_states(
    item: &ItemInfo<'_>,
    needed: &[&[Requirement]],
    states: &States,
) -> Result<(), BuildError> {
    let missing = needed
        .iter()
        .flat_map(|n| n.iter())
        .filter(|t| t.kind() == RequirementKind::State)
        .find(|t| !states.has(t));
    match missing {
        None => Ok(()),
        Some(state) => Err(BuildError::MissingState {
            kind: item.kind.noun(),
            name: item.name.to_owned(),
            location: item.location,
            state: state.name(),
            given: states.names(),
        }),
    }
}

impl ToolEntry {
    pub(crate) fn info(&self) -> ItemInfo<'static> {
        ItemInfo {
            kind: ItemKind::Tool,
            name: self.name,
            uri: None,
            group: self.group,
            location: self.location,
        }
    }
}

impl ResourceEntry {
    pub(crate) fn info(&self) -> ItemInfo<'static> {
        ItemInfo {
            kind: ItemKind::Resource,
            name: self.name,
            uri: Some(self.uri),
            group: self.group,
            location: self.location,
        }
    }
}

impl PromptEntry {
    pub(crate) fn info(&self) -> ItemInfo<'static> {
        ItemInfo {
            kind: ItemKind::Prompt,
            name: self.name,
            uri: None,
            group: self.group,
            location: self.location,
        }
    }
}

/// Every declared ask must be askable: a form type must be flat.
fn check_asks(
    name: &str,
    location: Location,
    asks: &[crate::mrtr::declared::DeclaredAsk],
) -> Result<(), BuildError> {
    for ask in asks {
        (ask.check)().map_err(|problem| BuildError::Ask {
            name: name.to_owned(),
            location,
            problem: format!(
                "`#[{}]` parameter `{}`: {problem}",
                ask.kind.attribute(),
                ask.key
            ),
        })?;
    }
    Ok(())
}

/// Position by name. The keys are fixed at startup, so a request's name
/// cannot grow a chain: a fast hasher is safe here, and it is on every
/// call's path.
type Index = HashMap<&'static str, usize, foldhash::fast::RandomState>;

fn index<T>(items: &[T], key: impl Fn(&T) -> &'static str) -> Index {
    let mut index = Index::with_capacity_and_hasher(items.len(), Default::default());
    index.extend(items.iter().enumerate().map(|(i, t)| (key(t), i)));
    index
}

/// Finds the completer for `argument` among `completers`.
pub(crate) fn completer<'a>(
    completers: &'a [ArgumentCompleter],
    argument: &str,
) -> Option<&'a ArgumentCompleter> {
    completers.iter().find(|c| c.argument == argument)
}
