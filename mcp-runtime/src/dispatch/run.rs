//! Running what a request names: its handler (a tool, a resource read, a
//! prompt, a completion, an extension's method) or a subscription, with a
//! panic costing that one request, never the server.

use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use futures_util::FutureExt as _;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::audit;
use super::envelope::Request;
use super::layers::{changed_request, response, through_request_layers};
use super::{Dispatcher, Prepared, Reply, ResultJson, Target};
use super::{completion, extensions, prompts, resources};
use super::{request_span, subscriptions, tools};
use crate::context::{Cancellation, MethodLabel, Outbox, Scope};
use crate::middleware::{BoxFuture, Extensions, Next, Request as MiddlewareRequest, Response};
use crate::protocol::ErrorObject;
use crate::protocol::error_code::REQUEST_TIMEOUT;
use crate::protocol::method::Method;

impl Dispatcher {
    /// Answers a prepared request. Notifications the handler sends before
    /// its result go to `outbox`; `shutdown` ends long-lived requests
    /// (`subscriptions/listen`, the only ones given it) gracefully; past
    /// `limit` the handler is dropped and the request fails with `-31002`.
    ///
    /// Composed from combinators rather than written as an `async fn`: an
    /// async wrapper would keep a second copy of its arguments next to the
    /// inner future's. This future is boxed for every request that runs a
    /// handler, and kept under 1 KiB it stays in the allocator's fast
    /// per-thread cache.
    pub(super) fn run(
        self: &Arc<Self>,
        prepared: Prepared,
        target: Target,
        outbox: Outbox,
        ends: (Option<CancellationToken>, Option<Duration>),
    ) -> impl Future<Output = Reply> + 'static {
        let id = prepared.request.id.clone();
        let span = request_span(&prepared.request, &prepared.meta);
        AssertUnwindSafe(
            self.clone()
                .answer(prepared, target, outbox, ends)
                .instrument(span),
        )
        .catch_unwind()
        .map(move |answer| match answer {
            Ok(Ok(result)) => Reply::framed(&id, result),
            Ok(Err(error)) => Reply::error(Some(&id), &error),
            Err(panic) => {
                super::report_panic("request handler", &*panic);
                Reply::error(Some(&id), &ErrorObject::internal_error())
            }
        })
    }

    // `async` blocks here, not `async fn`s: an `async fn` keeps its
    // arguments twice in its state (as received, and moved into its body),
    // and these states are boxed for every request (kept under 1 KiB, the
    // allocator's per-thread cache serves them).
    #[expect(clippy::manual_async_fn, reason = "see above")]
    fn answer(
        self: Arc<Self>,
        prepared: Prepared,
        target: Target,
        outbox: Outbox,
        (shutdown, limit): (Option<CancellationToken>, Option<Duration>),
    ) -> impl Future<Output = Result<ResultJson, ErrorObject>> + 'static {
        async move {
            let Prepared {
                request,
                meta,
                source,
            } = prepared;
            if let (Target::Core(Method::SubscriptionsListen), Some(shutdown)) =
                (&target, &shutdown)
            {
                // Boxed: a stream's state is large, and inline it would be
                // copied with every other request's future.
                let tasks = subscriptions::TaskListening {
                    tasks: self.tasks.as_ref(),
                    client: &meta.client_capabilities,
                    owner: crate::tasks::owner(&source),
                };
                return Box::pin(subscriptions::listen(
                    &self,
                    &request,
                    source.principal(),
                    tasks,
                    &outbox,
                    shutdown,
                ))
                .await
                .map(|json| Bytes::from(json).into());
            }
            // Before `scope` takes the `_meta` and the source; boxed, so that
            // it costs this future one pointer.
            let observation = self.observe(&request, &meta, &source);
            let cancellation = Cancellation::default();
            // Dropping this request before it finishes (the client cancelled
            // or went away) cancels the token handlers watch.
            let cancel_on_drop = cancellation.clone().drop_guard();
            let scope = Scope {
                request_id: request.id.clone(),
                method: target.label(),
                meta,
                outbox,
                cancellation,
                app: self.app.clone(),
                source,
                extensions: Extensions::default(),
            };
            // Boxed so that this future stays small: it is moved into the
            // transport's task, and each handler's state is large.
            let result = match self.request_stack(&target) {
                None => within(limit, Box::pin(self.run_handler(&target, &request, scope))).await,
                Some(stack) => {
                    let stack = stack.clone();
                    self.clone()
                        .layered_handler(stack, target, request, (scope, limit))
                        .await
                }
            };
            // A request that timed out had its handler dropped: the guard
            // then cancels the token, for work the handler handed elsewhere.
            let timed_out = matches!(&result, Err(error) if error.code == REQUEST_TIMEOUT);
            if !timed_out {
                cancel_on_drop.disarm();
            }
            if let Some(observation) = observation {
                observation.finish(result.as_ref().map(ResultJson::observed));
            }
            result
        }
    }

    /// The request layers' stack `target` runs under, if any: tool calls,
    /// reads and gets go through the audit layer too while `mcp::audit` is
    /// listened to.
    fn request_stack(&self, target: &Target) -> Option<&Next<MiddlewareRequest>> {
        match target {
            Target::Core(method) if audit::wanted(*method) => Some(&self.audited),
            _ => self.request_layers.as_ref(),
        }
    }

    /// [`run_handler`](Self::run_handler) through the request layers, all
    /// of it boxed: the request's own future holds only the box. The
    /// handler runs with what the layers leave: params, `_meta` and
    /// extensions.
    fn layered_handler(
        self: Arc<Self>,
        stack: Next<MiddlewareRequest>,
        target: Target,
        request: Request,
        (mut scope, limit): (Scope, Option<Duration>),
    ) -> Pin<Box<dyn Future<Output = Result<ResultJson, ErrorObject>>>> {
        let view = self.request_view(&request, &scope.meta, &scope.source);
        // The handler's future boxed on its own, as without layers: inline,
        // it would make this one large, and slow to move and to allocate.
        let rest = move |view: MiddlewareRequest| -> BoxFuture<Response> {
            let changed = view.changed_message().map(changed_request);
            (scope.meta, scope.extensions) = (view.meta, view.extensions);
            Box::pin(async move {
                let request = match changed {
                    None => request,
                    Some(changed) => changed?,
                };
                let handler = Box::pin(self.run_handler(&target, &request, scope));
                Ok(response(within(limit, handler).await?))
            })
        };
        through_request_layers(stack, view, rest)
    }

    /// Runs the user code a request names.
    #[expect(clippy::manual_async_fn, reason = "see `answer`")]
    fn run_handler<'a>(
        self: &'a Arc<Self>,
        target: &'a Target,
        request: &'a Request,
        scope: Scope,
    ) -> impl Future<Output = Result<ResultJson, ErrorObject>> + 'a {
        async move {
            // `tools/call` reads the members the envelope located.
            let params = || request.params().unwrap_or("{}");
            let method = match target {
                Target::Core(method) => *method,
                Target::Extension(served) => {
                    return extensions::call(self, served, request, scope)
                        .await
                        .map(Into::into);
                }
            };
            match method {
                Method::ToolsCall => tools::call(self, request, scope).await,
                Method::ResourcesRead => {
                    resources::read(self, params(), scope).await.map(Into::into)
                }
                Method::PromptsGet => prompts::get(self, params(), scope).await.map(Into::into),
                Method::CompletionComplete => completion::complete(self, params(), scope)
                    .await
                    .map(Into::into),
                other => Err(ErrorObject::method_not_found(other.name())),
            }
        }
    }
}

/// `future`, failed with `-31002` once it has run `limit` (none: no
/// limit). The timer is made only when the future does not finish on its
/// first poll (most do not need one), and boxed: it would otherwise add its
/// size to every request's future.
async fn within<T>(
    limit: Option<Duration>,
    future: impl Future<Output = Result<T, ErrorObject>>,
) -> Result<T, ErrorObject> {
    let mut future = std::pin::pin!(future);
    let mut timer: Option<Pin<Box<tokio::time::Sleep>>> = None;
    std::future::poll_fn(|cx| {
        if let Poll::Ready(done) = future.as_mut().poll(cx) {
            return Poll::Ready(done);
        }
        let Some(limit) = limit else {
            return Poll::Pending;
        };
        let timer = timer.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(super::timed_out(limit))),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}

impl Target {
    /// The method's name, for the handler's context.
    fn label(&self) -> MethodLabel {
        match self {
            Target::Core(method) => MethodLabel::Core(*method),
            Target::Extension(served) => MethodLabel::Extension(served.name.clone()),
        }
    }
}
