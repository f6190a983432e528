//! Building every item's stack of layers from what the builder was given
//! (server-wide, per selection) and what each item declares (its own
//! `layer` and `timeout_ms`); and what the request paths call them with.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;

use bytes::Bytes;
use futures_util::FutureExt as _;

use super::envelope::Request;
use super::extensions::Extensions;
use super::extensions::{Served, run_method};
use super::invoke::invoke;
use super::prompts::{find, run_prompt};
use super::resources::{read_resolved, serving};
use super::tasks::Tasks;
use super::{Admission, Dispatched, Dispatcher, Prepared, Reply, ResultJson};
use crate::protocol::RequestMeta;
use crate::protocol::method::MethodName;
use crate::source::RequestSource;
use serde_json::{Map, Value};
use std::borrow::Cow;

use crate::context::Context;
use crate::extension::MethodResult;
use crate::middleware::request::{Body, Params};
use crate::middleware::{
    self, Invocation, Item, ItemKind, ItemLayer, Layers, Next, Observation, Output,
    Request as MiddlewareRequest, Response, Runner, TaskHandle,
};
use crate::mrtr::Input;
use crate::protocol::{
    CallToolResult, ErrorObject, GetPromptResult, ReadResourceResult, RequestId,
};
use crate::registry::RegisteredTool;
use crate::registry::{self, BuildError, ItemInfo, Items, Location, Registry};

/// A layer given to the builder, with the items it wraps.
pub(crate) type GivenLayer = (Items, ItemLayer);

/// Where an extension method is "defined", for selections (no module).
const NOWHERE: Location = Location {
    file: "",
    line: 0,
    module: "",
};

/// Every served item's stack: the built-in scope check, the given layers
/// that select it, outermost first, then its own layer, the Tasks engine
/// (a task tool's), with its `timeout_ms` innermost.
pub(super) fn build(
    registry: &Registry,
    extensions: &Extensions,
    tasks: Option<&Tasks>,
    given: &[GivenLayer],
) -> Result<Layers, BuildError> {
    let mut layers = Layers::default();
    let builtin = declares_scopes(extensions) || tasks.is_some();
    if given.is_empty() && !builtin && !declares_layers(registry) {
        // Nothing to build: startup pays nothing for middleware either.
        return Ok(layers);
    }
    let everywhere: Vec<ItemLayer> = (given.iter())
        .filter(|(items, _)| items.is_all())
        .map(|(_, layer)| layer.clone())
        .collect();
    layers.set_all(&everywhere);
    let mut served = Vec::new();
    let mut engines = BTreeMap::new();
    for tool in registry.tools() {
        let Some(entry) = tool.entry() else { continue };
        let mut item = Item::new(ItemKind::Tool, entry.name);
        item.annotations = entry.annotations.to_annotations();
        item.group = entry.group;
        let own = (entry.layer, entry.timeout_ms);
        served.push((entry.info(), item, entry.scopes.to_vec(), own));
        if let Some(layer) = tasks.and_then(|tasks| tasks.layer(entry)) {
            engines.insert(entry.name, layer);
        }
    }
    let templates = registry.templates().iter().map(|(entry, _)| *entry);
    for entry in registry.resources().iter().copied().chain(templates) {
        let mut item = Item::new(ItemKind::Resource, entry.uri);
        item.group = entry.group;
        let own = (entry.layer, entry.timeout_ms);
        served.push((entry.info(), item, entry.scopes.to_vec(), own));
    }
    for entry in registry.prompts() {
        let mut item = Item::new(ItemKind::Prompt, entry.name);
        item.group = entry.group;
        let own = (entry.layer, entry.timeout_ms);
        served.push((entry.info(), item, entry.scopes.to_vec(), own));
    }
    for served_method in extensions.methods() {
        let name: &str = &served_method.name;
        let item = Item::new(ItemKind::Method, name);
        let info = method_info(name);
        served.push((
            info,
            item,
            served_method.method.scopes.clone(),
            (None, None),
        ));
    }
    check_selections(given, &served)?;
    for (info, mut item, scopes, (own, timeout_ms)) in served {
        item.scopes = scopes;
        item.timeout = timeout_ms.map(Duration::from_millis);
        // The scope check first: a caller without the scopes reaches no
        // layer of the user's (a cache must not answer them).
        let check = (!item.scopes.is_empty()).then(middleware::scope_layer);
        let mut chosen: Vec<ItemLayer> = check.into_iter().collect();
        chosen.extend(
            (given.iter())
                .filter(|(items, _)| items.contains(&info))
                .map(|(_, layer)| layer.clone()),
        );
        chosen.extend(own.map(|layer| layer()));
        if item.kind == ItemKind::Tool {
            chosen.extend(engines.remove(&*item.name));
        }
        layers.insert(item, &chosen);
    }
    Ok(layers)
}

/// Whether a linked item declares its own `layer`, `timeout_ms` or
/// scopes (checked by a built-in layer).
fn declares_layers(registry: &Registry) -> bool {
    let own = |layer: Option<fn() -> ItemLayer>, timeout: Option<u64>, scopes: &[&str]| {
        layer.is_some() || timeout.is_some() || !scopes.is_empty()
    };
    let mut tools = registry.tools().iter().filter_map(|tool| tool.entry());
    let templates = registry.templates().iter().map(|(entry, _)| *entry);
    tools.any(|e| own(e.layer, e.timeout_ms, e.scopes))
        || (registry.resources().iter().copied().chain(templates))
            .any(|e| own(e.layer, e.timeout_ms, e.scopes))
        || registry
            .prompts()
            .iter()
            .any(|e| own(e.layer, e.timeout_ms, e.scopes))
}

/// Whether an extension method declares scopes.
fn declares_scopes(extensions: &Extensions) -> bool {
    extensions
        .methods()
        .iter()
        .any(|served| !served.method.scopes.is_empty())
}

/// A method as selections see it.
fn method_info(name: &str) -> ItemInfo<'_> {
    ItemInfo {
        kind: registry::ItemKind::Method,
        name,
        uri: None,
        group: None,
        location: NOWHERE,
    }
}

type Candidate<'a> = (
    ItemInfo<'a>,
    Item,
    Vec<&'static str>,
    (Option<fn() -> ItemLayer>, Option<u64>),
);

/// A selection that names nothing the server serves is a mistake, named
/// at startup.
fn check_selections(given: &[GivenLayer], served: &[Candidate<'_>]) -> Result<(), BuildError> {
    let infos: Vec<ItemInfo<'_>> = served.iter().map(|(info, ..)| *info).collect();
    for (items, _) in given {
        items.check(&infos).map_err(|error| match error {
            BuildError::Items(problem) => {
                BuildError::Items(format!("a layer's selection: {problem}"))
            }
            other => other,
        })?;
    }
    Ok(())
}

/// An item's stack, found for one call.
pub(super) struct Layered<'a> {
    item: Arc<Item>,
    stack: &'a Next<Invocation>,
}

impl Dispatcher {
    /// Whether the server has any layer.
    #[inline]
    pub(super) fn layers_any(&self) -> bool {
        self.layers.any()
    }

    /// The stack of what serves `uri` first, if the server has one for it.
    pub(super) fn layered_resource(&self, uri: &str) -> Option<Layered<'_>> {
        if !self.layers_any() {
            return None;
        }
        let name = serving(self, uri)?;
        self.layered(ItemKind::Resource, name, || {
            Item::new(ItemKind::Resource, name)
        })
    }

    /// The stack around the item `name` of `kind`, if the server has one
    /// for it (`item` describes an item without its own: a catalog's).
    #[inline]
    pub(super) fn layered(
        &self,
        kind: ItemKind,
        name: &str,
        item: impl FnOnce() -> Item,
    ) -> Option<Layered<'_>> {
        let (item, stack) = self.layers.find(kind, name, item)?;
        Some(Layered { item, stack })
    }
}

impl Layered<'_> {
    /// Runs `run` under the stack; `uri` for a resource read.
    fn call(
        self,
        arguments: Arc<str>,
        uri: Option<Arc<str>>,
        context: Context,
        run: Runner,
    ) -> impl Future<Output = Result<Output, ErrorObject>> + 'static {
        let invocation = Invocation {
            item: self.item,
            uri,
            arguments,
            context,
            run,
        };
        let stack = self.stack.clone();
        async move { middleware::invoke(&stack, invocation).await }
    }

    /// A tool's call under its stack.
    pub(super) fn tool(
        self,
        dispatcher: &Arc<Dispatcher>,
        arguments: &str,
        context: Context,
    ) -> impl Future<Output = Result<Called, ErrorObject>> + 'static {
        let this = dispatcher.clone();
        let run: Runner = Arc::new(move |call: Invocation| {
            let dispatcher = this.clone();
            Box::pin(async move {
                let Some(tool) = dispatcher.tool(call.name()) else {
                    return Err(ErrorObject::internal_error());
                };
                let input = call.context.input().clone();
                let result = invoke(&tool, &call.arguments, call.context, &input).await?;
                Ok(result.map_or(Output::InputRequired, Output::Tool))
            })
        });
        let input = context.input().clone();
        let item = self.item.clone();
        let answer = self.call(Arc::from(arguments), None, context, run);
        async move {
            match answer.await? {
                Output::Tool(result) => Ok(Called::Result(result)),
                Output::Task(handle) => Ok(Called::Task(handle)),
                output => {
                    Ok(suspended(&item, output, &input)?.map_or(Called::Suspended, Called::Result))
                }
            }
        }
    }
}

/// How a tool's call under its stack ended.
pub(super) enum Called {
    Result(CallToolResult),
    /// It became a task (the Tasks engine, its innermost layer).
    Task(TaskHandle),
    /// It suspended on an ask.
    Suspended,
}

impl Layered<'_> {
    /// A prompt's get under its stack; `None` if it suspended on an ask.
    pub(super) fn prompt(
        self,
        dispatcher: &Arc<Dispatcher>,
        arguments: &str,
        context: Context,
    ) -> impl Future<Output = Result<Option<GetPromptResult>, ErrorObject>> + 'static {
        let this = dispatcher.clone();
        let run: Runner = Arc::new(move |call: Invocation| {
            let dispatcher = this.clone();
            Box::pin(async move {
                let prompt = find(&dispatcher, call.name())?;
                let arguments: BTreeMap<String, String> = serde_json::from_str(&call.arguments)
                    .map_err(|e| ErrorObject::invalid_params(format!("Invalid params: {e}")))?;
                let input = call.context.input().clone();
                let got = run_prompt(&prompt, &arguments, call.context, &input).await?;
                Ok(got.map_or(Output::InputRequired, Output::Prompt))
            })
        });
        let input = context.input().clone();
        let item = self.item.clone();
        let answer = self.call(Arc::from(arguments), None, context, run);
        async move {
            match answer.await? {
                Output::Prompt(result) => Ok(Some(result)),
                output => suspended(&item, output, &input),
            }
        }
    }

    /// A resource read under its stack; `None` if it suspended on an ask.
    pub(super) fn resource(
        self,
        dispatcher: &Arc<Dispatcher>,
        uri: &str,
        context: Context,
    ) -> impl Future<Output = Result<Option<ReadResourceResult>, ErrorObject>> + 'static {
        let this = dispatcher.clone();
        let run: Runner = Arc::new(move |call: Invocation| {
            let dispatcher = this.clone();
            Box::pin(async move {
                let uri = call.uri.as_deref().unwrap_or_default();
                let input = call.context.input().clone();
                let read = read_resolved(&dispatcher, uri, call.context, &input).await?;
                Ok(read.map_or(Output::InputRequired, Output::Resource))
            })
        });
        let input = context.input().clone();
        let item = self.item.clone();
        let answer = self.call(Arc::from("{}"), Some(Arc::from(uri)), context, run);
        async move {
            match answer.await? {
                Output::Resource(result) => Ok(Some(result)),
                output => suspended(&item, output, &input),
            }
        }
    }

    /// An extension method's call under its stack.
    pub(super) fn method(
        self,
        served: &Arc<Served>,
        params: &Map<String, Value>,
        context: Context,
    ) -> impl Future<Output = Result<MethodResult, ErrorObject>> + 'static {
        let arguments = Arc::from(serde_json::to_string(params).unwrap_or_default());
        let served = served.clone();
        let run: Runner = Arc::new(move |call: Invocation| {
            let served = served.clone();
            Box::pin(async move {
                // Read again: a layer may pass on what it was given, or
                // call the handler more than once.
                let params = serde_json::from_str(&call.arguments).unwrap_or_default();
                run_method(&served, params, call.context)
                    .await
                    .map(Output::Method)
            })
        });
        let item = self.item.clone();
        let answer = self.call(arguments, None, context, run);
        async move {
            match answer.await? {
                Output::Method(result) => Ok(result),
                output => Err(wrong_kind(&item, &output)),
            }
        }
    }
}

/// `None` for a handler that suspended on an ask; for any other output
/// a layer answered the item with something of the wrong kind, a bug
/// reported as an internal error.
fn suspended<T>(item: &Item, output: Output, input: &Input) -> Result<Option<T>, ErrorObject> {
    if matches!(output, Output::InputRequired) && input.is_suspended() {
        return Ok(None);
    }
    Err(wrong_kind(item, &output))
}

/// A layer answered the item with an output of another kind of item (or
/// `input_required` for a handler that asked nothing): a bug in the layer,
/// answered with an internal error.
fn wrong_kind(item: &Item, output: &Output) -> ErrorObject {
    tracing::error!(
        kind = item.kind.as_str(),
        name = &*item.name,
        ?output,
        "a layer answered with an output of another kind of item (or input_required for a handler that asked nothing)"
    );
    ErrorObject::internal_error()
}

/// A catalog's tool, as layers see it.
pub(super) fn runtime_tool(tool: &RegisteredTool) -> Item {
    let mut item = Item::new(ItemKind::Tool, tool.name());
    item.scopes = tool.scopes().to_vec();
    item.annotations = tool.descriptor().annotations.clone();
    item
}

impl Dispatcher {
    /// The request as request layers see it (what answers it is added by
    /// the caller).
    pub(super) fn request_view(
        &self,
        request: &Request,
        meta: &Arc<RequestMeta>,
        source: &RequestSource,
    ) -> MiddlewareRequest {
        let head = request.head();
        MiddlewareRequest {
            method: match &request.method {
                MethodName::Known(method) => Cow::Borrowed(method.name()),
                MethodName::Unknown(name) => Cow::Owned(name.to_string()),
            },
            id: request.id.clone(),
            params: Params::new(request.message(), super::envelope::locate_params),
            name: request.member_bytes(&head.name),
            uri: request.member_bytes(&head.uri),
            meta: meta.clone(),
            source: source.clone(),
            app: self.app.clone(),
            extensions: middleware::Extensions::default(),
            changed: false,
            rest: None,
        }
    }

    /// An observation of the request, when anything observes requests.
    pub(super) fn observe(
        &self,
        request: &Request,
        meta: &Arc<RequestMeta>,
        source: &RequestSource,
    ) -> Option<Box<Observation>> {
        (self.request_observers).start(|| self.request_view(request, meta, source))
    }

    /// An answer known at once, passed through the request layers (and
    /// found again when a layer changed the request).
    pub(super) fn answered_through<F, A: Admission>(
        self: &Arc<Self>,
        stack: &Next<MiddlewareRequest>,
        prepared: Prepared,
        answer: Result<Bytes, ErrorObject>,
    ) -> Dispatched<F, A> {
        let observation = self.observe(&prepared.request, &prepared.meta, &prepared.source);
        let mut view = self.request_view(&prepared.request, &prepared.meta, &prepared.source);
        let dispatcher = self.clone();
        view.rest = Some(Box::new(move |view: MiddlewareRequest| {
            let answer = match view.changed_message() {
                None => answer,
                Some(message) => dispatcher.answer_changed(message, view),
            };
            let answer = answer.map(Response::from_json).map_err(Into::into);
            Box::pin(std::future::ready(answer))
        }));
        let (stack, id) = (stack.clone(), prepared.request.id);
        let replied = id.clone();
        let future = async move {
            let answer = middleware::answer_request(stack, view).await;
            if let Some(observation) = observation {
                observation.finish(answer.as_ref().map(Response::observed));
            }
            match answer {
                Ok(response) => Reply::result(&replied, response.json().as_bytes()),
                Err(error) => Reply::error(Some(&replied), &error),
            }
        };
        Dispatched::Layered {
            future: Box::pin(unwinding(id.clone(), future)),
            id,
        }
    }

    /// The answer known at once to a request a layer changed: found
    /// again from its new params (a list's cursor, say).
    fn answer_changed(
        &self,
        message: bytestring::ByteString,
        view: MiddlewareRequest,
    ) -> Result<Bytes, ErrorObject> {
        let prepared = Prepared {
            request: changed_request(message)?,
            meta: view.meta,
            source: view.source,
        };
        match self.triage(&prepared) {
            super::Triage::Answered(answer) => answer,
            super::Triage::Run(_) => {
                tracing::error!(
                    method = &*view.method,
                    "a request layer changed a request answered at once into one a handler runs"
                );
                Err(ErrorObject::internal_error())
            }
        }
    }
}

/// The request a layer changed, read again from the message it left (a
/// message [`MiddlewareRequest::set_params`] wrote, so it parses).
pub(super) fn changed_request(message: bytestring::ByteString) -> Result<Request, ErrorObject> {
    match super::envelope::parse(message) {
        Ok(super::envelope::Incoming::Request(mut request)) => {
            // What the handler sees of `_meta` is the layers' view of it.
            request.take_meta();
            Ok(request)
        }
        _ => {
            tracing::error!("a request changed by a request layer could not be read again");
            Err(ErrorObject::internal_error())
        }
    }
}

/// A handler's answer passed through the request layers: `rest` makes it
/// from the request as the layers leave it.
pub(super) fn through_request_layers(
    stack: Next<MiddlewareRequest>,
    mut view: MiddlewareRequest,
    rest: impl FnOnce(MiddlewareRequest) -> middleware::BoxFuture<Response> + 'static,
) -> Pin<Box<dyn Future<Output = Result<ResultJson, ErrorObject>>>> {
    view.rest = Some(Box::new(rest));
    Box::pin(async move {
        let response = middleware::answer_request(stack, view).await?;
        Ok(match response.json {
            Body::Shared(json) => ResultJson::Shared(json),
            Body::Unframed(json) => ResultJson::Unframed(json),
            Body::Task(json, handle) => ResultJson::Task(json, handle),
        })
    })
}

/// A handler's result as request layers see it.
pub(super) fn response(answer: ResultJson) -> Response {
    match answer {
        ResultJson::Shared(json) => Response::from_json(json),
        ResultJson::Task(json, handle) => Response {
            json: Body::Task(json, handle),
            tool_error: Some(false),
        },
        ResultJson::Unframed(json) => Response {
            tool_error: Some(json.is_tool_error()),
            json: Body::Unframed(json),
        },
    }
}

/// `future`, with a panic (in a layer) costing only this request.
async fn unwinding(id: RequestId, future: impl Future<Output = Reply>) -> Reply {
    match AssertUnwindSafe(future).catch_unwind().await {
        Ok(reply) => reply,
        Err(panic) => {
            super::report_panic("a request layer", &*panic);
            Reply::error(Some(&id), &ErrorObject::internal_error())
        }
    }
}
