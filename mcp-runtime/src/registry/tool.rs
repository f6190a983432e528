//! Registered tools.

use std::sync::OnceLock;

use super::BuildError;
use super::common::{Location, StaticIcon, icons, parse_static_meta};
use crate::mrtr::state::StatePolicy;
use crate::protocol::json::ArgumentError;
use crate::protocol::{Tool, ToolAnnotations};
use crate::schema;
use crate::tool::{ToolCallFn, ToolFuture, ToolInvocation};

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
    pub(crate) fn to_annotations(&self) -> Option<ToolAnnotations> {
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
        repeat_has_effects(self.read_only, self.destructive, self.idempotent)
    }
}

/// `#[tool(task(...))]`: how a tool runs as a task (the Tasks extension).
///
/// Built only by generated code; not a stable API.
#[derive(Clone, Copy, Debug)]
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

/// The rule of [`StaticToolAnnotations::repeat_has_effects`], for any
/// tool's hints.
pub(crate) fn repeat_has_effects(
    read_only: Option<bool>,
    destructive: Option<bool>,
    idempotent: Option<bool>,
) -> bool {
    !read_only.unwrap_or(false) && (destructive.unwrap_or(true) || !idempotent.unwrap_or(false))
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
    /// Schema of `structuredContent`: from the return type, or given with
    /// `output_schema = f`.
    pub output_schema: OutputSchema,
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
    /// `group = "..."`: the group a server selects it by
    /// ([`Items::group`](crate::Items::group)).
    pub group: Option<&'static str>,
    /// What its `#[ctx]` parameters need (one list per parameter):
    /// states, checked when the server is built, and request extensions,
    /// checked before each call.
    pub requires: &'static [&'static [crate::state::Requirement]],
    /// `layer = ...`: the item's own layer, inside the server's
    /// ([`middleware`](crate::middleware)).
    pub layer: Option<fn() -> crate::middleware::ItemLayer>,
    /// `timeout_ms = ...`: how long one invocation may run; past it the
    /// handler is dropped and the request answered with `-31002`.
    pub timeout_ms: Option<u64>,
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

/// A registered tool with everything computed once: a `#[tool]` at
/// startup, or a tool added at run time (`RuntimeTool`) when it is added.
/// Both are looked up, listed and called as this one kind of thing.
#[derive(Debug)]
pub(crate) struct RegisteredTool {
    source: ToolSource,
    /// Whether the input schema has required properties; a call without
    /// `arguments` is then malformed rather than `{}`.
    pub(crate) requires_arguments: bool,
    /// Parameters mirrored into `Mcp-Param-*` headers on HTTP.
    pub(crate) header_params: Vec<schema::HeaderParam>,
    /// How its `requestState` may be used.
    pub(crate) state: StatePolicy,
    /// A hand-written input schema, compiled to check every call with.
    #[cfg(feature = "schema-validation")]
    input_check: Option<super::input_check::InputCheck>,
    /// Debug builds: its output schema, compiled to check results with.
    #[cfg(all(debug_assertions, feature = "debug-checks"))]
    output_check: super::output_check::OutputCheck,
    /// The tool as listed, once a list has needed it.
    descriptor: OnceLock<Tool>,
}

/// Where a tool comes from.
enum ToolSource {
    /// A `#[tool]` function.
    Static(&'static ToolEntry),
    /// A tool added while the server runs.
    Runtime(Box<RuntimeCall>),
}

impl std::fmt::Debug for ToolSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolSource::Static(entry) => write!(f, "Static({})", entry.name),
            ToolSource::Runtime(_) => f.write_str("Runtime"),
        }
    }
}

/// What a runtime tool brings instead of a `ToolEntry`: its handler and
/// the lists a static tool has as `&'static` slices (scope and extension
/// names are interned, see `common::intern`).
pub(crate) struct RuntimeCall {
    pub(crate) call: RuntimeToolFn,
    pub(crate) scopes: Box<[&'static str]>,
}

/// A runtime tool's handler: parses the arguments and starts the call.
pub(crate) type RuntimeToolFn =
    std::sync::Arc<dyn Fn(ToolInvocation<'_>) -> Result<ToolFuture, ArgumentError> + Send + Sync>;

impl RegisteredTool {
    /// What its `#[ctx]` parameters need (nothing for a runtime tool).
    pub(crate) fn requires(&self) -> &'static [&'static [crate::state::Requirement]] {
        self.entry().map_or(&[], |entry| entry.requires)
    }

    /// The wire name.
    pub(crate) fn name(&self) -> &str {
        match &self.source {
            ToolSource::Static(entry) => entry.name,
            ToolSource::Runtime(_) => &self.descriptor().name,
        }
    }

    /// OAuth scopes a caller needs.
    pub(crate) fn scopes(&self) -> &[&'static str] {
        match &self.source {
            ToolSource::Static(entry) => entry.scopes,
            ToolSource::Runtime(runtime) => &runtime.scopes,
        }
    }

    /// Extensions the client must have negotiated to call it.
    pub(crate) fn extensions(&self) -> &'static [&'static str] {
        match &self.source {
            ToolSource::Static(entry) => entry.extensions,
            ToolSource::Runtime(_) => &[],
        }
    }

    /// Whether it can send log messages (runtime handlers get the whole
    /// `Context`, so they can).
    pub(crate) fn can_log(&self) -> bool {
        match &self.source {
            ToolSource::Static(entry) => entry.can_log,
            ToolSource::Runtime(_) => true,
        }
    }

    /// The `#[tool]` it was generated from; `None` for a runtime tool.
    pub(crate) fn entry(&self) -> Option<&'static ToolEntry> {
        match &self.source {
            ToolSource::Static(entry) => Some(entry),
            ToolSource::Runtime(_) => None,
        }
    }

    /// Checks the arguments against a hand-written input schema (with the
    /// `schema-validation` feature; nothing to check otherwise).
    pub(crate) fn check_input(&self, arguments: &str) -> Result<(), ArgumentError> {
        #[cfg(feature = "schema-validation")]
        if let Some(check) = &self.input_check {
            check.check(arguments)?;
        }
        let _ = arguments;
        Ok(())
    }

    /// Checks the arguments against a hand-written input schema, parses
    /// them and starts the call.
    pub(crate) fn start(
        &self,
        invocation: ToolInvocation<'_>,
    ) -> Result<ToolFuture, ArgumentError> {
        #[cfg(feature = "schema-validation")]
        if let Some(check) = &self.input_check {
            check.check(invocation.arguments)?;
        }
        match &self.source {
            ToolSource::Static(entry) => (entry.call)(invocation),
            ToolSource::Runtime(runtime) => (runtime.call)(invocation),
        }
    }

    /// The tool as `tools/list` shows it.
    ///
    /// Startup builds every descriptor to check it and then drops the ones
    /// it can build again: their schema trees are most of a registry's
    /// memory (a few KiB a tool), and faulting that memory in was about a
    /// quarter of the startup time of a server with 10,000 tools. A list builds
    /// them again on first use, from the same generated code. Hand-written
    /// schemas and runtime tools keep theirs.
    pub(crate) fn descriptor(&self) -> &Tool {
        self.descriptor.get_or_init(|| match &self.source {
            ToolSource::Static(entry) => {
                describe(entry).expect("the same schema was built and checked at startup")
            }
            ToolSource::Runtime(_) => unreachable!("a runtime tool keeps its descriptor"),
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

/// Where a tool's output schema comes from.
#[derive(Clone, Copy, Debug)]
pub enum OutputSchema {
    /// Implied by the return type (`Json<T>`, `Structured<T>`), if any.
    Generated(fn() -> Option<schemars::Schema>),
    /// Written by hand (`#[tool(output_schema = f)]`) and published as is.
    Raw(fn() -> serde_json::Value),
}

pub(super) fn register(entry: &'static ToolEntry) -> Result<RegisteredTool, BuildError> {
    let descriptor = describe(entry)?;
    // A hand-written schema is kept: its function runs once, so what is
    // published (and enforced) is what was checked.
    let keep = matches!(entry.input_schema, InputSchema::Raw(_));
    let state = entry.state_policy();
    let parts = Parts {
        source: ToolSource::Static(entry),
        descriptor,
        state,
        hand_written: keep,
        keep,
    };
    parts.finish().map_err(schema_error(entry))
}

/// What a tool is registered from, static or runtime.
pub(crate) struct Parts {
    source: ToolSource,
    descriptor: Tool,
    state: StatePolicy,
    /// Whether the input schema is hand-written (then enforced).
    hand_written: bool,
    /// Whether the descriptor is kept rather than built again on use.
    keep: bool,
}

impl Parts {
    /// A runtime tool's parts: its descriptor (schemas checked), handler
    /// and scopes.
    pub(crate) fn runtime(
        descriptor: Tool,
        call: RuntimeToolFn,
        scopes: Box<[&'static str]>,
        state: StatePolicy,
        hand_written: bool,
    ) -> Parts {
        Parts {
            source: ToolSource::Runtime(Box::new(RuntimeCall { call, scopes })),
            descriptor,
            state,
            hand_written,
            keep: true,
        }
    }

    /// Computes what every call needs once: header parameters, whether
    /// arguments are required, the compiled hand-written schema.
    pub(crate) fn finish(self) -> Result<RegisteredTool, schema::SchemaError> {
        let input_schema = &self.descriptor.input_schema;
        let header_params = schema::header_params(input_schema)?;
        let requires_arguments = input_schema
            .get("required")
            .and_then(|r| r.as_array())
            .is_some_and(|r| !r.is_empty());
        #[cfg(feature = "schema-validation")]
        let input_check = match self.hand_written {
            true => Some(super::input_check::InputCheck::compile(
                &serde_json::Value::Object(input_schema.clone()),
            )?),
            false => None,
        };
        // The macro and `RuntimeTool::with_schema` need the feature too;
        // a schema that would be published and not enforced never starts.
        #[cfg(not(feature = "schema-validation"))]
        if self.hand_written {
            return Err(schema::SchemaError::Invalid(
                "a hand-written input schema is enforced with the `schema-validation` feature of mcp-runtime, which is off".into(),
            ));
        }
        let descriptor = OnceLock::new();
        if self.keep {
            let _ = descriptor.set(self.descriptor);
        }
        Ok(RegisteredTool {
            source: self.source,
            requires_arguments,
            header_params,
            state: self.state,
            #[cfg(feature = "schema-validation")]
            input_check,
            #[cfg(all(debug_assertions, feature = "debug-checks"))]
            output_check: Default::default(),
            descriptor,
        })
    }
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
        output_schema: match entry.output_schema {
            OutputSchema::Generated(generate) => generate().map(schema::finish_output),
            OutputSchema::Raw(write) => Some(schema::check_raw_output(write())),
        }
        .transpose()
        .map_err(schema_error(entry))?,
        annotations: entry.annotations.to_annotations(),
        icons: icons(entry.icons),
        meta: entry.meta.map(parse_static_meta),
    })
}
