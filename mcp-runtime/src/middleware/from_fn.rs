//! Middleware written as an async function, as axum's
//! `middleware::from_fn`.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use tower_layer::Layer;
use tower_service::Service;

use super::BoxError;
use super::next::{BoxFuture, Level, Next};

/// A layer made of an async function that receives the request and the
/// rest of the stack, and may pass the request on (`next.run(request)`),
/// answer without it, or change what it answers.
///
/// ```
/// use mcp_runtime::ErrorObject;
/// use mcp_runtime::middleware::{self, BoxError, Invocation, Next, Output};
///
/// /// Refuses to delete anything under `/etc`.
/// async fn guard(call: Invocation, next: Next<Invocation>) -> Result<Output, BoxError> {
///     let path = call.arguments_as::<serde_json::Value>()?["path"].clone();
///     if path.as_str().is_some_and(|p| p.starts_with("/etc")) {
///         return Err(ErrorObject::invalid_params("paths under /etc are off limits").into());
///     }
///     next.run(call).await
/// }
///
/// let layer = middleware::from_fn(guard);
/// # let _ = layer;
/// ```
pub fn from_fn<F>(f: F) -> FromFnLayer<F> {
    FromFnLayer { f: Arc::new(f) }
}

/// The layer [`from_fn`] makes.
pub struct FromFnLayer<F> {
    f: Arc<F>,
}

impl<F> Clone for FromFnLayer<F> {
    fn clone(&self) -> Self {
        FromFnLayer { f: self.f.clone() }
    }
}

impl<F> fmt::Debug for FromFnLayer<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FromFnLayer").finish_non_exhaustive()
    }
}

impl<F, S> Layer<S> for FromFnLayer<F> {
    type Service = FromFn<F, S>;

    fn layer(&self, inner: S) -> Self::Service {
        FromFn {
            f: self.f.clone(),
            inner,
        }
    }
}

/// The service [`FromFnLayer`] wraps the rest of the stack in.
pub struct FromFn<F, S> {
    f: Arc<F>,
    inner: S,
}

impl<F, S: Clone> Clone for FromFn<F, S> {
    fn clone(&self) -> Self {
        FromFn {
            f: self.f.clone(),
            inner: self.inner.clone(),
        }
    }
}

impl<F, S> fmt::Debug for FromFn<F, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FromFn").finish_non_exhaustive()
    }
}

impl<F, S, Fut, E, R> Service<R> for FromFn<F, S>
where
    R: Level,
    S: Service<R, Response = R::Response> + Clone + Send + Sync + 'static,
    S::Error: Into<BoxError>,
    S::Future: 'static,
    F: Fn(R, Next<R>) -> Fut,
    Fut: Future<Output = Result<R::Response, E>> + 'static,
    E: Into<BoxError>,
{
    type Response = R::Response;
    type Error = BoxError;
    type Future = BoxFuture<R::Response>;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        // The rest of the stack is made ready when the function runs it.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: R) -> Self::Future {
        // The rest of the stack as `Next`: erased here, so that a
        // function layer can sit anywhere in a tuple of layers.
        let next = Next::new(self.inner.clone());
        let future = (self.f)(request, next);
        Box::pin(async move { future.await.map_err(Into::into) })
    }
}
