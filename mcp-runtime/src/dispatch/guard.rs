//! Running user code so that a panic costs one request, not the server.

use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt as _;

use crate::protocol::ErrorObject;

/// Which handler is running, for the log line a panic leaves.
#[derive(Clone, Copy, Debug)]
pub(super) struct Handler<'a> {
    pub(super) kind: &'static str,
    pub(super) name: &'a str,
}

impl Handler<'_> {
    /// Runs the synchronous start of a handler (argument parsing, building
    /// its future), turning a panic into an internal error.
    pub(super) fn start<T>(self, start: impl FnOnce() -> T) -> Result<T, ErrorObject> {
        std::panic::catch_unwind(AssertUnwindSafe(start)).map_err(|panic| self.panicked(&*panic))
    }

    /// Awaits a handler's future, turning a panic into an internal error.
    pub(super) async fn finish<F: Future>(self, future: F) -> Result<F::Output, ErrorObject> {
        AssertUnwindSafe(future)
            .catch_unwind()
            .await
            .map_err(|panic| self.panicked(&*panic))
    }

    fn panicked(self, panic: &(dyn std::any::Any + Send)) -> ErrorObject {
        tracing::error!(
            kind = self.kind,
            name = self.name,
            panic = super::panic_message(panic),
            "handler panicked"
        );
        ErrorObject::internal_error()
    }
}
