//! The export as `mcp-runtime` plugins: a configuration
//! (`.with(Otel::from_env())`), a running export (`.with(&telemetry)`), or
//! the request layer alone (`.with(OtelLayer::new())`, under a subscriber
//! and providers of your own).

use std::sync::Arc;

use mcp_runtime::plugin::{Plugin, PluginError, Setup};

use super::outgoing::ClientSpans;
use super::{Otel, OtelLayer, Telemetry};

/// A configuration is a plugin: `.with(otel)` starts the export at once
/// (its `service.name` the server's name unless set), records every
/// request and notification of the server, gives its `tracing` layer to
/// the subscriber `run()` installs, and flushes when the server stops.
/// Install it first, so that its spans time the other layers too.
///
/// # Errors
/// When an exporter cannot be built (an endpoint that is not a URL, a
/// Prometheus address that cannot be bound): the build says so, naming
/// OpenTelemetry.
impl Plugin for Otel {
    fn install(self, server: &mut Setup<'_>) -> Result<(), PluginError> {
        let otel = match self.service_name {
            Some(_) => self,
            None => {
                let name = server.info().name.clone();
                self.service_name(name)
            }
        };
        let telemetry = Arc::new(otel.install()?);
        record(&telemetry, server);
        let layer = telemetry.clone();
        server.tracing_layer(move || layer.tracing_layer());
        let flushed = telemetry;
        server.on_shutdown(move |_| {
            let telemetry = flushed.clone();
            async move {
                // The flush waits on threads of its own: not on a worker.
                let _ = tokio::task::spawn_blocking(move || telemetry.flush()).await;
            }
        });
        Ok(())
    }

    fn name(&self) -> String {
        "OpenTelemetry".to_owned()
    }
}

/// The running export is a plugin: `.with(&telemetry)` records every
/// request (a layer where spans are kept, an observer where none would be)
/// and every notification, and its counters read the server's. The
/// `tracing` layer is yours to add to your subscriber
/// ([`Telemetry::tracing_layer`]).
impl Plugin for &Telemetry {
    fn install(self, server: &mut Setup<'_>) -> Result<(), PluginError> {
        record(self, server);
        Ok(())
    }

    fn name(&self) -> String {
        "OpenTelemetry".to_owned()
    }
}

/// The request layer alone is a plugin: `.with(OtelLayer::new())` makes
/// each request and notification a span, records the histograms through
/// the global meter provider (which the application sets), and traces the
/// requests of the clients made for the server (`TestClient`, the
/// inspector); the subscriber, its OpenTelemetry layer and the providers
/// are yours.
impl Plugin for OtelLayer {
    fn install(self, server: &mut Setup<'_>) -> Result<(), PluginError> {
        server.request_layer(self.clone());
        server.notification_observer(self);
        let global = opentelemetry::global::meter("mcp-runtime");
        server.client_tracer(Arc::new(ClientSpans::new(&global)));
        Ok(())
    }

    fn name(&self) -> String {
        "OpenTelemetry".to_owned()
    }
}

/// Where no span would be kept, the metrics need no layer: an observer
/// records them at a fraction of the cost.
fn record(telemetry: &Telemetry, server: &mut Setup<'_>) {
    match telemetry.makes_spans() {
        true => server.request_layer(telemetry.layer()),
        false => server.request_observer(telemetry.layer()),
    };
    server.notification_observer(telemetry.layer());
    let sources = telemetry.sources().clone();
    server.metrics_reader(move |metrics| sources.attach(metrics));
    // The clients made for the server (`TestClient`, the inspector) make
    // a CLIENT span per request.
    server.client_tracer(telemetry.client_tracer());
}
