//! Running user code so that a panic costs one request, not the server.

use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt as _;

use crate::context::Context;
use crate::protocol::{ErrorObject, error_code};
use crate::state::{Requirement, RequirementKind};

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

    /// Checks that every request extension the handler's `#[ctx]`
    /// parameters take is attached: without one it does not run, and the
    /// request is answered with an internal error naming the type (a
    /// server's mistake: no request layer attached it).
    pub(super) fn needs(
        self,
        requires: &[&[Requirement]],
        context: &Context,
    ) -> Result<(), ErrorObject> {
        let missing = (requires.iter().flat_map(|r| r.iter()))
            .filter(|r| r.kind() == RequirementKind::Extension)
            .find(|r| !context.scope().extensions.has(r.id()));
        let Some(missing) = missing else {
            return Ok(());
        };
        let (kind, name, ty) = (self.kind, self.name, missing.name());
        tracing::error!(
            kind,
            name,
            extension = ty,
            "a handler takes a request extension no request layer attached"
        );
        Err(ErrorObject::new(
            error_code::INTERNAL_ERROR,
            format!(
                "Internal error: {kind} {name} takes `#[ctx] Extension<{ty}>`, and no request layer attached a `{ty}` to this request"
            ),
        ))
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
