//! Middleware: tower layers around every request, and around each item's
//! invocation.
//!
//! A request layer
//! ([`ServerBuilder::request_layer`](crate::ServerBuilder::request_layer))
//! wraps every request of the dispatcher, whatever its method and
//! transport: a tower [`Layer`] over [`Next<Request>`] whose service
//! answers a [`Request`] (method, id, params, `_meta`, the caller, the
//! states) with a [`Response`] (the result's JSON), or a JSON-RPC error.
//!
//! An item layer wraps the invocation of a tool, a resource read, a prompt
//! or an extension method. It is a tower [`Layer`] over [`Next<Invocation>`]
//! whose service answers an [`Invocation`] with an [`Output`], so the
//! tower ecosystem composes: `tower::timeout::TimeoutLayer`,
//! `tower::limit::ConcurrencyLimitLayer`, `tower::load_shed::LoadShedLayer`,
//! or an async function through [`from_fn`].
//!
//! Layers are given server-wide
//! ([`ServerBuilder::layer`](crate::ServerBuilder::layer)), to a selection
//! of items (a group, a module, named items:
//! [`ServerBuilder::layer_on`](crate::ServerBuilder::layer_on)), on one
//! item (`#[tool(layer = ...)]`, `#[tool(timeout_ms = ...)]`), and on
//! extension methods ([`Items::method`](crate::Items::method)).
//! The first given is the outermost; an item's own layer is inside the
//! server's, and its `timeout_ms` is innermost, right around the handler.
//!
//! ```rust,standalone_crate
//! use std::time::Duration;
//!
//! use mcp_runtime::middleware::{self, BoxError, Invocation, Next, Output};
//! use mcp_runtime::{CallToolResult, Items, ServerBuilder, tool};
//! use tower::timeout::TimeoutLayer;
//! # use serde_json::{Value, json};
//!
//! /// Deletes a file.
//! #[tool(group = "files", annotations(destructive))]
//! fn delete_file(path: String) -> String {
//!     format!("deleted {path}")
//! }
//!
//! /// Refuses by argument value, before the handler runs.
//! async fn no_etc(call: Invocation, next: Next<Invocation>) -> Result<Output, BoxError> {
//!     let arguments: serde_json::Value = call.arguments_as()?;
//!     if arguments["path"].as_str().is_some_and(|p| p.starts_with("/etc/")) {
//!         return Ok(Output::Tool(CallToolResult::error("not under /etc")));
//!     }
//!     next.run(call).await
//! }
//!
//! # /// One `tools/call` through the dispatcher: its result.
//! # async fn call(server: &mcp_runtime::Server, name: &str, arguments: Value) -> Value {
//! #     let meta = json!({
//! #         "io.modelcontextprotocol/protocolVersion": mcp_runtime::protocol::PROTOCOL_VERSION,
//! #         "io.modelcontextprotocol/clientCapabilities": {},
//! #     });
//! #     let params = json!({"name": name, "arguments": arguments, "_meta": meta});
//! #     let request =
//! #         json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
//! #     let response = server.exchange(request.to_string()).await.response.unwrap();
//! #     serde_json::from_str::<Value>(&response).unwrap()["result"].take()
//! # }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), mcp_runtime::BuildError> {
//! let server = ServerBuilder::new("files", "1.0.0")
//!     .layer(TimeoutLayer::new(Duration::from_secs(30)))
//!     .layer_on(Items::group("files"), middleware::from_fn(no_etc))
//!     .build()?;
//!
//! let refused = call(&server, "delete_file", json!({"path": "/etc/passwd"})).await;
//! assert_eq!(refused["isError"], true);
//! let done = call(&server, "delete_file", json!({"path": "/tmp/notes.txt"})).await;
//! assert_eq!(done["content"][0]["text"], "deleted /tmp/notes.txt");
//! # Ok(())
//! # }
//! ```
//!
//! Two built-ins are item layers on this seam: the scope check, outermost
//! on every item that declares `scopes = [...]` (a principal without them
//! gets `-31003`, HTTP 403), and the Tasks engine, innermost on a
//! `#[tool(task)]` tool, just outside its `timeout_ms` (a client that
//! negotiated Tasks gets [`Output::Task`], and the rest of the stack runs
//! on a task worker). The audit events are a request layer.
//!
//! A request observer (given by a plugin:
//! [`plugin::request_observer`](crate::plugin::request_observer))
//! sees the same requests without wrapping them: a [`RequestObserver`] is
//! told when each starts and how it ended ([`Finished`]), or that it was
//! abandoned. It cannot change a request, and costs a fraction of a
//! layer: the seam for metrics.
//!
//! A layer's error becomes the request's JSON-RPC error: an
//! [`ErrorObject`] as it is; tower's timeout (`Elapsed`) as `-31002`
//! (HTTP 504); tower's load shedding (`Overloaded`) as `-31001` (HTTP 503);
//! anything else as an internal error (`-32603`), logged. A tool error the
//! model sees is an [`Output::Tool`] with [`CallToolResult::error`].
//!
//! [`CallToolResult::error`]: crate::CallToolResult::error

mod from_fn;
mod invocation;
mod next;
mod notification;
mod observer;
pub(crate) mod request;
mod scopes;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

pub use tower_layer::Layer;
pub use tower_service::Service;

pub use self::from_fn::{FromFn, FromFnLayer, from_fn};
pub use self::invocation::{Invocation, ItemKind, Output, TaskHandle};
pub(crate) use self::invocation::{Item, Runner};
pub use self::next::{BoxFuture, Level, Next};
pub use self::notification::{ClientNotification, NotificationObserver};
pub(crate) use self::notification::{Observers, TraceContext};
pub use self::observer::{Finished, ObservedRequest, ObservedResult, RequestObserver};
pub(crate) use self::observer::{Observation, RequestObservers, ResultRef};
pub use self::request::{Request, Response};
pub(crate) use self::scopes::scope_layer;
pub use crate::context::Extension;
use crate::protocol::{ErrorObject, error_code};
pub use crate::request_extensions::Extensions;

/// The error a layer's service may fail with, as tower's layers do.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A layer, boxed: any tower [`Layer`] over [`Next<R>`] whose service
/// answers `R` with its level's response and can be cloned and shared
/// across threads (tower's own layers can).
pub struct BoxedLayer<R: Level> {
    wrap: Arc<dyn Fn(Next<R>) -> Next<R> + Send + Sync>,
}

/// An item layer, boxed: what
/// [`ServerBuilder::layer`](crate::ServerBuilder::layer) and
/// `#[tool(layer = ...)]` keep.
pub type ItemLayer = BoxedLayer<Invocation>;

/// A request layer, boxed: what
/// [`ServerBuilder::request_layer`](crate::ServerBuilder::request_layer)
/// keeps.
pub type RequestLayer = BoxedLayer<Request>;

impl<R: Level> BoxedLayer<R> {
    /// Boxes `layer`.
    pub fn new<L>(layer: L) -> BoxedLayer<R>
    where
        L: Layer<Next<R>> + Send + Sync + 'static,
        L::Service: Service<R, Response = R::Response> + Clone + Send + Sync + 'static,
        <L::Service as Service<R>>::Error: Into<BoxError>,
        <L::Service as Service<R>>::Future: 'static,
    {
        BoxedLayer {
            wrap: Arc::new(move |next| Next::new(layer.layer(next))),
        }
    }
}

impl<R: Level> Clone for BoxedLayer<R> {
    fn clone(&self) -> Self {
        BoxedLayer {
            wrap: self.wrap.clone(),
        }
    }
}

impl<R: Level> fmt::Debug for BoxedLayer<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BoxedLayer").finish_non_exhaustive()
    }
}

/// What `#[tool(layer = ...)]` (and the same on resources and prompts)
/// accepts: any layer [`ItemLayer::new`] takes, or an [`ItemLayer`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a layer around item invocations",
    label = "not a tower `Layer<Next<Invocation>>` whose service answers `Output`",
    note = "a layer here wraps `mcp_runtime::middleware::Next<Invocation>` and its service answers an `Invocation` with an `Output`, is `Clone + Send + Sync + 'static`, and fails with an error that converts into `BoxError`",
    note = "e.g. `layer = tower::timeout::TimeoutLayer::new(Duration::from_secs(5))`, or `layer = middleware::from_fn(my_fn)` for `async fn my_fn(call: Invocation, next: Next<Invocation>) -> Result<Output, BoxError>`; several layers go in a tuple, outermost first"
)]
pub trait IntoItemLayer {
    /// Boxes the layer.
    fn into_item_layer(self) -> ItemLayer;
}

impl IntoItemLayer for ItemLayer {
    fn into_item_layer(self) -> ItemLayer {
        self
    }
}

impl<L> IntoItemLayer for L
where
    L: Layer<Next<Invocation>> + Send + Sync + 'static,
    L::Service: Service<Invocation, Response = Output> + Clone + Send + Sync + 'static,
    <L::Service as Service<Invocation>>::Error: Into<BoxError>,
    <L::Service as Service<Invocation>>::Future: 'static,
{
    fn into_item_layer(self) -> ItemLayer {
        ItemLayer::new(self)
    }
}

/// Every item's stack, built once with the server.
#[derive(Default)]
pub(crate) struct Layers {
    /// The stacks of the items that have layers, by kind and name (a
    /// resource's URI or template).
    items: [HashMap<Box<str>, Stacked, foldhash::fast::RandomState>; 4],
    /// The server-wide stack, for items not in `items` (a catalog's).
    all: Option<Next<Invocation>>,
    /// Whether any item has a stack.
    any: bool,
}

impl fmt::Debug for Layers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Layers")
            .field("items", &self.items.iter().map(HashMap::len).sum::<usize>())
            .field("all", &self.all.is_some())
            .finish()
    }
}

/// An item and the stack around it.
pub(crate) struct Stacked {
    pub(crate) item: Arc<Item>,
    pub(crate) stack: Next<Invocation>,
}

impl Layers {
    /// Sets the server-wide stack.
    pub(crate) fn set_all(&mut self, layers: &[ItemLayer]) {
        self.all = (!layers.is_empty()).then(|| stack(layers, None));
        self.any |= self.all.is_some();
    }

    /// Gives `item` the stack of `layers` (outermost first), with its own
    /// timeout innermost; nothing when it has neither.
    pub(crate) fn insert(&mut self, item: Item, layers: &[ItemLayer]) {
        if layers.is_empty() && item.timeout.is_none() {
            return;
        }
        self.any = true;
        let stack = stack(layers, item.timeout);
        let (kind, name) = (item.kind, item.name.clone());
        let item = Arc::new(item);
        self.items[kind as usize].insert(name, Stacked { item, stack });
    }

    /// Whether any item has a stack.
    #[inline]
    pub(crate) fn any(&self) -> bool {
        self.any
    }

    /// The stack of the item `name` of `kind`; for an item without its own,
    /// the server-wide stack with `item` describing it. `None`, at the cost
    /// of one test, when the server has no layers.
    #[inline]
    pub(crate) fn find(
        &self,
        kind: ItemKind,
        name: &str,
        item: impl FnOnce() -> Item,
    ) -> Option<(Arc<Item>, &Next<Invocation>)> {
        if !self.any {
            return None;
        }
        if let Some(stacked) = self.items[kind as usize].get(name) {
            return Some((stacked.item.clone(), &stacked.stack));
        }
        self.all.as_ref().map(|all| (Arc::new(item()), all))
    }
}

/// The request layers' stack, around what answers the request.
pub(crate) fn request_stack(layers: &[RequestLayer]) -> Option<Next<Request>> {
    let pass_on = Next::new(PassOn);
    (!layers.is_empty()).then(|| {
        layers
            .iter()
            .rev()
            .fold(pass_on, |next, layer| (layer.wrap)(next))
    })
}

/// Runs `request` through `stack`.
pub(crate) async fn answer_request(
    stack: Next<Request>,
    request: Request,
) -> Result<Response, ErrorObject> {
    let method = request.method.clone();
    let answer = stack.run(request).await;
    answer.map_err(|error| error_object(error, "request", &method))
}

/// The bottom of the request stack: the rest of the request's work.
#[derive(Clone, Copy)]
struct PassOn;

impl Service<Request> for PassOn {
    type Response = Response;
    type Error = BoxError;
    type Future = BoxFuture<Response>;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        match request.rest.take() {
            Some(rest) => rest(request),
            None => {
                tracing::error!(
                    method = &*request.method,
                    "a request layer passed a request on twice"
                );
                Box::pin(std::future::ready(
                    Err(ErrorObject::internal_error().into()),
                ))
            }
        }
    }
}

/// `layers` (outermost first) around the handler, with `timeout` innermost.
fn stack(layers: &[ItemLayer], timeout: Option<Duration>) -> Next<Invocation> {
    let handler = Next::new(Handler { timeout });
    layers
        .iter()
        .rev()
        .fold(handler, |next, layer| (layer.wrap)(next))
}

/// Runs `invocation` through `stack`. An error cancels the invocation's
/// context, so that work the handler started and left behind (a timed-out
/// handler is dropped) is told to stop.
pub(crate) async fn invoke(
    stack: &Next<Invocation>,
    invocation: Invocation,
) -> Result<Output, ErrorObject> {
    let item = invocation.item.clone();
    let context = invocation.context.clone();
    match stack.clone().run(invocation).await {
        Ok(output) => Ok(output),
        Err(error) => {
            context.cancel();
            Err(error_object(error, item.kind.as_str(), &item.name))
        }
    }
}

/// The bottom of every stack: the handler, under the item's own timeout.
#[derive(Clone, Copy)]
struct Handler {
    timeout: Option<Duration>,
}

impl Service<Invocation> for Handler {
    type Response = Output;
    type Error = BoxError;
    type Future = BoxFuture<Output>;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, invocation: Invocation) -> Self::Future {
        let run = invocation.run.clone();
        let Some(limit) = self.timeout else {
            let future = run(invocation);
            return Box::pin(async move { future.await.map_err(Into::into) });
        };
        // Made here, so that the layers above see the JSON-RPC error the
        // request is answered with.
        let (kind, name) = (invocation.item.kind.as_str(), invocation.item.name.clone());
        let future = run(invocation);
        Box::pin(async move {
            match tokio::time::timeout(limit, future).await {
                Ok(answer) => answer.map_err(Into::into),
                Err(_) => Err(timed_out(format!(
                    "Request timed out: {kind} {name} ran longer than its limit of {} ms",
                    limit.as_millis()
                ))
                .into()),
            }
        })
    }
}

/// The JSON-RPC error a layer's `error` answers with.
pub(crate) fn error_object(error: BoxError, kind: &str, name: &str) -> ErrorObject {
    let error = match error.downcast::<ErrorObject>() {
        Ok(error) => return *error,
        Err(error) => error,
    };
    if error.is::<tower::timeout::error::Elapsed>() {
        return timed_out(format!(
            "Request timed out: {kind} {name} ran longer than its time limit"
        ));
    }
    if error.is::<tower::load_shed::error::Overloaded>() {
        return ErrorObject::new(
            error_code::SERVER_BUSY,
            format!("Server busy: {kind} {name} is at its concurrency limit; retry later"),
        );
    }
    tracing::error!(%error, kind, name, "a layer failed");
    ErrorObject::internal_error()
}

fn timed_out(message: String) -> ErrorObject {
    ErrorObject::new(error_code::REQUEST_TIMEOUT, message)
}
