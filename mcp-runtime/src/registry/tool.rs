//! Registered tools.

use std::sync::OnceLock;

use super::BuildError;
use super::common::{Location, StaticIcon, icons, parse_static_meta};
use crate::mrtr::state::StatePolicy;
use crate::protocol::{Tool, ToolAnnotations};
use crate::schema;
use crate::tool::ToolCallFn;

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

    /// Whether calling the tool again, with the same arguments, could
    /// change its environment again or destroy something: what the spec's
    /// hints say, read with their defaults (a tool that is not
    /// `readOnlyHint` is `destructiveHint` and not `idempotentHint` unless
    /// it says otherwise). Only a read-only tool, or one declared both
    /// non-destructive and idempotent, is safe to repeat. The macros'
    /// `replayable_state` check (`check::tool`) mirrors this rule.
    pub(crate) fn repeat_has_effects(&self) -> bool {
        !self.read_only.unwrap_or(false)
            && (self.destructive.unwrap_or(true) || !self.idempotent.unwrap_or(false))
    }
}

/// `#[tool(task(...))]`: how a tool runs as a task (the Tasks extension).
///
/// Built only by generated code; not a stable API.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StaticTaskSupport {
    /// `task(required)`: a client that did not negotiate the extension gets
    /// `-32021` instead of a synchronous call.
    pub required: bool,
    /// `task(answer_within_ms = N)`: a call that finishes within `N` ms is
    /// answered directly, without a task (0: always a task).
    pub answer_within_ms: u64,
    /// `task(ttl_ms = N)`: how long its tasks are kept.
    pub ttl_ms: Option<u64>,
    /// `task(poll_interval_ms = N)`: how often clients should poll.
    pub poll_interval_ms: Option<u64>,
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
    /// The arguments' schema: generated, or given with `input_schema = f`.
    pub input_schema: InputSchema,
    /// Schema of `structuredContent`, from the return type.
    pub output_schema: fn() -> Option<schemars::Schema>,
    /// Deserializes the arguments and starts the call.
    pub call: ToolCallFn,
    /// Asks declared on parameters (`#[elicit]`, `#[sample]`, ...).
    pub asks: &'static [crate::mrtr::declared::DeclaredAsk],
    /// Whether a context parameter lets the handler send log messages.
    pub can_log: bool,
    /// `scopes = [...]`: OAuth scopes a caller needs (checked at compile
    /// time against RFC 6749 scope-token syntax).
    pub scopes: &'static [&'static str],
    /// `requires_extension = "..."`: extensions the client must have
    /// negotiated to call the tool (checked at startup against the
    /// server's extensions).
    pub extensions: &'static [&'static str],
    /// `replayable_state`: its `requestState` may be used more than once,
    /// even though the annotations say a repeat could change things.
    pub replayable_state: bool,
    /// `task` or `task(...)`: runs as a task for clients that negotiated
    /// the Tasks extension.
    pub task: Option<StaticTaskSupport>,
    /// Definition site.
    pub location: Location,
}

impl ToolEntry {
    /// How the tool's `requestState` may be used. A tool a repeat could
    /// change things with gets states that open once (unless
    /// `replayable_state`), and answers that count only with the state of
    /// the round that asked them, so that its questions cannot be skipped
    /// by answering them up front.
    pub(crate) fn state_policy(&self) -> StatePolicy {
        let effects = self.annotations.repeat_has_effects();
        StatePolicy {
            single_use: effects && !self.replayable_state,
            bound_answers: effects,
        }
    }
}

/// A registered tool with everything computed once at startup.
#[derive(Debug)]
pub(crate) struct RegisteredTool {
    pub(crate) entry: &'static ToolEntry,
    /// Whether the input schema has required properties; a call without
    /// `arguments` is then malformed rather than `{}`.
    pub(crate) requires_arguments: bool,
    /// Parameters mirrored into `Mcp-Param-*` headers on HTTP.
    pub(crate) header_params: Vec<schema::HeaderParam>,
    /// How its `requestState` may be used.
    pub(crate) state: StatePolicy,
    /// Debug builds: its output schema, compiled to check results with.
    #[cfg(all(debug_assertions, feature = "debug-checks"))]
    output_check: super::output_check::OutputCheck,
    /// The tool as listed, once a list has needed it.
    descriptor: OnceLock<Tool>,
}

impl RegisteredTool {
    /// The tool as `tools/list` shows it.
    ///
    /// Startup builds every descriptor to check it and then drops the ones
    /// it can build again: their schema trees are most of a registry's
    /// memory (a few KiB a tool), and faulting that memory in was about a
    /// quarter of the startup time of a server with 10,000 tools. A list builds
    /// them again on first use, from the same generated code.
    pub(crate) fn descriptor(&self) -> &Tool {
        self.descriptor.get_or_init(|| {
            describe(self.entry).expect("the same schema was built and checked at startup")
        })
    }

    /// Debug builds: where `structured` does not fit the tool's
    /// `outputSchema`, if it does not.
    #[cfg(all(debug_assertions, feature = "debug-checks"))]
    pub(crate) fn output_mismatch(
        &self,
        structured: &serde_json::Value,
    ) -> Option<super::output_check::Mismatch> {
        let schema = || {
            let schema = self.descriptor().output_schema.clone()?;
            Some(serde_json::Value::Object(schema))
        };
        self.output_check.mismatch(schema, structured)
    }
}

/// Where a tool's input schema comes from.
#[derive(Clone, Copy, Debug)]
pub enum InputSchema {
    /// Generated from the parameters, with the MCP rules applied.
    Generated(fn() -> schemars::Schema),
    /// Written by hand (`#[tool(input_schema = f)]`) and published as is.
    Raw(fn() -> serde_json::Value),
}

pub(super) fn register(entry: &'static ToolEntry) -> Result<RegisteredTool, BuildError> {
    let descriptor = describe(entry)?;
    let input_schema = &descriptor.input_schema;
    let header_params = schema::header_params(input_schema).map_err(schema_error(entry))?;
    let requires_arguments = input_schema
        .get("required")
        .and_then(|r| r.as_array())
        .is_some_and(|r| !r.is_empty());
    // A hand-written schema is kept: its function runs once, so what is
    // published is what was checked.
    let kept = OnceLock::new();
    if let InputSchema::Raw(_) = entry.input_schema {
        let _ = kept.set(descriptor);
    }
    Ok(RegisteredTool {
        entry,
        requires_arguments,
        header_params,
        state: entry.state_policy(),
        #[cfg(all(debug_assertions, feature = "debug-checks"))]
        output_check: Default::default(),
        descriptor: kept,
    })
}

fn schema_error(entry: &'static ToolEntry) -> impl FnOnce(schema::SchemaError) -> BuildError {
    |error| BuildError::Schema {
        name: entry.name.to_owned(),
        location: entry.location,
        error,
    }
}

/// Builds the tool's descriptor, applying and checking the schema rules.
fn describe(entry: &'static ToolEntry) -> Result<Tool, BuildError> {
    let input_schema = match entry.input_schema {
        InputSchema::Generated(generate) => schema::finish_input(generate()),
        InputSchema::Raw(write) => schema::check_raw_input(write()),
    }
    .map_err(schema_error(entry))?;
    Ok(Tool {
        name: entry.name.to_owned(),
        title: entry.title.map(str::to_owned),
        description: entry.description.map(str::to_owned),
        input_schema,
        output_schema: (entry.output_schema)().map(schema::finish_output),
        annotations: entry.annotations.to_annotations(),
        icons: icons(entry.icons),
        meta: entry.meta.map(parse_static_meta),
    })
}
