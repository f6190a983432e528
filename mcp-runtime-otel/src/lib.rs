//! OpenTelemetry traces and metrics for `mcp-runtime` servers, by the
//! semantic conventions for MCP.
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
//! On HTTP, the request's own `traceparent` header (the ambient context)
//! is a link of the span when `_meta` has a trace context too, and its
//! parent when `_meta` has none. Each client notification
//! (`notifications/cancelled`, an older client's
//! `notifications/initialized`) is a SERVER span named by its method and
//! a point of the histogram too.
//!
//! The histogram's series are bounded whatever clients send: a method the
//! server does not serve, a tool or prompt it does not have, and a
//! protocol version it does not speak are recorded as `_OTHER` (as
//! OpenTelemetry records unknown HTTP methods), and so are the method and
//! name of a request refused before they were looked up, and a
//! notification method no client revision defines. The spans carry the
//! names as sent. Spans carry no `code.*` attributes (the build machine's
//! paths).
//!
//! The built-in client (and so `TestClient` and the inspector of a server
//! given the export) makes a CLIENT span per request, with the same name
//! and attributes, injects its context into the request's `_meta`, and
//! records `mcp.client.operation.duration`: a Rust agent's trace flows
//! into the server's.
//!
//! Tool arguments and results are recorded only when opted in
//! ([`Otel::record_tool_arguments`], [`Otel::record_tool_results`]), cut
//! to 1 KiB: they may hold secrets.
//!
//! Beside the conventions' histogram, the runtime's own metrics: requests
//! in flight (`mcp_runtime.requests.active`), refusals by reason
//! (`mcp_runtime.refusals`: 429, 503, 413, 504, a `Host` or `Origin` not
//! allowed), tasks running, subscriptions open and shared-store errors
//! (see `mcp_runtime::metrics`).
//!
//! [`Otel::from_env`] reads the standard variables: a collector named by
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (or the `_TRACES_` and `_METRICS_` ones),
//! or `OTEL_METRICS_EXPORTER=prometheus`. The rest of the `OTEL_*`
//! variables apply: `OTEL_SERVICE_NAME` (default: the server's name),
//! `OTEL_TRACES_SAMPLER` and its argument, `OTEL_BSP_*` for the span
//! queue, `OTEL_METRIC_EXPORT_INTERVAL`, `OTEL_TRACES_EXPORTER` and
//! `OTEL_METRICS_EXPORTER` (`otlp`, `prometheus`, `none`; `console` for
//! traces: a line per span on stderr, never stdout),
//! `OTEL_EXPORTER_PROMETHEUS_HOST` and `_PORT` (default `localhost:9464`),
//! `OTEL_SDK_DISABLED=true` to turn it all off.
//!
//! Export is OTLP over HTTP (protobuf), from a thread of its own, with a
//! bounded queue (`OTEL_BSP_MAX_QUEUE_SIZE`, 2,048 spans): a slow or absent
//! collector costs requests nothing, what does not fit is dropped, and the
//! SDK logs how many at shutdown. The queue is flushed when the server
//! stops.
//!
//! The Prometheus endpoint (`GET /metrics`, the text format) listens on an
//! address of its own, served by a thread of its own: never the MCP
//! endpoint's address, which may be public. On a loopback address it
//! answers only loopback `Host` names, as the MCP endpoint does.
//!
//! ```no_run
//! // Export as the variables say (nothing when none asks), installed
//! // first so that its spans time the other layers too:
//! mcp_runtime::server!()
//!     .with(mcp_runtime_otel::Otel::from_env())
//!     .run();
//! // The same, given in code:
//! let server = mcp_runtime::server!()
//!     .with(mcp_runtime_otel::Otel::new().record_tool_arguments(true));
//! # let _ = server;
//! ```
//!
//! `.with(otel)` starts the export at once. It adds the `tracing` layer
//! that turns spans into OpenTelemetry spans to the subscriber `run()`
//! installs; a server served otherwise (`serve_http`, `http_service`)
//! under a subscriber of your own takes [`Otel::install`]'s
//! [`Telemetry`]: add its [`tracing_layer`](Telemetry::tracing_layer) to
//! your subscriber and give it to the server, `.with(&telemetry)`.

mod console;
mod counters;
mod layer;
mod notified;
mod outgoing;
mod plugins;
mod scrape;
mod slots;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{MetricExporter, SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer as _;

use self::counters::{Counters, Sources};
pub use self::layer::{OtelLayer, Traced};
use self::layer::{Recording, ServerDuration, Spans};
use self::outgoing::ClientSpans;
use self::scrape::PrometheusEndpoint;
use mcp_runtime::diagnostics::AUDIT_TARGET;

/// The variables that name a collector: any one of them turns export on.
const ENDPOINTS: [&str; 3] = [
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
];

/// How long the flush on shutdown may take, spans and metrics together.
const FLUSH: Duration = Duration::from_secs(5);

/// The Prometheus endpoint's address when the variables do not say
/// (OpenTelemetry's defaults for `OTEL_EXPORTER_PROMETHEUS_HOST` and
/// `_PORT`).
const PROMETHEUS_DEFAULT: (&str, &str) = ("localhost", "9464");

/// OpenTelemetry export for a server: what [`ServerBuilder::with(Otel)`](mcp_runtime::ServerBuilder::with)
/// takes, and what [`from_env`](Otel::from_env) makes from the environment.
#[derive(Clone, Debug)]
pub struct Otel {
    endpoint: Option<String>,
    service_name: Option<String>,
    recording: Recording,
    otlp_traces: bool,
    otlp_metrics: bool,
    /// Spans to stderr, a line each (`OTEL_TRACES_EXPORTER=console`).
    console_traces: bool,
    prometheus: Option<String>,
    /// The application's own providers, used instead of exporters.
    providers: Option<(SdkTracerProvider, SdkMeterProvider)>,
}

impl Default for Otel {
    fn default() -> Self {
        Otel {
            endpoint: None,
            service_name: None,
            recording: Recording::default(),
            otlp_traces: true,
            otlp_metrics: true,
            console_traces: false,
            prometheus: None,
            providers: None,
        }
    }
}

impl Otel {
    /// Export traces and metrics over OTLP to the collector the `OTEL_*`
    /// variables name, or to `http://localhost:4318` (OTLP/HTTP's default)
    /// when none does.
    pub fn new() -> Self {
        Otel::default()
    }

    /// Export as the environment says, unless it says nothing or disables
    /// the SDK (`OTEL_SDK_DISABLED=true`): OTLP when a variable names a
    /// collector (traces and metrics, each unless `OTEL_TRACES_EXPORTER` or
    /// `OTEL_METRICS_EXPORTER` leaves `otlp` out), the Prometheus
    /// endpoint when `OTEL_METRICS_EXPORTER` names `prometheus`, and spans
    /// on stderr when `OTEL_TRACES_EXPORTER` names `console`. `None` when
    /// none of them.
    pub fn from_env() -> Option<Self> {
        Otel::from_vars(|name| {
            std::env::var(name)
                .ok()
                .filter(|value| !value.trim().is_empty())
        })
    }

    /// [`from_env`](Self::from_env) with the variables `var` gives.
    fn from_vars(var: impl Fn(&str) -> Option<String>) -> Option<Self> {
        let disabled =
            var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        let names = |name: &str, wanted: &str| {
            var(name).map_or(wanted == "otlp", |list| {
                list.split(',')
                    .any(|item| item.trim().eq_ignore_ascii_case(wanted))
            })
        };
        let collector = ENDPOINTS.iter().any(|name| var(name).is_some());
        let otel = Otel {
            otlp_traces: collector && names("OTEL_TRACES_EXPORTER", "otlp"),
            otlp_metrics: collector && names("OTEL_METRICS_EXPORTER", "otlp"),
            console_traces: names("OTEL_TRACES_EXPORTER", "console"),
            prometheus: names("OTEL_METRICS_EXPORTER", "prometheus").then(|| {
                let host = var("OTEL_EXPORTER_PROMETHEUS_HOST");
                let port = var("OTEL_EXPORTER_PROMETHEUS_PORT");
                let host = host.as_deref().unwrap_or(PROMETHEUS_DEFAULT.0);
                let port = port.as_deref().unwrap_or(PROMETHEUS_DEFAULT.1);
                match host.contains(':') && !host.starts_with('[') {
                    true => format!("[{host}]:{port}"),
                    false => format!("{host}:{port}"),
                }
            }),
            ..Otel::default()
        };
        let wanted = otel.otlp_traces || otel.otlp_metrics || otel.prometheus.is_some();
        let wanted = wanted || otel.console_traces;
        (!disabled && wanted).then_some(otel)
    }

    /// Also serve the metrics in Prometheus's text format at
    /// `http://{address}/metrics` (`address` as `host:port`; port 0 picks
    /// one, which [`Telemetry::prometheus_address`] tells). Keep it on
    /// loopback or a private network: it is a listener of its own, never
    /// the MCP endpoint.
    ///
    /// It serves 16 connections at once, shared by client address (IPv6:
    /// by /64): one address holds at most 4, and when all 16 are taken a
    /// newcomer takes the oldest connection of an address that holds at
    /// least two more than it does. A connection that has not sent a
    /// complete request head within 5 s (after its accept, or after its
    /// last answer when kept alive) is closed, and none lasts more than
    /// 30 s. So a flood of idle or half-sent sockets from a few addresses
    /// does not keep a scraper out; only with 16 addresses holding one
    /// connection each does a new one wait, for at most 5 s while they
    /// send nothing (30 s if they keep sending requests).
    pub fn prometheus(mut self, address: impl Into<String>) -> Self {
        self.prometheus = Some(address.into());
        self
    }

    /// No OTLP export (of traces or metrics): with
    /// [`prometheus`](Self::prometheus), the metrics are scraped only.
    pub fn without_otlp(mut self) -> Self {
        self.otlp_traces = false;
        self.otlp_metrics = false;
        self
    }

    /// Export to `endpoint` (OTLP/HTTP's base URL, e.g.
    /// `http://collector:4318`) rather than where the variables say.
    pub fn endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// The `service.name` resource attribute, unless `OTEL_SERVICE_NAME`
    /// gives one. As a plugin, the server's name when not set.
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

    /// The request layer this configuration records with, for a stack of
    /// your own; a server takes the configuration or the running export as
    /// a plugin instead (`.with(otel)`, `.with(&telemetry)`, see
    /// [`Telemetry::layer`]).
    pub fn layer(&self) -> OtelLayer {
        let duration = ServerDuration::default();
        OtelLayer::recording(self.recording, counters::Active::default(), duration)
    }

    /// Records through `tracer_provider` and `meter_provider`, built by
    /// the application as the OpenTelemetry ecosystem does (its exporters,
    /// sampler, resource and readers), instead of the exporters this
    /// configuration would start: the endpoint, the service name and the
    /// Prometheus endpoint are then the providers' business. Every request
    /// is a span (the providers' sampler decides what is kept). The
    /// providers stay the application's: [`Telemetry::flush`] flushes them
    /// and does not shut them down.
    pub fn providers(
        mut self,
        tracer_provider: SdkTracerProvider,
        meter_provider: SdkMeterProvider,
    ) -> Self {
        self.providers = Some((tracer_provider, meter_provider));
        self
    }

    /// Starts the exporters (spans in batches, metrics periodically), or
    /// takes the application's [`providers`](Self::providers), and returns
    /// the running export: add its [`tracing_layer`](Telemetry::tracing_layer)
    /// to your subscriber, and give it to the server (`.with(&telemetry)`).
    /// Keep it until the server stops: dropping it flushes. `.with(otel)`
    /// does all of this for a server `run()` serves. Nothing global is set:
    /// neither OpenTelemetry's global providers nor its propagator (the
    /// request spans read and write the W3C trace context and baggage the
    /// MCP conventions carry in `_meta`).
    ///
    /// # Errors
    /// When an exporter cannot be built (an endpoint that is not a URL, a
    /// Prometheus address that cannot be bound), or a Prometheus endpoint
    /// is asked of providers of the application's (add
    /// `opentelemetry-prometheus`'s reader to its meter provider instead).
    pub fn install(self) -> Result<Telemetry, OtelError> {
        if let Some((tracer_provider, meter_provider)) = self.providers.clone() {
            if self.prometheus.is_some() {
                return Err(OtelError(
                    "the Prometheus endpoint is a reader of the meter provider this crate builds,                      and the providers are the application's: add opentelemetry-prometheus's                      reader to that meter provider instead"
                        .to_owned(),
                ));
            }
            let mut telemetry = Telemetry::over(tracer_provider, meter_provider, Ownership::Theirs);
            telemetry.recording = self.recording;
            return Ok(telemetry);
        }
        let resource = self.resource();
        let tracer_provider = self.tracer_provider(resource.clone())?;
        let (meters, prometheus) = self.meter_provider(resource)?;
        let spans = match self.otlp_traces || self.console_traces {
            true => Spans::for_sampler(
                std::env::var("OTEL_TRACES_SAMPLER").ok().as_deref(),
                std::env::var("OTEL_TRACES_SAMPLER_ARG").ok().as_deref(),
            ),
            false => Spans::Never,
        };
        let mut telemetry = Telemetry::over(tracer_provider, meters, Ownership::Ours);
        telemetry.recording = Recording {
            spans,
            ..self.recording
        };
        telemetry.prometheus = prometheus;
        Ok(telemetry)
    }

    /// An exporter's builder sending to the given endpoint's `path` for
    /// its signal, when an endpoint was given (else where the variables
    /// say).
    fn sending_to<B: WithExportConfig>(&self, builder: B, path: &str) -> B {
        match self.endpoint.as_deref() {
            Some(base) => builder.with_endpoint(format!("{}{path}", base.trim_end_matches('/'))),
            None => builder,
        }
    }

    /// Spans in batches to the OTLP collector, if they are exported.
    fn tracer_provider(&self, resource: Resource) -> Result<SdkTracerProvider, OtelError> {
        let mut provider = SdkTracerProvider::builder().with_resource(resource);
        if self.otlp_traces {
            let spans = self.sending_to(SpanExporter::builder().with_http(), "/v1/traces");
            let spans = spans.build().map_err(|e| OtelError(e.to_string()))?;
            provider = provider.with_batch_exporter(spans);
        }
        if self.console_traces {
            // In batches too: written from the exporter's thread.
            provider = provider.with_batch_exporter(console::ConsoleExporter);
        }
        Ok(provider.build())
    }

    /// Metrics read periodically for the OTLP collector and on each scrape
    /// of the Prometheus endpoint, as configured; the endpoint listens
    /// before anything global is set, so a taken port changes nothing.
    fn meter_provider(
        &self,
        resource: Resource,
    ) -> Result<(SdkMeterProvider, Option<PrometheusEndpoint>), OtelError> {
        let mut provider = SdkMeterProvider::builder().with_resource(resource);
        if self.otlp_metrics {
            let metrics = self.sending_to(MetricExporter::builder().with_http(), "/v1/metrics");
            let metrics = metrics.build().map_err(|e| OtelError(e.to_string()))?;
            provider = provider.with_reader(PeriodicReader::builder(metrics).build());
        }
        let mut endpoint = None;
        if let Some(address) = &self.prometheus {
            let registry = ::prometheus::Registry::new();
            let reader = opentelemetry_prometheus::exporter()
                .with_registry(registry.clone())
                .build()
                .map_err(|e| OtelError(e.to_string()))?;
            endpoint = Some(PrometheusEndpoint::start(address, registry)?);
            provider = provider.with_reader(reader);
        }
        Ok((provider.build(), endpoint))
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

/// The running export, from [`Otel::install`]: its providers, the
/// instruments made from them, and the servers it reads the counters of.
/// Dropping it flushes what is queued and stops the exporters it started,
/// waiting at most 5 s in all (the spans and the metrics are flushed at
/// once): a collector that never answers delays the process's exit by
/// 5 s, no more. Several exports may run in one process, each server
/// recording into its own: nothing of it is global.
pub struct Telemetry {
    tracer_provider: SdkTracerProvider,
    meter_provider: SdkMeterProvider,
    /// Whether the providers are this crate's to shut down.
    ownership: Ownership,
    recording: Recording,
    /// `mcp.server.operation.duration`, from the meter provider.
    duration: ServerDuration,
    /// The client's CLIENT spans and `mcp.client.operation.duration`.
    client: Arc<ClientSpans>,
    _counters: Counters,
    /// The servers the export was given to, whose counters it reads.
    sources: Arc<Sources>,
    prometheus: Option<PrometheusEndpoint>,
    /// Whether [`flush`](Telemetry::flush) ran: the providers end once.
    flushed: AtomicBool,
}

/// Whose providers a [`Telemetry`] records through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ownership {
    /// Built by [`Otel::install`]: shut down when the export ends.
    Ours,
    /// The application's ([`Otel::providers`]): flushed, left running.
    Theirs,
}

impl Telemetry {
    /// The export over `tracer_provider` and `meter_provider`, with its
    /// instruments registered on the meter provider.
    fn over(
        tracer_provider: SdkTracerProvider,
        meter_provider: SdkMeterProvider,
        ownership: Ownership,
    ) -> Telemetry {
        let meter = meter_provider.meter("mcp-runtime");
        let sources = Arc::new(Sources::default());
        Telemetry {
            _counters: Counters::register(&meter, &sources),
            duration: ServerDuration::from_meter(&meter),
            client: Arc::new(ClientSpans::new(&meter)),
            tracer_provider,
            meter_provider,
            ownership,
            recording: Recording::default(),
            sources,
            prometheus: None,
            flushed: AtomicBool::new(false),
        }
    }

    /// The tracer provider the spans are exported through (for spans of
    /// your own outside `tracing`).
    pub fn tracer_provider(&self) -> &SdkTracerProvider {
        &self.tracer_provider
    }

    /// The meter provider the metrics are recorded into (for instruments
    /// of your own).
    pub fn meter_provider(&self) -> &SdkMeterProvider {
        &self.meter_provider
    }

    /// The tracer of the built-in client's requests (what the plugins
    /// give the clients made for the server; give it to others with
    /// `Client::set_tracer`).
    pub fn client_tracer(&self) -> mcp_runtime::diagnostics::SharedTracer {
        self.client.clone()
    }
}

impl Telemetry {
    /// The `tracing` layer that turns the server's spans into exported
    /// OpenTelemetry spans: the request spans, and the spans of your own
    /// code inside them (the runtime's internal spans stay out).
    pub fn tracing_layer<S>(&self) -> impl tracing_subscriber::Layer<S> + Send + Sync + use<S>
    where
        S: tracing::Subscriber
            + for<'span> tracing_subscriber::registry::LookupSpan<'span>
            + Send
            + Sync,
    {
        let tracer = self.tracer_provider.tracer("mcp-runtime");
        // No `code.*` attributes: `code.file.path` is where the source was
        // on the build machine (absolute for a dependency from the registry:
        // a home directory, a user name), which the collector does not need.
        tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_location(false)
            .with_filter(ExportFilter)
    }

    /// The request layer for the server, which observes its notifications
    /// too. Give the running export to the server as a plugin,
    /// `.with(&telemetry)`, which installs it as a request layer where spans
    /// are kept and as a request observer where no span would be
    /// ([`makes_spans`](Self::makes_spans) is false: the same metrics, at a
    /// fraction of the cost), and as a notification observer. `.with(otel)`
    /// chooses so too.
    pub fn layer(&self) -> OtelLayer {
        let active = self.sources.active().clone();
        OtelLayer::recording(self.recording, active, self.duration.clone())
    }

    /// What reads the counters of the servers the export is given to.
    pub(crate) fn sources(&self) -> &Arc<Sources> {
        &self.sources
    }

    /// Whether any request would get a span: traces are exported and the
    /// sampler (`OTEL_TRACES_SAMPLER`) is not `always_off` or a ratio of 0.
    pub fn makes_spans(&self) -> bool {
        self.recording.spans != Spans::Never
    }

    /// Where the Prometheus endpoint listens, if it was asked for.
    pub fn prometheus_address(&self) -> Option<std::net::SocketAddr> {
        self.prometheus.as_ref().map(PrometheusEndpoint::address)
    }
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry").finish_non_exhaustive()
    }
}

impl Telemetry {
    /// Exports what is queued, waiting at most 5 s in all, and ends the
    /// export: the providers [`Otel::install`] built are shut down, the
    /// application's are flushed and left running. What the server's
    /// shutdown does under `.with(otel)` (a blocking wait: call it from a
    /// blocking thread). Once only; dropping the telemetry does it too, if
    /// it has not run.
    pub fn flush(&self) {
        if !self.flushed.swap(true, Ordering::AcqRel) {
            flush(&self.tracer_provider, &self.meter_provider, self.ownership);
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        // No scrape after this: the endpoint stops first.
        drop(self.prometheus.take());
        self.flush();
    }
}

/// What a provider's shutdown answered, and which signal it was.
type Flushed = (&'static str, OTelSdkResult);

/// Shuts both providers down at once, waiting at most [`FLUSH`] in all.
/// One after the other, a collector that never answers cost a whole wait
/// per signal (10 s: the SDK's metric reader waits 5 s whatever it is
/// told). On threads of their own, the two waits overlap; a shutdown still
/// running at the bound is left to end by itself (the SDK bounds each
/// wait) rather than hold up the process's exit.
fn flush(spans: &SdkTracerProvider, metrics: &SdkMeterProvider, ownership: Ownership) {
    let deadline = Instant::now() + FLUSH;
    let (done, finished) = mpsc::channel::<Flushed>();
    let (spans, metrics) = (spans.clone(), metrics.clone());
    let mut pending = Vec::new();
    let ours = ownership == Ownership::Ours;
    if on_own_thread("spans", done.clone(), move || match ours {
        true => spans.shutdown_with_timeout(FLUSH),
        false => spans.force_flush(),
    }) {
        pending.push("spans");
    }
    if on_own_thread("metrics", done, move || match ours {
        true => metrics.shutdown_with_timeout(FLUSH),
        false => metrics.force_flush(),
    }) {
        pending.push("metrics");
    }
    while !pending.is_empty() {
        match finished.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok((what, result)) => {
                pending.retain(|signal| *signal != what);
                if let Err(error) = result {
                    tracing::warn!("OpenTelemetry: the last {what} were not exported: {error}");
                }
            }
            Err(_) => {
                let pending = pending.join(" and ");
                tracing::warn!(
                    "OpenTelemetry: the last {pending} were not exported within {FLUSH:?}; stopping without them"
                );
                return;
            }
        }
    }
}

/// Runs `shutdown` on a thread of its own, which sends its result to
/// `done`; `false` (and a warning) when no thread could be started.
fn on_own_thread(
    what: &'static str,
    done: mpsc::Sender<Flushed>,
    shutdown: impl FnOnce() -> OTelSdkResult + Send + 'static,
) -> bool {
    let spawned = std::thread::Builder::new()
        .name(format!("mcp-otel-flush-{what}"))
        .spawn(move || {
            let _ = done.send((what, shutdown()));
        });
    if let Err(error) = &spawned {
        tracing::warn!(
            "OpenTelemetry: the last {what} were not exported: no thread to flush them: {error}"
        );
    }
    spawned.is_ok()
}

/// Whether the spans and events of `target` at `level` are exported: the
/// runtime's own spans (the request's, a task's work, the inspector's:
/// `mcp::*`), and your code's at `INFO` and above, never the runtime's
/// internal ones (`mcp_runtime::*`) nor the audit events (`mcp::audit`),
/// whose arguments stay where the audit's rules about secrets keep them.
/// Were the audit events let through, every request would also pay for
/// them (the audit layer runs while anything listens to its target).
fn exported(target: &str, level: tracing::Level) -> bool {
    if target.starts_with("mcp::") {
        return target != AUDIT_TARGET;
    }
    !target.starts_with("mcp_runtime") && level <= tracing::Level::INFO
}

/// The export layer's filter: [`exported`], asked again for every span and
/// event it lets through. tracing-subscriber carries each per-layer
/// filter's answer from `enabled` to the span's creation in a thread-local
/// (tokio-rs/tracing#2519): where every layer's filter lets a callsite
/// through (`Interest::always`), `enabled` is skipped and the span is
/// judged by whatever the last `enabled` call on the thread left there. An
/// `enabled!` probe of a target this filter rejects and another layer's
/// accepts (`RUST_LOG=info`'s log of `mcp::audit`, or `log_enabled!` in
/// any library) then kept the next request's SERVER span from export.
/// `Interest::sometimes` makes `enabled` run first, so the log level never
/// changes what is exported. It costs a filter pass per exported span.
struct ExportFilter;

impl<S> tracing_subscriber::layer::Filter<S> for ExportFilter {
    fn enabled(
        &self,
        metadata: &tracing::Metadata<'_>,
        _: &tracing_subscriber::layer::Context<'_, S>,
    ) -> bool {
        exported(metadata.target(), *metadata.level())
    }

    fn callsite_enabled(
        &self,
        metadata: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        match exported(metadata.target(), *metadata.level()) {
            true => tracing::subscriber::Interest::sometimes(),
            false => tracing::subscriber::Interest::never(),
        }
    }
}

/// The trace id of `span`, in hex, when an OpenTelemetry layer records it
/// (export is on).
pub(crate) fn trace_id(span: &tracing::Span) -> Option<String> {
    use opentelemetry::trace::TraceContextExt as _;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;
    let context = span.context();
    let span_context = context.span().span_context().clone();
    span_context
        .is_valid()
        .then(|| span_context.trace_id().to_string())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn from(vars: &[(&str, &str)]) -> Option<Otel> {
        Otel::from_vars(|name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        })
    }

    /// (OTLP traces, OTLP metrics, the Prometheus address).
    fn exports(otel: &Otel) -> (bool, bool, Option<&str>) {
        (
            otel.otlp_traces,
            otel.otlp_metrics,
            otel.prometheus.as_deref(),
        )
    }

    #[test]
    fn nothing_is_exported_unless_a_variable_asks() {
        assert!(from(&[]).is_none());
        assert!(from(&[("OTEL_SERVICE_NAME", "x")]).is_none());
        assert!(from(&[("OTEL_METRICS_EXPORTER", "otlp")]).is_none());
    }

    #[test]
    fn a_collector_turns_on_otlp_for_both_signals_unless_one_is_left_out() {
        let endpoint = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318");
        let otel = from(&[endpoint]).unwrap();
        assert_eq!(exports(&otel), (true, true, None));
        let otel = from(&[endpoint, ("OTEL_TRACES_EXPORTER", "none")]).unwrap();
        assert_eq!(exports(&otel), (false, true, None));
        let otel = from(&[endpoint, ("OTEL_METRICS_EXPORTER", "prometheus")]).unwrap();
        assert_eq!(exports(&otel), (true, false, Some("localhost:9464")));
    }

    #[test]
    fn prometheus_alone_listens_where_the_variables_say() {
        let otel = from(&[("OTEL_METRICS_EXPORTER", " otlp , Prometheus")]).unwrap();
        assert_eq!(exports(&otel), (false, false, Some("localhost:9464")));
        let otel = from(&[
            ("OTEL_METRICS_EXPORTER", "prometheus"),
            ("OTEL_EXPORTER_PROMETHEUS_HOST", "::1"),
            ("OTEL_EXPORTER_PROMETHEUS_PORT", "9100"),
        ])
        .unwrap();
        assert_eq!(otel.prometheus.as_deref(), Some("[::1]:9100"));
    }

    #[test]
    fn the_runtime_spans_and_the_users_are_exported_but_not_the_audit_nor_internals() {
        use mcp_runtime::diagnostics::{INSPECT_TARGET, TASK_TARGET};
        use tracing::Level;
        for target in [layer::TARGET, TASK_TARGET, INSPECT_TARGET] {
            assert!(exported(target, Level::INFO), "{target}");
        }
        assert!(exported("my_server::db", Level::INFO));
        assert!(!exported("my_server::db", Level::DEBUG));
        assert!(!exported(AUDIT_TARGET, Level::INFO));
        assert!(!exported("mcp_runtime::transport::http", Level::WARN));
    }

    #[test]
    fn no_span_is_made_where_the_sampler_would_drop_it() {
        let spans = |sampler, argument| Spans::for_sampler(sampler, argument);
        assert_eq!(spans(None, None), Spans::Always);
        assert_eq!(spans(Some("parentbased_always_on"), None), Spans::Always);
        assert_eq!(spans(Some("traceidratio"), Some("0.25")), Spans::Always);
        assert_eq!(spans(Some(" Always_Off "), None), Spans::Never);
        assert_eq!(spans(Some("traceidratio"), Some("0")), Spans::Never);
        assert_eq!(
            spans(Some("parentbased_always_off"), None),
            Spans::WhenParentSampled
        );
        assert_eq!(
            spans(Some("parentbased_traceidratio"), Some("0.0")),
            Spans::WhenParentSampled
        );
    }

    #[test]
    fn console_alone_writes_spans_to_stderr_and_exports_nothing() {
        let otel = from(&[("OTEL_TRACES_EXPORTER", "console")]).unwrap();
        assert!(otel.console_traces);
        assert_eq!(exports(&otel), (false, false, None));
        let endpoint = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318");
        let otel = from(&[endpoint, ("OTEL_TRACES_EXPORTER", "otlp,console")]).unwrap();
        assert!(otel.console_traces);
        assert_eq!(exports(&otel), (true, true, None));
        assert!(!from(&[endpoint]).unwrap().console_traces);
    }

    #[test]
    fn the_sdk_disabled_turns_everything_off() {
        let vars = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
            ("OTEL_METRICS_EXPORTER", "prometheus"),
            ("OTEL_SDK_DISABLED", "TRUE"),
        ];
        assert!(from(&vars).is_none());
    }
}
