//! Middleware: tower layers around each item's invocation.
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

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

pub use tower_layer::Layer;
pub use tower_service::Service;

pub use self::from_fn::{FromFn, FromFnLayer, from_fn};
pub use self::invocation::{Invocation, ItemKind, Output};
pub(crate) use self::invocation::{Item, Runner};
pub use self::next::{BoxFuture, Level, Next};
use crate::protocol::{ErrorObject, error_code};

/// The error a layer's service may fail with, as tower's layers do.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A layer, boxed: what [`ServerBuilder::layer`](crate::ServerBuilder::layer)
/// and `#[tool(layer = ...)]` keep. Any tower [`Layer`] over
/// [`Next<Invocation>`] whose service answers with an [`Output`] and can be
/// cloned and shared across threads (tower's own layers can).
#[derive(Clone)]
pub struct ItemLayer {
    wrap: Arc<dyn Fn(Next<Invocation>) -> Next<Invocation> + Send + Sync>,
}

impl ItemLayer {
    /// Boxes `layer`.
    pub fn new<L>(layer: L) -> ItemLayer
    where
        L: Layer<Next<Invocation>> + Send + Sync + 'static,
        L::Service: Service<Invocation, Response = Output> + Clone + Send + Sync + 'static,
        <L::Service as Service<Invocation>>::Error: Into<BoxError>,
        <L::Service as Service<Invocation>>::Future: 'static,
    {
        ItemLayer {
            wrap: Arc::new(move |next| Next::new(layer.layer(next))),
        }
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

impl fmt::Debug for ItemLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemLayer").finish_non_exhaustive()
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
            Err(error_object(error, &item))
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
fn error_object(error: BoxError, item: &Item) -> ErrorObject {
    let (kind, name) = (item.kind.as_str(), &item.name);
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
