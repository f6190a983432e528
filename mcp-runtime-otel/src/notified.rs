//! Client notifications as SERVER spans and points of
//! `mcp.server.operation.duration`: the [`OtelLayer`] observes them too,
//! since no layer sees them (nothing answers a notification).

use opentelemetry::KeyValue;

use super::layer::{
    OTHER, OtelLayer, TARGET, TraceCarrier, network_transport, parent_and_link, traceparent,
};
use mcp_runtime::middleware::{ClientNotification, NotificationObserver};
use mcp_runtime::protocol::PROTOCOL_VERSION;

/// The notifications a client of some revision sends: the histogram
/// records any other method as `_OTHER` (each made-up name would be a
/// series of its own).
const CLIENT_NOTIFICATIONS: [&str; 4] = [
    "notifications/cancelled",
    "notifications/initialized",
    "notifications/progress",
    "notifications/roots/list_changed",
];

impl NotificationObserver for OtelLayer {
    fn notified(&self, notification: &ClientNotification<'_>) {
        let method = notification.method();
        let source = notification.source();
        let version = source.negotiated_revision().unwrap_or(PROTOCOL_VERSION);
        let transport = network_transport(source);
        let sent = || traceparent(notification.traceparent(), source);
        if self.recording.spans.wanted(sent) {
            let span = tracing::info_span!(
                target: TARGET,
                "mcp.server",
                otel.name = method,
                otel.kind = "server",
                mcp.method.name = method,
                mcp.protocol.version = version,
                network.transport = transport,
            );
            let trace = TraceCarrier {
                traceparent: notification.traceparent(),
                tracestate: notification.tracestate(),
                baggage: notification.baggage(),
            };
            parent_and_link(&span, &trace, source);
            // Ends here: the server acts on a notification at once.
            drop(span);
        }
        let method = (CLIENT_NOTIFICATIONS.into_iter())
            .find(|known| *known == method)
            .unwrap_or(OTHER);
        let mut attributes = vec![
            KeyValue::new("mcp.method.name", method),
            KeyValue::new("mcp.protocol.version", version),
        ];
        if let Some(transport) = transport {
            attributes.push(KeyValue::new("network.transport", transport));
        }
        let elapsed = notification.received().elapsed().as_secs_f64();
        self.duration.histogram.record(elapsed, &attributes);
    }
}
