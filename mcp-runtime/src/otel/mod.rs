//! OpenTelemetry traces and metrics by the semantic conventions for MCP
//! (feature `otel`).
//!
//! Each request is a SERVER span named `{mcp.method.name} {target}`
//! (`tools/call get_weather`, `prompts/get review`, `resources/read`),
//! continued from the client's trace: its parent is the `traceparent`
//! (with `tracestate` and `baggage`) the client put in the request's
//! `_meta`. It carries `mcp.method.name`, `jsonrpc.request.id`,
//! `mcp.protocol.version`, `network.transport` (`pipe` on stdio, `tcp` on
//! HTTP), `gen_ai.tool.name` and `gen_ai.operation.name = execute_tool`
//! for a tool call, `gen_ai.prompt.name`, `mcp.resource.uri`, and on
//! failure `error.type` (the JSON-RPC code, or `tool_error` for a result
//! with `isError`), `rpc.response.status_code` and an ERROR status. Each
//! request is also a point of the `mcp.server.operation.duration`
//! histogram (seconds, the conventions' buckets and attributes).
//!
//! The built-in client (and so `TestClient` and the inspector) makes a
//! CLIENT span per request, with the same name and attributes, injects
//! its context into the request's `_meta`, and records
//! `mcp.client.operation.duration`: a Rust agent's trace flows into the
//! server's.
//!
//! Tool arguments and results are recorded only when opted in
//! ([`Otel::record_tool_arguments`], [`Otel::record_tool_results`]), cut
//! to 1 KiB: they may hold secrets.
//!
//! `run()` turns it on by itself when the standard variables name a
//! collector (`OTEL_EXPORTER_OTLP_ENDPOINT`, or the `_TRACES_` and
//! `_METRICS_` ones), and the rest of the `OTEL_*` variables apply:
//! `OTEL_SERVICE_NAME` (default: the server's name), `OTEL_TRACES_SAMPLER`
//! and its argument, `OTEL_BSP_*` for the span queue,
//! `OTEL_METRIC_EXPORT_INTERVAL`, `OTEL_SDK_DISABLED=true` to turn it off.
//! Export is OTLP over HTTP (protobuf), from a thread of its own, with a
//! bounded queue: a slow or absent collector costs requests nothing, and
//! what does not fit is dropped. The queue is flushed when the server
//! stops.
//!
//! ```no_run
//! // What `run()` does with the variables set, given in code:
//! let server = mcp_runtime::server!()
//!     .otel(mcp_runtime::otel::Otel::new().record_tool_arguments(true));
//! # let _ = server;
//! ```

mod layer;
#[cfg(feature = "client")]
mod outgoing;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use opentelemetry::propagation::TextMapCompositePropagator;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{MetricExporter, SpanExporter, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::filter_fn;

pub use self::layer::{OtelLayer, Traced};
use self::layer::{Recording, TARGET};
#[cfg(feature = "client")]
pub(crate) use self::outgoing::ClientCall;

/// The variables that name a collector: any one of them turns export on.
const ENDPOINTS: [&str; 3] = [
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
];

/// Whether [`Otel::install`] ran: `run()` then starts nothing more.
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// How long a flush on shutdown may take.
const FLUSH: Duration = Duration::from_secs(5);

/// OpenTelemetry export for a server: what [`ServerBuilder::otel`](crate::ServerBuilder::otel)
/// takes, and what `run()` makes from the environment.
#[derive(Clone, Debug, Default)]
pub struct Otel {
    endpoint: Option<String>,
    service_name: Option<String>,
    recording: Recording,
}

impl Otel {
    /// Export to the collector the `OTEL_*` variables name, or to
    /// `http://localhost:4318` (OTLP/HTTP's default) when none does.
    pub fn new() -> Self {
        Otel::default()
    }

    /// Export as the environment says, if it names a collector and does
    /// not disable the SDK (`OTEL_SDK_DISABLED=true`); `None` otherwise.
    pub fn from_env() -> Option<Self> {
        let set = |name: &str| std::env::var_os(name).is_some_and(|value| !value.is_empty());
        let disabled = std::env::var("OTEL_SDK_DISABLED")
            .is_ok_and(|value| value.trim().eq_ignore_ascii_case("true"));
        (!disabled && ENDPOINTS.iter().any(|name| set(name))).then(Otel::new)
    }

    /// Export to `endpoint` (OTLP/HTTP's base URL, e.g.
    /// `http://collector:4318`) rather than where the variables say.
    pub fn endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// The `service.name` resource attribute, unless `OTEL_SERVICE_NAME`
    /// gives one. `run()` gives the server's name.
    pub fn service_name(mut self, name: impl Into<String>) -> Self {
        self.service_name = Some(name.into());
        self
    }

    /// Records a tool call's arguments on its span
    /// (`gen_ai.tool.call.arguments`, cut to 1 KiB). Off by default: the
    /// conventions make it opt-in, as arguments may hold secrets.
    pub fn record_tool_arguments(mut self, record: bool) -> Self {
        self.recording.arguments = record;
        self
    }

    /// Records a tool call's result on its span
    /// (`gen_ai.tool.call.result`, cut to 1 KiB). Off by default, likewise.
    pub fn record_tool_results(mut self, record: bool) -> Self {
        self.recording.results = record;
        self
    }

    /// The request layer this configuration records with.
    pub fn layer(&self) -> OtelLayer {
        OtelLayer::recording(self.recording)
    }

    /// Starts the exporters (spans in batches, metrics periodically), sets
    /// them as OpenTelemetry's global providers with the W3C trace-context
    /// and baggage propagators, and returns them with the `tracing` layer
    /// that feeds them the spans: add that layer to your subscriber (as
    /// `run()` does), and [`layer`](Self::layer) to the server. Keep the
    /// [`Telemetry`] until the server stops: dropping it flushes. Once it
    /// has run, `run()` starts no export of its own.
    ///
    /// # Errors
    /// When an exporter cannot be built (an endpoint that is not a URL).
    pub fn install(self) -> Result<Telemetry, OtelError> {
        let resource = self.resource();
        let mut spans = SpanExporter::builder().with_http();
        let mut metrics = MetricExporter::builder().with_http();
        if let Some(endpoint) = &self.endpoint {
            let base = endpoint.trim_end_matches('/');
            spans = spans.with_endpoint(format!("{base}/v1/traces"));
            metrics = metrics.with_endpoint(format!("{base}/v1/metrics"));
        }
        let spans = spans.build().map_err(|e| OtelError(e.to_string()))?;
        let metrics = metrics.build().map_err(|e| OtelError(e.to_string()))?;
        let tracer_provider = SdkTracerProvider::builder()
            .with_batch_exporter(spans)
            .with_resource(resource.clone())
            .build();
        let meter_provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(metrics).build())
            .with_resource(resource)
            .build();
        opentelemetry::global::set_text_map_propagator(TextMapCompositePropagator::new(vec![
            Box::new(TraceContextPropagator::new()),
            Box::new(BaggagePropagator::new()),
        ]));
        opentelemetry::global::set_meter_provider(meter_provider.clone());
        opentelemetry::global::set_tracer_provider(tracer_provider.clone());
        INSTALLED.store(true, Ordering::Relaxed);
        Ok(Telemetry {
            tracer_provider,
            meter_provider,
            recording: self.recording,
        })
    }

    /// `service.name` from `OTEL_SERVICE_NAME`, else as given; the rest
    /// from `OTEL_RESOURCE_ATTRIBUTES`.
    fn resource(&self) -> Resource {
        let builder = Resource::builder();
        match (&self.service_name, std::env::var_os("OTEL_SERVICE_NAME")) {
            (Some(name), None) => builder.with_service_name(name.clone()).build(),
            _ => builder.build(),
        }
    }
}

/// The running exporters, from [`Otel::install`]. Dropping it flushes
/// what is queued (waiting at most 5 s) and stops them.
pub struct Telemetry {
    tracer_provider: SdkTracerProvider,
    meter_provider: SdkMeterProvider,
    recording: Recording,
}

impl Telemetry {
    /// The `tracing` layer that turns the server's spans into exported
    /// OpenTelemetry spans: the request spans, and the spans of your own
    /// code inside them (the runtime's internal spans stay out).
    pub fn tracing_layer<S>(&self) -> impl tracing_subscriber::Layer<S> + Send + Sync + 'static
    where
        S: tracing::Subscriber
            + for<'span> tracing_subscriber::registry::LookupSpan<'span>
            + Send
            + Sync,
    {
        let tracer = self.tracer_provider.tracer("mcp-runtime");
        tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_filter(filter_fn(|metadata| {
                let ours = metadata.target() == TARGET;
                let users = !metadata.target().starts_with("mcp_runtime")
                    && *metadata.level() <= tracing::Level::INFO;
                ours || users
            }))
    }

    /// Whether export was started in this process (by `run()` or by hand).
    pub(crate) fn installed() -> bool {
        INSTALLED.load(Ordering::Relaxed)
    }

    /// The request layer for the server.
    pub fn layer(&self) -> OtelLayer {
        OtelLayer::recording(self.recording)
    }
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry").finish_non_exhaustive()
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Err(error) = self.tracer_provider.shutdown_with_timeout(FLUSH) {
            tracing::warn!("OpenTelemetry: the last spans were not exported: {error}");
        }
        if let Err(error) = self.meter_provider.shutdown_with_timeout(FLUSH) {
            tracing::warn!("OpenTelemetry: the last metrics were not exported: {error}");
        }
    }
}

/// Why OpenTelemetry export could not start.
#[derive(Debug)]
pub struct OtelError(String);

impl std::fmt::Display for OtelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OpenTelemetry export cannot start: {}", self.0)
    }
}

impl std::error::Error for OtelError {}
