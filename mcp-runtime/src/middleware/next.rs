//! The rest of a stack, type-erased: what a layer wraps, and what
//! [`from_fn`](super::from_fn) middleware calls on.

use std::any::Any;
use std::fmt;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use tower_service::Service;

use super::BoxError;

/// The future a stack answers with. Not `Send`: handlers need not be, and
/// the built-in transports run each request on the thread that received it.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = Result<T, BoxError>>>>;

/// What a stack of layers is around: [`Invocation`](super::Invocation)
/// (each item's invocation). Sealed.
pub trait Level: sealed::Sealed + 'static {
    /// What the level's services answer with.
    type Response: 'static;
}

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// The rest of the stack below a layer, ending in the handler: a tower
/// [`Service`] that can be cloned (a clone per call, as tower's
/// `oneshot` expects) and shared across threads.
///
/// Layers receive one as the service they wrap; [`from_fn`](super::from_fn)
/// middleware receives one to pass the request on with [`Next::run`].
pub struct Next<R: Level> {
    inner: Box<dyn Erased<R>>,
}

impl<R: Level> Next<R> {
    /// Erases `service`.
    pub(crate) fn new<S>(service: S) -> Self
    where
        S: Service<R, Response = R::Response> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: 'static,
    {
        Next {
            inner: Box::new(service),
        }
    }

    /// Passes `request` on: waits until the rest of the stack is ready (a
    /// concurrency limit may make it wait), then calls it.
    pub async fn run(mut self, request: R) -> Result<R::Response, BoxError> {
        poll_fn(|cx| self.inner.poll_ready(cx)).await?;
        self.inner.call(request).await
    }
}

impl<R: Level> Clone for Next<R> {
    fn clone(&self) -> Self {
        Next {
            inner: self.inner.clone_box(),
        }
    }
}

impl<R: Level> fmt::Debug for Next<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Next").finish_non_exhaustive()
    }
}

impl<R: Level> Service<R> for Next<R> {
    type Response = R::Response;
    type Error = BoxError;
    type Future = BoxFuture<R::Response>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: R) -> Self::Future {
        self.inner.call(request)
    }
}

/// A service as a stack holds it.
trait Erased<R: Level>: Send + Sync {
    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>>;
    fn call(&mut self, request: R) -> BoxFuture<R::Response>;
    fn clone_box(&self) -> Box<dyn Erased<R>>;
}

impl<R, S> Erased<R> for S
where
    R: Level,
    S: Service<R, Response = R::Response> + Clone + Send + Sync + 'static,
    S::Error: Into<BoxError>,
    S::Future: 'static,
{
    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        Service::poll_ready(self, cx).map_err(Into::into)
    }

    fn call(&mut self, request: R) -> BoxFuture<R::Response> {
        let future = Service::call(self, request);
        // A service that answers with a `BoxFuture` already (every layer
        // of this crate, `Next` itself) is not boxed a second time: an
        // allocation and a copy of the future per layer and request.
        match same_type::<S::Future, BoxFuture<R::Response>>(future) {
            Ok(boxed) => boxed,
            Err(future) => Box::pin(async move { future.await.map_err(Into::into) }),
        }
    }

    fn clone_box(&self) -> Box<dyn Erased<R>> {
        Box::new(self.clone())
    }
}

/// `value` as a `U`, when `T` is `U` (a check of type ids that the
/// compiler resolves for each `T`: no allocation, no branch at run time).
fn same_type<T: 'static, U: 'static>(value: T) -> Result<U, T> {
    let mut slot = Some(value);
    match (&mut slot as &mut dyn Any).downcast_mut::<Option<U>>() {
        Some(same) => Ok(same.take().expect("the slot was just filled")),
        None => Err(slot.take().expect("the slot was just filled")),
    }
}

#[cfg(test)]
mod tests {
    use super::same_type;

    #[test]
    fn a_value_is_cast_only_to_its_own_type() {
        assert_eq!(same_type::<u32, u32>(7), Ok(7));
        assert_eq!(same_type::<u32, u64>(7), Err(7));
    }
}
