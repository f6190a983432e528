//! What a notification observer sees: one notification from the client,
//! before the server acts on it.
//!
//! A stateless server answers no notification: `notifications/cancelled`
//! stops a request on stdio (an HTTP client closes its stream instead),
//! and an older client's `notifications/initialized` ends its handshake.
//! They pass through no layer, since nothing answers them; an observer
//! ([`plugin::notification_observer`](crate::plugin::notification_observer))
//! sees each one, on every transport, for tracing or counting.

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use crate::source::RequestSource;

/// One notification from the client.
pub struct ClientNotification<'a> {
    pub(crate) method: &'a str,
    pub(crate) params: Option<&'a str>,
    pub(crate) trace: TraceContext,
    pub(crate) source: &'a RequestSource,
    pub(crate) received: Instant,
}

impl<'a> ClientNotification<'a> {
    /// The notification's method, e.g. `notifications/cancelled`.
    pub fn method(&self) -> &'a str {
        self.method
    }

    /// Its params as JSON text, `_meta` included; `None` when absent.
    pub fn params(&self) -> Option<&'a str> {
        self.params
    }

    /// The W3C `traceparent` the client put in `params._meta`.
    pub fn traceparent(&self) -> Option<&str> {
        self.trace.traceparent.as_deref()
    }

    /// The W3C `tracestate` in `params._meta`.
    pub fn tracestate(&self) -> Option<&str> {
        self.trace.tracestate.as_deref()
    }

    /// The W3C `baggage` in `params._meta`.
    pub fn baggage(&self) -> Option<&str> {
        self.trace.baggage.as_deref()
    }

    /// Where it came from: the transport, the caller, and on HTTP the
    /// request it arrived in.
    pub fn source(&self) -> &'a RequestSource {
        self.source
    }

    /// When the transport read it.
    pub fn received(&self) -> Instant {
        self.received
    }
}

impl fmt::Debug for ClientNotification<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientNotification")
            .field("method", &self.method)
            .finish_non_exhaustive()
    }
}

/// The trace context keys of a notification's `params._meta`, unprefixed
/// as SEP-414 writes them. Anything unreadable is absent: a notification
/// gets no error.
#[derive(Default)]
pub(crate) struct TraceContext {
    traceparent: Option<String>,
    tracestate: Option<String>,
    baggage: Option<String>,
}

impl TraceContext {
    /// Read from `params` (JSON text) as a `Value`: notifications are
    /// rare, and its parser is in every binary already (a struct of its
    /// own would add code to servers that observe nothing).
    pub(crate) fn read(params: Option<&str>) -> TraceContext {
        let params = params.and_then(|params| serde_json::from_str::<Value>(params).ok());
        let meta = params.as_ref().and_then(|params| params.get("_meta"));
        let key = |name: &str| {
            let value = meta?.get(name)?.as_str()?;
            Some(value.to_owned())
        };
        TraceContext {
            traceparent: key("traceparent"),
            tracestate: key("tracestate"),
            baggage: key("baggage"),
        }
    }
}

/// Sees every notification from the client, before the server acts on it.
/// Called on the transport's task: keep it short (record, count, hand
/// off). A closure `Fn(&ClientNotification<'_>)` is one.
pub trait NotificationObserver: Send + Sync + 'static {
    /// `notification` arrived.
    fn notified(&self, notification: &ClientNotification<'_>);
}

impl<F> NotificationObserver for F
where
    F: Fn(&ClientNotification<'_>) + Send + Sync + 'static,
{
    fn notified(&self, notification: &ClientNotification<'_>) {
        self(notification);
    }
}

/// The observers a server was given, in order.
#[derive(Clone, Default)]
pub(crate) struct Observers(Arc<[Arc<dyn NotificationObserver>]>);

impl Observers {
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Arc<dyn NotificationObserver>> {
        self.0.iter()
    }
}

impl FromIterator<Arc<dyn NotificationObserver>> for Observers {
    fn from_iter<I: IntoIterator<Item = Arc<dyn NotificationObserver>>>(iter: I) -> Self {
        Observers(iter.into_iter().collect())
    }
}

impl fmt::Debug for Observers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} notification observers", self.0.len())
    }
}
