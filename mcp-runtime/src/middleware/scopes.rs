//! The scope check, built in as the outermost item layer of every item
//! that declares `scopes = [...]`: a tower layer given to the same seam as
//! a user's layers.
//!
//! Over HTTP with the server's own authorization, the gate has already
//! answered a caller without the scopes (`403 insufficient_scope`, with
//! the challenge that lets the client re-authorize) before the request is
//! dispatched: an HTTP status cannot be set once the response has begun,
//! and a streamed response begins before the handler ends. This layer is
//! what holds on every other path: a principal established by middleware
//! in front of the server, a transport of the user's own, or a handler
//! reached through [`Server::dispatch`](crate::Server).

use std::task::{Context as TaskContext, Poll};

use tower_layer::Layer;
use tower_service::Service;

use super::{BoxError, BoxFuture, Invocation, ItemLayer, Output};
use crate::protocol::{ErrorObject, error_code};

/// The built-in scope check, as a layer.
pub(crate) fn scope_layer() -> ItemLayer {
    ItemLayer::new(ScopeCheck)
}

/// A tower layer (not a [`from_fn`](super::from_fn) one: a call it lets
/// through pays for no future of its own, only the stack's level).
#[derive(Clone, Copy, Debug)]
struct ScopeCheck;

impl<S> Layer<S> for ScopeCheck {
    type Service = Checked<S>;

    fn layer(&self, inner: S) -> Checked<S> {
        Checked { inner }
    }
}

/// The rest of the stack, behind the check.
#[derive(Clone, Debug)]
struct Checked<S> {
    inner: S,
}

impl<S> Service<Invocation> for Checked<S>
where
    S: Service<Invocation, Response = Output, Error = BoxError, Future = BoxFuture<Output>>,
{
    type Response = Output;
    type Error = BoxError;
    type Future = BoxFuture<Output>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    /// Refuses a caller whose principal lacks one of the item's scopes; a
    /// request without a principal (no authorization configured) passes,
    /// as scopes are declared for authorization to enforce.
    fn call(&mut self, call: Invocation) -> Self::Future {
        let needed = call.scopes();
        if let Some(principal) = call.context().source().principal()
            && !principal.has_scopes(needed)
        {
            let refused = insufficient_scope(needed);
            return Box::pin(std::future::ready(Err(refused.into())));
        }
        self.inner.call(call)
    }
}

/// `-31003` (HTTP 403), naming every scope the item needs, as the HTTP
/// challenge does.
pub(crate) fn insufficient_scope(needed: &[&str]) -> ErrorObject {
    let message = format!(
        "insufficient_scope: this request needs the scope(s) {}",
        needed.join(" ")
    );
    ErrorObject::new(error_code::FORBIDDEN, message)
        .with_data(serde_json::json!({ "requiredScopes": needed }))
}
