//! Where a request came from, told the same way by every transport: which
//! transport, who sent it, and what the transport attached (the HTTP
//! request). The dispatcher reads only the caller; the attachment passes
//! through to handlers untouched, so that nothing in the core depends on a
//! transport.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use crate::security::Principal;

/// The transport a request arrived on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TransportKind {
    /// Handed to the server in this process ([`Server::exchange`](crate::Server::exchange),
    /// the test client, the inspector).
    #[default]
    InProcess,
    /// Newline-delimited JSON-RPC on a pair of byte streams.
    Stdio,
    /// Streamable HTTP.
    Http,
}

/// Where a request came from: the transport, the authenticated caller (if
/// any) and the transport's own description of the request (on HTTP, the
/// `HttpRequest`). Cheap to clone.
#[derive(Clone, Default)]
pub struct RequestSource {
    transport: TransportKind,
    principal: Option<Principal>,
    /// Lists show this caller only what it may use.
    hide_unpermitted: bool,
    attachment: Option<Arc<dyn Any + Send + Sync>>,
}

impl fmt::Debug for RequestSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestSource")
            .field("transport", &self.transport)
            .field("principal", &self.principal)
            .field("hide_unpermitted", &self.hide_unpermitted)
            .finish_non_exhaustive()
    }
}

impl RequestSource {
    /// A request that arrived on `transport`, from nobody authenticated.
    pub fn new(transport: TransportKind) -> Self {
        RequestSource {
            transport,
            ..RequestSource::default()
        }
    }

    /// The caller, as authentication established it.
    #[must_use]
    pub fn with_principal(mut self, principal: Option<Principal>) -> Self {
        self.principal = principal;
        self
    }

    /// Whether lists answered to this source leave out what the caller
    /// may not use (the scopes of each tool, prompt and resource), as
    /// `Authorization::hide_unpermitted` does on HTTP.
    #[must_use]
    pub fn hiding_unpermitted(mut self, hide: bool) -> Self {
        self.hide_unpermitted = hide;
        self
    }

    /// Attaches the transport's description of the request, for handlers
    /// (read back with [`attachment`](Self::attachment)).
    #[must_use]
    pub fn with_attachment<T: Any + Send + Sync>(mut self, attachment: T) -> Self {
        self.attachment = Some(Arc::new(attachment));
        self
    }

    /// The transport the request arrived on.
    pub fn transport(&self) -> TransportKind {
        self.transport
    }

    /// The authenticated caller, if there is one.
    pub fn principal(&self) -> Option<&Principal> {
        self.principal.as_ref()
    }

    /// The caller whose lists hide what it may not use, when the server
    /// hides unpermitted items.
    pub(crate) fn list_filter(&self) -> Option<&Principal> {
        self.principal.as_ref().filter(|_| self.hide_unpermitted)
    }

    /// What the transport attached, if it is a `T`.
    pub fn attachment<T: Any>(&self) -> Option<&T> {
        self.attachment.as_deref()?.downcast_ref()
    }
}
