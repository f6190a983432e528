//! Link-time registration of handlers and the sorted, validated index the
//! dispatcher serves from.
//!
//! Each `#[tool]` expansion adds one [`ToolEntry`] to the [`TOOLS`]
//! distributed slice. Slice order is link order, which nobody controls, so
//! [`Registry::build`] sorts by name and detects duplicates once at startup.

use std::collections::HashMap;
use std::fmt;

use linkme::distributed_slice;

use crate::protocol::{Icon, IconTheme, JsonObject, Tool, ToolAnnotations};
use crate::schema::{self, SchemaError};
use crate::tool::ToolCallFn;

/// Every `#[tool]` in the final binary, in link order.
#[distributed_slice]
pub static TOOLS: [ToolEntry];

/// Where a handler was defined, for startup diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// Source file, as `file!()` reports it.
    pub file: &'static str,
    /// Line of the function's name.
    pub line: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// An icon written in an attribute; turned into [`Icon`] at startup.
#[derive(Debug)]
pub struct StaticIcon {
    /// `https:` or `data:` URI (checked at compile time).
    pub src: &'static str,
    /// MIME type override.
    pub mime_type: Option<&'static str>,
    /// Sizes such as `48x48`.
    pub sizes: &'static [&'static str],
    /// Intended background.
    pub theme: Option<IconTheme>,
}

impl StaticIcon {
    fn to_icon(&self) -> Icon {
        let mut icon = Icon::new(self.src);
        icon.mime_type = self.mime_type.map(str::to_owned);
        icon.sizes = self.sizes.iter().map(|s| (*s).to_owned()).collect();
        icon.theme = self.theme;
        icon
    }
}

/// Tool annotations written in an attribute.
#[derive(Debug, Default)]
pub struct StaticToolAnnotations {
    /// `annotations(title = "...")`.
    pub title: Option<&'static str>,
    /// `annotations(read_only)`.
    pub read_only: Option<bool>,
    /// `annotations(destructive)`.
    pub destructive: Option<bool>,
    /// `annotations(idempotent)`.
    pub idempotent: Option<bool>,
    /// `annotations(open_world)`.
    pub open_world: Option<bool>,
}

impl StaticToolAnnotations {
    fn to_annotations(&self) -> Option<ToolAnnotations> {
        let annotations = ToolAnnotations {
            title: self.title.map(str::to_owned),
            read_only_hint: self.read_only,
            destructive_hint: self.destructive,
            idempotent_hint: self.idempotent,
            open_world_hint: self.open_world,
        };
        (!annotations.is_empty()).then_some(annotations)
    }
}

/// One `#[tool]` function, as the macro registers it.
///
/// Built only by generated code; not a stable API.
#[derive(Debug)]
pub struct ToolEntry {
    /// Wire name (checked at compile time).
    pub name: &'static str,
    /// `title = "..."`.
    pub title: Option<&'static str>,
    /// From doc comments or `description = "..."`.
    pub description: Option<&'static str>,
    /// `annotations(...)`.
    pub annotations: StaticToolAnnotations,
    /// `icon(...)` entries.
    pub icons: &'static [StaticIcon],
    /// `meta = "{...}"`: a JSON object checked at compile time.
    pub meta: Option<&'static str>,
    /// Schema of the generated arguments struct.
    pub input_schema: fn() -> schemars::Schema,
    /// Schema of `structuredContent`, from the return type.
    pub output_schema: fn() -> Option<schemars::Schema>,
    /// Deserializes the arguments and starts the call.
    pub call: ToolCallFn,
    /// Whether a context parameter lets the handler send log messages.
    pub can_log: bool,
    /// Definition site.
    pub location: Location,
}

/// A problem found while building the registry at startup.
#[derive(Debug)]
#[non_exhaustive]
pub enum BuildError {
    /// Two handlers share a name.
    Duplicate {
        /// `tool`, `resource`, `prompt`...
        kind: &'static str,
        /// The shared name.
        name: String,
        /// One definition site.
        first: Location,
        /// The other definition site.
        second: Location,
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
                "{kind} name `{name}` is defined twice: at {first} and at {second}; \
                 rename one of them (for example with `name = \"...\"`)"
            ),
            BuildError::Schema {
                name,
                location,
                error,
            } => write!(f, "tool `{name}` (at {location}): {error}"),
        }
    }
}

impl std::error::Error for BuildError {}

/// A registered tool with everything computed once at startup.
#[derive(Debug)]
pub(crate) struct RegisteredTool {
    pub(crate) entry: &'static ToolEntry,
    pub(crate) descriptor: Tool,
    /// Whether the input schema has required properties; a call without
    /// `arguments` is then malformed rather than `{}`.
    pub(crate) requires_arguments: bool,
}

/// The validated, name-sorted view of every registered handler.
#[derive(Debug)]
pub(crate) struct Registry {
    tools: Vec<RegisteredTool>,
    tool_index: HashMap<&'static str, usize>,
}

impl Registry {
    /// Builds the registry from everything linked into this binary.
    pub(crate) fn build() -> Result<Registry, BuildError> {
        Self::from_tools(TOOLS.iter().collect())
    }

    pub(crate) fn from_tools(mut entries: Vec<&'static ToolEntry>) -> Result<Registry, BuildError> {
        entries.sort_by(|a, b| a.name.cmp(b.name));
        check_unique("tool", &entries, |e| (e.name, e.location))?;
        let tools = entries
            .into_iter()
            .map(register_tool)
            .collect::<Result<Vec<_>, _>>()?;
        let tool_index = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.entry.name, i))
            .collect();
        Ok(Registry { tools, tool_index })
    }

    /// Tools sorted by name.
    pub(crate) fn tools(&self) -> &[RegisteredTool] {
        &self.tools
    }

    pub(crate) fn tool(&self, name: &str) -> Option<&RegisteredTool> {
        self.tool_index.get(name).map(|&i| &self.tools[i])
    }

    /// Whether any handler can send `notifications/message`.
    pub(crate) fn can_log(&self) -> bool {
        self.tools.iter().any(|t| t.entry.can_log)
    }
}

/// Reports the first pair of neighbours (in name order) sharing a name.
fn check_unique<T>(
    kind: &'static str,
    sorted: &[T],
    key: impl Fn(&T) -> (&'static str, Location),
) -> Result<(), BuildError> {
    for pair in sorted.windows(2) {
        let (a, first) = key(&pair[0]);
        let (b, second) = key(&pair[1]);
        if a == b {
            return Err(BuildError::Duplicate {
                kind,
                name: a.to_owned(),
                first,
                second,
            });
        }
    }
    Ok(())
}

fn register_tool(entry: &'static ToolEntry) -> Result<RegisteredTool, BuildError> {
    let schema_error = |error| BuildError::Schema {
        name: entry.name.to_owned(),
        location: entry.location,
        error,
    };
    let input_schema = schema::finish_input((entry.input_schema)()).map_err(schema_error)?;
    let output_schema = (entry.output_schema)().map(schema::finish_output);
    let requires_arguments = input_schema
        .get("required")
        .and_then(|r| r.as_array())
        .is_some_and(|r| !r.is_empty());
    let descriptor = Tool {
        name: entry.name.to_owned(),
        title: entry.title.map(str::to_owned),
        description: entry.description.map(str::to_owned),
        input_schema,
        output_schema,
        annotations: entry.annotations.to_annotations(),
        icons: entry.icons.iter().map(StaticIcon::to_icon).collect(),
        meta: entry.meta.map(parse_static_meta),
    };
    Ok(RegisteredTool {
        entry,
        descriptor,
        requires_arguments,
    })
}

/// Parses `_meta` JSON that the macro already validated at compile time.
fn parse_static_meta(json: &'static str) -> JsonObject {
    serde_json::from_str(json).unwrap_or_default()
}
