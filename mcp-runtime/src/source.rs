//! Where a request came from, told the same way by every transport: which
//! transport, who sent it, and what the transport attached (the HTTP
//! request). The dispatcher reads only the caller; the attachment passes
//! through to handlers untouched, so that nothing in the core depends on a
//! transport.

use std::any::Any;
use std::fmt;
use std::net::IpAddr;
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
    /// Lists show this caller only what it may use.
    hide_unpermitted: bool,
    /// The caller and the attachment, in one allocation (none for a source
    /// that has neither). Kept to one pointer: a source moves with every
    /// request's future, and the handler's future is sized to stay in the
    /// allocator's fast per-thread cache.
    details: Option<SharedDetails>,
}

/// The caller, its network address and what the transport attached
/// (`()` when nothing).
struct Details<T: ?Sized> {
    principal: Option<Principal>,
    client: Option<IpAddr>,
    /// The revision an older client negotiated with `initialize`.
    revision: Option<&'static str>,
    attachment: T,
}

type SharedDetails = Arc<Details<dyn Any + Send + Sync>>;

/// The attachment of the details a source was rebuilt from.
struct Inherited(SharedDetails);

impl fmt::Debug for RequestSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestSource")
            .field("transport", &self.transport)
            .field("principal", &self.principal())
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
    pub fn with_principal(self, principal: Option<Principal>) -> Self {
        if principal.is_none() && self.details.is_none() {
            return self;
        }
        self.changed(|details| details.principal = principal)
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
    /// (read back with [`attachment`](Self::attachment)); it replaces an
    /// earlier attachment.
    #[must_use]
    pub fn with_attachment<T: Any + Send + Sync>(mut self, attachment: T) -> Self {
        let principal = self.principal().cloned();
        let (client, revision) = (self.client_address(), self.negotiated_revision());
        self.details = Some(Arc::new(Details {
            principal,
            client,
            revision,
            attachment,
        }));
        self
    }

    /// The network address the request came from (on HTTP, the peer of
    /// the connection; behind a reverse proxy, the proxy's). Tasks of
    /// callers without a principal are counted per address.
    #[must_use]
    pub fn with_client_address(self, client: Option<IpAddr>) -> Self {
        self.changed(|details| details.client = client)
    }

    /// The protocol revision an older client negotiated with `initialize`
    /// (`2025-11-25`, ...): the adapter for those clients gives it to
    /// every request it passes on, which otherwise looks like a request of
    /// this revision (what OpenTelemetry's `mcp.protocol.version` reports).
    #[must_use]
    pub fn with_negotiated_revision(self, revision: &'static str) -> Self {
        self.changed(|details| details.revision = Some(revision))
    }

    /// The details with `change` made: in place when nobody else holds
    /// them, else in a new allocation that refers to the old one for the
    /// attachment.
    fn changed(mut self, change: impl FnOnce(&mut Details<dyn Any + Send + Sync>)) -> Self {
        let mut details: SharedDetails = match self.details.take() {
            Some(details) => details,
            None => Arc::new(Details {
                principal: None,
                client: None,
                revision: None,
                attachment: (),
            }),
        };
        if Arc::get_mut(&mut details).is_none() {
            let (principal, client, revision) =
                (details.principal.clone(), details.client, details.revision);
            details = Arc::new(Details {
                principal,
                client,
                revision,
                attachment: Inherited(details),
            });
        }
        if let Some(unique) = Arc::get_mut(&mut details) {
            change(unique);
        }
        self.details = Some(details);
        self
    }

    /// The transport the request arrived on.
    pub fn transport(&self) -> TransportKind {
        self.transport
    }

    /// The authenticated caller, if there is one.
    pub fn principal(&self) -> Option<&Principal> {
        self.details.as_ref()?.principal.as_ref()
    }

    /// The network address the request came from, where the transport
    /// knows it.
    pub fn client_address(&self) -> Option<IpAddr> {
        self.details.as_ref()?.client
    }

    /// The revision an older client negotiated, for a request that came
    /// through the adapter for those clients (see
    /// [`with_negotiated_revision`](Self::with_negotiated_revision)).
    pub fn negotiated_revision(&self) -> Option<&'static str> {
        self.details.as_ref()?.revision
    }

    /// The caller whose lists hide what it may not use, when the server
    /// hides unpermitted items.
    pub(crate) fn list_filter(&self) -> Option<&Principal> {
        self.principal().filter(|_| self.hide_unpermitted)
    }

    /// What the transport attached, if it is a `T`.
    pub fn attachment<T: Any>(&self) -> Option<&T> {
        let mut details = self.details.as_ref()?;
        loop {
            let attachment: &(dyn Any + Send + Sync) = &details.attachment;
            if let Some(found) = attachment.downcast_ref() {
                return Some(found);
            }
            details = &attachment.downcast_ref::<Inherited>()?.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_caller_and_the_attachment_are_kept_together_in_one_pointer() {
        assert_eq!(std::mem::size_of::<RequestSource>(), 24);
        let bare = RequestSource::new(TransportKind::Stdio);
        assert!(bare.details.is_none() && bare.principal().is_none());
        let alice = Principal::new("alice");
        let source = RequestSource::new(TransportKind::Http)
            .with_principal(Some(alice.clone()))
            .hiding_unpermitted(true)
            .with_attachment(7_u32);
        assert_eq!(source.principal(), Some(&alice));
        assert_eq!(source.list_filter(), Some(&alice));
        assert_eq!(source.attachment::<u32>(), Some(&7));
        assert_eq!(source.attachment::<String>(), None);
        let bob = Principal::new("bob");
        let rebound = source.with_principal(Some(bob.clone()));
        assert_eq!(rebound.principal(), Some(&bob));
        assert_eq!(rebound.attachment::<u32>(), Some(&7), "kept when unshared");
        let shared = rebound.clone();
        let carol = Principal::new("carol");
        let again = shared.with_principal(Some(carol.clone()));
        assert_eq!(again.principal(), Some(&carol));
        assert_eq!(again.attachment::<u32>(), Some(&7), "kept when shared");
        assert_eq!(
            rebound.principal(),
            Some(&bob),
            "the other holder is untouched"
        );
        assert!(
            RequestSource::default()
                .with_principal(None)
                .details
                .is_none()
        );
    }

    #[test]
    fn the_negotiated_revision_stays_with_the_caller_and_the_attachment() {
        let alice = Principal::new("alice");
        let source = RequestSource::new(TransportKind::Stdio).with_attachment(7_u32);
        assert_eq!(source.negotiated_revision(), None);
        let shared = source.clone();
        let legacy = shared
            .with_negotiated_revision("2025-11-25")
            .with_principal(Some(alice.clone()));
        assert_eq!(legacy.negotiated_revision(), Some("2025-11-25"));
        assert_eq!(legacy.principal(), Some(&alice));
        assert_eq!(legacy.attachment::<u32>(), Some(&7));
        assert_eq!(
            source.negotiated_revision(),
            None,
            "the other holder is untouched"
        );
        let moved = legacy.with_client_address(None).with_attachment("x");
        assert_eq!(moved.negotiated_revision(), Some("2025-11-25"));
    }

    #[test]
    fn the_client_address_stays_with_the_caller_and_the_attachment() {
        let here: IpAddr = "127.0.0.2".parse().unwrap();
        let alice = Principal::new("alice");
        let source = RequestSource::new(TransportKind::Http)
            .with_principal(Some(alice.clone()))
            .with_attachment(7_u32)
            .with_client_address(Some(here));
        assert_eq!(source.client_address(), Some(here));
        assert_eq!(source.attachment::<u32>(), Some(&7));
        let shared = source.clone();
        let moved = shared.with_client_address(None).with_attachment("x");
        assert_eq!(moved.client_address(), None);
        assert_eq!(moved.principal(), Some(&alice));
        assert_eq!(
            source.client_address(),
            Some(here),
            "the other holder is untouched"
        );
        let bob = Principal::new("bob");
        assert_eq!(
            source.with_principal(Some(bob)).client_address(),
            Some(here)
        );
    }
}
