//! What can be added to a [`Catalog`](super::Catalog): tools, prompts,
//! resources and resource providers, each with a name, a description, a
//! schema (generated from a type or written by hand) and a handler that
//! gets the same [`Context`] as a `#[tool]`.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::Context;
use crate::prompt::{IntoPromptResult, PromptError, PromptInvocation};
use crate::protocol::json::parse_arguments;
use crate::protocol::{
    CacheHint, Icon, JsonObject, Prompt, PromptArgument, Resource, Tool, ToolAnnotations,
};
use crate::registry::{RuntimePromptFn, RuntimeReadFn, RuntimeToolFn};
use crate::resource::{IntoResourceContents, ResourceFuture};
use crate::schema::{self, SchemaError};
use crate::tool::{IntoToolResult, ToolFuture, ToolInvocation};

/// The arguments of a runtime tool that takes none: `{}` and nothing else.
#[derive(Debug, Default, Clone, Copy, serde::Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArguments {}

/// A tool added while the server runs.
///
/// ```
/// use mcp_runtime::catalog::RuntimeTool;
/// use mcp_runtime::protocol::ToolAnnotations;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Forecast {
///     /// The city.
///     city: String,
/// }
///
/// let tool = RuntimeTool::new("forecast", |args: Forecast, _ctx| async move {
///     format!("sunny in {}", args.city)
/// })
/// .description("Tomorrow's weather")
/// .annotations(ToolAnnotations::new().read_only(true));
/// ```
pub struct RuntimeTool {
    pub(crate) descriptor: Tool,
    pub(crate) call: RuntimeToolFn,
    pub(crate) scopes: Vec<String>,
    pub(crate) hand_written: bool,
    pub(crate) replayable_state: bool,
    /// A schema that broke a rule, reported when the tool is added.
    pub(crate) problem: Option<SchemaError>,
}

impl std::fmt::Debug for RuntimeTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeTool")
            .field("descriptor", &self.descriptor)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl RuntimeTool {
    /// A tool whose arguments are `A` (its `inputSchema` generated from
    /// `A`, with the MCP rules applied, as for a `#[tool]`), answered by
    /// `handler`. Arguments that do not deserialize into `A` are a tool
    /// error naming the field; `R` is anything a `#[tool]` may return
    /// (`Json<T>` gives an `outputSchema`).
    pub fn new<A, F, Fut, R>(name: impl Into<String>, handler: F) -> RuntimeTool
    where
        A: DeserializeOwned + JsonSchema + 'static,
        F: Fn(A, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + 'static,
        R: IntoToolResult + 'static,
    {
        let input = schema::finish_input(schema::input_schema::<A>());
        let mut tool = RuntimeTool::with_parts::<A, F, Fut, R>(name.into(), handler);
        match input {
            Ok(input) => tool.descriptor.input_schema = input,
            Err(problem) => tool.problem = Some(problem),
        }
        tool
    }

    /// A tool with a hand-written `inputSchema` (any JSON Schema whose root
    /// is `"type": "object"`), published as written and enforced on every
    /// call before `handler` runs: a call that breaks it is a tool error
    /// naming the field. The arguments then deserialize into `A`
    /// (`serde_json::Value` to take them as they are).
    #[cfg(feature = "schema-validation")]
    #[cfg_attr(docsrs, doc(cfg(feature = "schema-validation")))]
    pub fn with_schema<A, F, Fut, R>(
        name: impl Into<String>,
        input_schema: Value,
        handler: F,
    ) -> RuntimeTool
    where
        A: DeserializeOwned + 'static,
        F: Fn(A, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + 'static,
        R: IntoToolResult + 'static,
    {
        let mut tool = RuntimeTool::with_parts::<A, F, Fut, R>(name.into(), handler);
        tool.hand_written = true;
        match schema::check_raw_input(input_schema) {
            Ok(input) => tool.descriptor.input_schema = input,
            Err(problem) => tool.problem = Some(problem),
        }
        tool
    }

    fn with_parts<A, F, Fut, R>(name: String, handler: F) -> RuntimeTool
    where
        A: DeserializeOwned + 'static,
        F: Fn(A, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + 'static,
        R: IntoToolResult + 'static,
    {
        let (output_schema, problem) = match R::output_schema().map(schema::finish_output) {
            Some(Ok(schema)) => (Some(schema), None),
            Some(Err(problem)) => (None, Some(problem)),
            None => (None, None),
        };
        let call: RuntimeToolFn = Arc::new(move |invocation: ToolInvocation<'_>| {
            let arguments: A = parse_arguments(invocation.arguments)?;
            let future = handler(arguments, invocation.context);
            let future: ToolFuture = Box::pin(async move { future.await.into_tool_result() });
            Ok(future)
        });
        RuntimeTool {
            descriptor: Tool {
                name,
                title: None,
                description: None,
                input_schema: JsonObject::new(),
                output_schema,
                annotations: None,
                icons: Vec::new(),
                meta: None,
            },
            call,
            scopes: Vec::new(),
            hand_written: false,
            replayable_state: false,
            problem,
        }
    }

    /// The wire name.
    pub fn name(&self) -> &str {
        &self.descriptor.name
    }

    /// A human-readable name for display.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.descriptor.title = Some(title.into());
        self
    }

    /// What the tool does, for the model.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.descriptor.description = Some(description.into());
        self
    }

    /// Behaviour hints. They also decide, as for a `#[tool]`, whether its
    /// `requestState` works once (a tool a repeat could change things with).
    #[must_use]
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.descriptor.annotations = Some(annotations);
        self
    }

    /// Adds an icon.
    #[must_use]
    pub fn icon(mut self, icon: Icon) -> Self {
        self.descriptor.icons.push(icon);
        self
    }

    /// The tool's `_meta`.
    #[must_use]
    pub fn meta(mut self, meta: JsonObject) -> Self {
        self.descriptor.meta = Some(meta);
        self
    }

    /// OAuth scopes a caller's token needs (checked when the tool is
    /// added against RFC 6749 scope-token syntax).
    #[must_use]
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// A hand-written `outputSchema` (a JSON object), replacing one the
    /// return type implies; debug builds with `debug-checks` check every
    /// result's `structuredContent` against it.
    #[must_use]
    pub fn output_schema(mut self, schema: Value) -> Self {
        match schema::check_raw_output(schema) {
            Ok(schema) => self.descriptor.output_schema = Some(schema),
            Err(problem) => self.problem = Some(problem),
        }
        self
    }

    /// Lets clients use one of its `requestState`s more than once, as
    /// `#[tool(replayable_state)]` does.
    #[must_use]
    pub fn replayable_state(mut self) -> Self {
        self.replayable_state = true;
        self
    }
}

/// A prompt added while the server runs.
///
/// ```
/// use mcp_runtime::catalog::RuntimePrompt;
///
/// let prompt = RuntimePrompt::new("review", |args, _ctx| async move {
///     format!("Please review {}.", args["topic"])
/// })
/// .argument("topic", "What to review", true);
/// ```
pub struct RuntimePrompt {
    pub(crate) prompt: Prompt,
    pub(crate) get: RuntimePromptFn,
    pub(crate) scopes: Vec<String>,
}

impl std::fmt::Debug for RuntimePrompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimePrompt")
            .field("prompt", &self.prompt)
            .finish_non_exhaustive()
    }
}

impl RuntimePrompt {
    /// A prompt answered by `handler` with its arguments (strings on the
    /// wire, by name: every required one is present, no unknown one is).
    /// Declare them with [`argument`](Self::argument).
    pub fn new<F, Fut, R>(name: impl Into<String>, handler: F) -> RuntimePrompt
    where
        F: Fn(BTreeMap<String, String>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + 'static,
        R: IntoPromptResult + 'static,
    {
        let get: RuntimePromptFn = Arc::new(move |invocation: PromptInvocation<'_>| {
            let future = handler(invocation.arguments.clone(), invocation.context);
            let future =
                crate::prompt::box_prompt_future(async move { future.await.into_prompt_result() });
            Ok(future)
        });
        RuntimePrompt {
            prompt: Prompt {
                name: name.into(),
                title: None,
                description: None,
                arguments: Vec::new(),
                icons: Vec::new(),
                meta: None,
            },
            get,
            scopes: Vec::new(),
        }
    }

    /// A prompt whose arguments are the fields of `A`, described by its
    /// schema (names, descriptions, which are required): prompt arguments
    /// are strings, so `A`'s fields are `String` or `Option<String>`.
    pub fn typed<A, F, Fut, R>(name: impl Into<String>, handler: F) -> RuntimePrompt
    where
        A: DeserializeOwned + JsonSchema + 'static,
        F: Fn(A, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + 'static,
        R: IntoPromptResult + 'static,
    {
        let handler = Arc::new(handler);
        let mut prompt = RuntimePrompt::new(name, |_, _| async { String::new() });
        prompt.prompt.arguments = arguments_of(&schema::input_schema::<A>().to_value());
        prompt.get = Arc::new(move |invocation: PromptInvocation<'_>| {
            let json = serde_json::to_string(invocation.arguments).unwrap_or_default();
            let arguments: A =
                parse_arguments(&json).map_err(|error| PromptError::InvalidArgument {
                    name: "arguments",
                    message: error.to_string(),
                })?;
            let future = handler(arguments, invocation.context);
            Ok(crate::prompt::box_prompt_future(async move {
                future.await.into_prompt_result()
            }))
        });
        prompt
    }

    /// Declares an argument.
    #[must_use]
    pub fn argument(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        required: bool,
    ) -> Self {
        self.prompt.arguments.push(PromptArgument {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            required,
        });
        self
    }

    /// A human-readable name for display.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.prompt.title = Some(title.into());
        self
    }

    /// What the prompt does.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.prompt.description = Some(description.into());
        self
    }

    /// Adds an icon.
    #[must_use]
    pub fn icon(mut self, icon: Icon) -> Self {
        self.prompt.icons.push(icon);
        self
    }

    /// The prompt's `_meta`.
    #[must_use]
    pub fn meta(mut self, meta: JsonObject) -> Self {
        self.prompt.meta = Some(meta);
        self
    }

    /// OAuth scopes a caller's token needs.
    #[must_use]
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }
}

/// The prompt arguments a generated object schema describes.
fn arguments_of(schema: &Value) -> Vec<PromptArgument> {
    let required = |name: &str| {
        schema["required"]
            .as_array()
            .is_some_and(|r| r.iter().any(|n| n == name))
    };
    let Some(properties) = schema["properties"].as_object() else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| PromptArgument {
            name: name.clone(),
            title: None,
            description: property["description"].as_str().map(str::to_owned),
            required: required(name),
        })
        .collect()
}

/// A resource added while the server runs: its descriptor (as
/// `resources/list` shows it) and how to read it.
pub struct RuntimeResource {
    pub(crate) resource: Resource,
    pub(crate) read: RuntimeReadFn,
    pub(crate) cache: Option<CacheHint>,
    pub(crate) scopes: Vec<String>,
}

impl std::fmt::Debug for RuntimeResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeResource")
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

impl RuntimeResource {
    /// `resource`, read by `read`, which returns anything a `#[resource]`
    /// may (text, bytes, contents, a `ReadResourceResult` with its own
    /// caching hints, an `Option` or a `Result`).
    pub fn new<F, Fut, R>(resource: Resource, read: F) -> RuntimeResource
    where
        F: Fn(Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + 'static,
        R: IntoResourceContents + 'static,
    {
        let read: RuntimeReadFn = Arc::new(move |uri: &str, context: Context| {
            let uri = uri.to_owned();
            let future = read(context);
            Box::pin(async move { future.await.into_result(&uri) }) as ResourceFuture
        });
        RuntimeResource {
            resource,
            read,
            cache: None,
            scopes: Vec::new(),
        }
    }

    /// Caching hints for its reads, over the server's default (a read's
    /// own hints still win).
    #[must_use]
    pub fn cache(mut self, hint: CacheHint) -> Self {
        self.cache = Some(hint);
        self
    }

    /// OAuth scopes a caller's token needs to read it.
    #[must_use]
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }
}

/// A collection of resources: what it holds now, and how to read one.
///
/// The catalog calls [`list`](Self::list) when the provider is added and
/// each time its handle is [refreshed](super::ProviderHandle::refresh),
/// and merges the items into `resources/list` (sorted and paginated with
/// the static ones); a change of the set sends `list_changed`. A read of
/// one of its URIs goes to [`read`](Self::read), with the request's
/// [`Context`] (progress, logging, cancellation, the caller, asks).
pub trait ResourceProvider: Send + Sync + 'static {
    /// Every resource of the collection, in any order. URIs must be
    /// unique, and not those of static resources.
    fn list(&self) -> Vec<Resource>;

    /// Reads `uri`, one of the listed URIs.
    fn read(&self, uri: &str, context: Context) -> ResourceFuture;

    /// Called once the provider is in a catalog, with its handle: a
    /// provider that knows when its collection changes keeps it, to
    /// [refresh](super::ProviderHandle::refresh) the list then. Does
    /// nothing by default.
    fn added(&self, handle: &super::ProviderHandle) {
        let _ = handle;
    }
}
