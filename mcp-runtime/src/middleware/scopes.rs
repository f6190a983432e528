//! The scope check, built in as the outermost item layer of every item
//! that declares `scopes = [...]`: written with [`from_fn`], on the same
//! seam as a user's layers.
//!
//! Over HTTP with the server's own authorization, the gate has already
//! answered a caller without the scopes (`403 insufficient_scope`, with
//! the challenge that lets the client re-authorize) before the request is
//! dispatched: an HTTP status cannot be set once the response has begun,
//! and a streamed response begins before the handler ends. This layer is
//! what holds on every other path: a principal established by middleware
//! in front of the server, a transport of the user's own, or a handler
//! reached through [`Server::dispatch`](crate::Server).

use super::from_fn::from_fn;
use super::{BoxError, Invocation, ItemLayer, Next, Output};
use crate::protocol::{ErrorObject, error_code};

/// The built-in scope check, as a layer.
pub(crate) fn scope_layer() -> ItemLayer {
    ItemLayer::new(from_fn(check_scopes))
}

/// Refuses a caller whose principal lacks one of the item's scopes; a
/// request without a principal (no authorization configured) passes, as
/// scopes are declared for authorization to enforce.
async fn check_scopes(call: Invocation, next: Next<Invocation>) -> Result<Output, BoxError> {
    let needed = call.scopes();
    let principal = call.context().source().principal();
    if let Some(principal) = principal
        && !principal.has_scopes(needed)
    {
        return Err(insufficient_scope(needed).into());
    }
    next.run(call).await
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
