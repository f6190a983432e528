//! The request layer that makes each request a SERVER span and a point of
//! `mcp.server.operation.duration`, by OpenTelemetry's MCP conventions.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::OnceLock;
use std::task::{Context as TaskContext, Poll};
use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{BoundHistogram, Histogram};
use opentelemetry::propagation::Extractor;
use opentelemetry::trace::TraceContextExt as _;
use serde::Deserialize;
use serde_json::value::RawValue;
use tracing::Instrument as _;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use super::counters::InFlight;
use crate::middleware::{BoxError, BoxFuture, Layer, Request, Response, Service};
use crate::protocol::{ErrorObject, error_code};
use crate::source::{RequestSource, TransportKind};
use crate::transport::http::HttpRequest;

/// The `tracing` target of the spans this layer makes: what the exporting
/// subscriber layer lets through.
pub(crate) const TARGET: &str = "mcp::otel";

/// The conventions' bucket boundaries for the operation duration, in
/// seconds.
const BOUNDARIES: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// How much of an opted-in argument or result a span carries, as the audit
/// events cut arguments.
const SHOWN_BYTES: usize = 1024;

/// What an [`OtelLayer`] records beyond the conventions' defaults.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Recording {
    /// `gen_ai.tool.call.arguments` (opt-in: they may hold secrets).
    pub(crate) arguments: bool,
    /// `gen_ai.tool.call.result` (opt-in, likewise).
    pub(crate) results: bool,
    /// Which requests get a span at all.
    pub(crate) spans: Spans,
}

/// Which requests get a span: those the sampler can keep. A span the
/// sampler drops still costs most of a kept one's work (the `tracing`
/// span, its OpenTelemetry builder, the context's extraction), so none is
/// made where the configuration already says it would be dropped. The
/// duration histogram and the in-flight count are recorded either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Spans {
    /// Every request (the sampler decides).
    #[default]
    Always,
    /// Only a request whose client's trace was sampled (the `traceparent`
    /// flag): a parent-based sampler whose root decision is "drop"
    /// (`parentbased_always_off`, `parentbased_traceidratio` at 0).
    WhenParentSampled,
    /// None: traces are not exported, or `always_off`, or
    /// `traceidratio` at 0.
    Never,
}

impl Spans {
    /// For the standard `OTEL_TRACES_SAMPLER` and its argument.
    pub(crate) fn for_sampler(sampler: Option<&str>, argument: Option<&str>) -> Spans {
        let zero = argument
            .and_then(|ratio| ratio.trim().parse::<f64>().ok())
            .is_some_and(|ratio| ratio <= 0.0);
        let sampler = sampler.map(|s| s.trim().to_ascii_lowercase());
        match (sampler.as_deref(), zero) {
            (Some("always_off"), _) | (Some("traceidratio"), true) => Spans::Never,
            (Some("parentbased_always_off"), _) | (Some("parentbased_traceidratio"), true) => {
                Spans::WhenParentSampled
            }
            _ => Spans::Always,
        }
    }

    /// Whether a request with this `traceparent` (read only when it
    /// matters) gets a span.
    pub(super) fn wanted<'a>(self, traceparent: impl FnOnce() -> Option<&'a str>) -> bool {
        match self {
            Spans::Always => true,
            Spans::Never => false,
            Spans::WhenParentSampled => traceparent().is_some_and(sampled),
        }
    }
}

/// Whether a W3C `traceparent` has its sampled flag set.
fn sampled(traceparent: &str) -> bool {
    traceparent
        .rsplit('-')
        .next()
        .and_then(|flags| u8::from_str_radix(flags, 16).ok())
        .is_some_and(|flags| flags & 1 == 1)
}

/// A request layer ([`ServerBuilder::request_layer`](crate::ServerBuilder::request_layer))
/// that makes each request a `tracing` span by OpenTelemetry's semantic
/// conventions for MCP (`{mcp.method.name} {target}`, kind SERVER, its
/// parent the client's `traceparent` from `_meta`) and records its
/// duration in the `mcp.server.operation.duration` histogram.
///
/// The spans reach a collector through a `tracing-opentelemetry` layer:
/// [`Otel::install`](super::Otel::install) sets both up, and `run()` does
/// so when the `OTEL_EXPORTER_OTLP_*ENDPOINT` variables are set.
#[derive(Clone, Debug, Default)]
pub struct OtelLayer {
    pub(super) recording: Recording,
}

impl OtelLayer {
    /// The layer, recording what the conventions record by default.
    pub fn new() -> Self {
        OtelLayer::default()
    }

    pub(crate) fn recording(recording: Recording) -> Self {
        OtelLayer { recording }
    }
}

impl<S> Layer<S> for OtelLayer {
    type Service = Traced<S>;

    fn layer(&self, inner: S) -> Traced<S> {
        Traced {
            inner,
            recording: self.recording,
        }
    }
}

/// The rest of the stack, traced.
#[derive(Clone, Debug)]
pub struct Traced<S> {
    inner: S,
    recording: Recording,
}

impl<S> Service<Request> for Traced<S>
where
    S: Service<Request, Response = Response, Error = BoxError, Future = BoxFuture<Response>>,
{
    type Response = Response;
    type Error = BoxError;
    type Future = BoxFuture<Response>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let recording = self.recording;
        let operation = Operation::of(&request);
        let traceparent = || traceparent(request.meta().traceparent.as_deref(), request.source());
        let span = match recording.spans.wanted(traceparent) {
            true => operation.span(&request, recording),
            false => tracing::Span::none(),
        };
        let in_flight = InFlight::begin();
        let answer = self.inner.call(request).instrument(span.clone());
        Box::pin(async move {
            // Dropped with the future, answered or not.
            let _in_flight = in_flight;
            let answer = answer.await;
            operation.finish(&span, &answer, recording);
            answer
        })
    }
}

/// What an [`Operation`] names.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Target {
    Tool,
    Prompt,
}

/// One request's attributes, kept for its histogram point. Nothing is
/// parsed again (the envelope located the name) and only the tool's or
/// prompt's name is copied.
struct Operation {
    method: Cow<'static, str>,
    /// The tool of a `tools/call`, the prompt of a `prompts/get`.
    target: Option<(Target, String)>,
    version: Cow<'static, str>,
    transport: Option<&'static str>,
    started: Instant,
}

impl Operation {
    fn of(request: &Request) -> Operation {
        let target = match request.method() {
            "tools/call" => Some(Target::Tool),
            "prompts/get" => Some(Target::Prompt),
            _ => None,
        };
        Operation {
            method: request.method.clone(),
            target: target.and_then(|target| Some((target, request.name()?.into_owned()))),
            version: version(request),
            transport: network_transport(request.source()),
            started: Instant::now(),
        }
    }

    /// The tool or prompt named, if `kind`.
    fn named(&self, kind: Target) -> Option<&str> {
        let (target, name) = self.target.as_ref()?;
        (*target == kind).then_some(name.as_str())
    }

    /// The span, its parent the client's trace context when it sent one,
    /// linked to the HTTP request's own.
    fn span(&self, request: &Request, recording: Recording) -> tracing::Span {
        let (tool, prompt) = (self.named(Target::Tool), self.named(Target::Prompt));
        let name = match tool.or(prompt) {
            Some(target) => format!("{} {target}", self.method),
            None => self.method.to_string(),
        };
        let arguments = (recording.arguments && tool.is_some())
            .then(|| arguments(request))
            .flatten();
        let uri = request
            .uri()
            .filter(|_| self.method.starts_with("resources/"));
        let span = tracing::info_span!(
            target: TARGET,
            "mcp.server",
            otel.name = name,
            otel.kind = "server",
            otel.status_code = Empty,
            otel.status_description = Empty,
            mcp.method.name = &*self.method,
            jsonrpc.request.id = %request.id(),
            mcp.protocol.version = &*self.version,
            network.transport = self.transport,
            gen_ai.tool.name = tool,
            gen_ai.prompt.name = prompt,
            gen_ai.operation.name = tool.map(|_| "execute_tool"),
            mcp.resource.uri = uri.as_deref(),
            gen_ai.tool.call.arguments = arguments,
            gen_ai.tool.call.result = Empty,
            error.type = Empty,
            rpc.response.status_code = Empty,
        );
        parent_and_link(&span, &TraceCarrier::of(request.meta()), request.source());
        span
    }

    /// Records the outcome on the span and the histogram.
    fn finish(
        self,
        span: &tracing::Span,
        answer: &Result<Response, BoxError>,
        recording: Recording,
    ) {
        let tool = self.named(Target::Tool).is_some();
        let failure = Failure::of(answer, tool);
        if let (Ok(result), true) = (answer, recording.results && tool && !span.is_none()) {
            span.record("gen_ai.tool.call.result", cut(result.json()));
        }
        if let Some(failure) = &failure
            && !span.is_none()
        {
            failure.record(span);
        }
        let elapsed = self.started.elapsed().as_secs_f64();
        self.record(elapsed, failure.as_ref());
    }

    /// The histogram point, through a handle bound to its attribute set:
    /// the SDK hashes an attribute set (SipHash over every key and value)
    /// for each unbound point, about 2,300 instructions a request. The
    /// handles are kept per thread, keyed by what the attributes are made
    /// of; their number is bounded, as the attribute sets are.
    fn record(self, elapsed: f64, failure: Option<&Failure>) {
        let key = PointKey {
            unknown: failure.map_or(Unknown::Neither, Failure::unknown),
            error: failure.map(|failure| failure.kind.clone()),
            operation: self,
        };
        BOUND.with_borrow_mut(|bound| {
            if let Some(handle) = bound.get(&key) {
                return handle.record(elapsed);
            }
            let handle = duration().bind(&key.operation.attributes(failure));
            handle.record(elapsed);
            bound.insert(key, handle);
        });
    }

    /// The histogram point's attributes (no id, no URI: they would make a
    /// series per request). A method not found and a tool or prompt not
    /// served are `_OTHER`, as OpenTelemetry records unknown HTTP methods:
    /// each name a client makes up would otherwise be a series of its own.
    fn attributes(&self, failure: Option<&Failure>) -> Vec<KeyValue> {
        let unknown = failure.map_or(Unknown::Neither, Failure::unknown);
        let method = match unknown {
            Unknown::Method => Cow::Borrowed(OTHER),
            _ => self.method.clone(),
        };
        let mut attributes = Vec::with_capacity(7);
        attributes.push(KeyValue::new("mcp.method.name", method));
        attributes.push(KeyValue::new("mcp.protocol.version", self.version.clone()));
        if let Some((target, name)) = &self.target {
            let name = match unknown {
                Unknown::Item => OTHER.to_owned(),
                _ => name.clone(),
            };
            match target {
                Target::Tool => {
                    attributes.push(KeyValue::new("gen_ai.tool.name", name));
                    attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
                }
                Target::Prompt => attributes.push(KeyValue::new("gen_ai.prompt.name", name)),
            }
        }
        if let Some(transport) = self.transport {
            attributes.push(KeyValue::new("network.transport", transport));
        }
        if let Some(failure) = failure {
            failure.push_attributes(&mut attributes);
        }
        attributes
    }
}

thread_local! {
    /// The histogram's bound handles on this thread.
    static BOUND: RefCell<HashMap<PointKey, BoundHistogram<f64>, foldhash::fast::RandomState>> =
        RefCell::new(HashMap::default());
}

/// What a histogram point's attributes are made of.
struct PointKey {
    operation: Operation,
    error: Option<Cow<'static, str>>,
    unknown: Unknown,
}

impl PartialEq for PointKey {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (&self.operation, &other.operation);
        (a.method == b.method && a.version == b.version && a.transport == b.transport)
            && a.target == b.target
            && (self.error == other.error && self.unknown == other.unknown)
    }
}

impl Eq for PointKey {}

impl std::hash::Hash for PointKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let operation = &self.operation;
        (operation.method.as_ref(), operation.version.as_ref()).hash(state);
        (operation.target.as_ref().map(|(_, name)| name.as_str())).hash(state);
        (operation.transport, self.error.as_deref()).hash(state);
    }
}

/// What the histogram records in place of a name nobody serves.
pub(super) const OTHER: &str = "_OTHER";

/// Which name of a failed request was not served.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unknown {
    Neither,
    Method,
    Item,
}

/// How a request failed: a JSON-RPC error, or a tool's error result.
struct Failure {
    /// The JSON-RPC code, or `tool_error`.
    kind: Cow<'static, str>,
    message: Option<String>,
    unknown: Unknown,
}

impl Failure {
    fn of(answer: &Result<Response, BoxError>, tool: bool) -> Option<Failure> {
        match answer {
            Err(error) => Some(match error.downcast_ref::<ErrorObject>() {
                Some(error) => Failure {
                    kind: Cow::Owned(error.code.to_string()),
                    message: Some(error.message.to_string()),
                    unknown: match error.code {
                        error_code::METHOD_NOT_FOUND => Unknown::Method,
                        _ if error.names_unknown_item() => Unknown::Item,
                        _ => Unknown::Neither,
                    },
                },
                None => Failure {
                    kind: Cow::Borrowed("-32603"),
                    message: Some(error.to_string()),
                    unknown: Unknown::Neither,
                },
            }),
            Ok(result) if tool && result.is_tool_error() => Some(Failure {
                kind: Cow::Borrowed("tool_error"),
                message: None,
                unknown: Unknown::Neither,
            }),
            Ok(_) => None,
        }
    }

    fn unknown(&self) -> Unknown {
        self.unknown
    }

    /// `error.type`, and the JSON-RPC code as `rpc.response.status_code`.
    fn push_attributes(&self, attributes: &mut Vec<KeyValue>) {
        attributes.push(KeyValue::new("error.type", self.kind.clone()));
        if self.kind != "tool_error" {
            let code = self.kind.clone();
            attributes.push(KeyValue::new("rpc.response.status_code", code));
        }
    }

    /// The status, `error.type` and status code on the span.
    fn record(&self, span: &tracing::Span) {
        span.record("error.type", &*self.kind);
        span.record("otel.status_code", "ERROR");
        if let Some(message) = self.message.as_deref().filter(|m| !m.is_empty()) {
            span.record("otel.status_description", message);
        }
        if self.kind != "tool_error" {
            span.record("rpc.response.status_code", &*self.kind);
        }
    }
}

/// `network.transport`: `pipe` for stdio, `tcp` for HTTP.
pub(super) fn network_transport(source: &RequestSource) -> Option<&'static str> {
    match source.transport() {
        TransportKind::Stdio => Some("pipe"),
        TransportKind::Http => Some("tcp"),
        _ => None,
    }
}

/// The protocol version the client speaks: an older client's own through
/// the adapter. Borrowed for the revisions this runtime speaks (no other
/// passes the `_meta` check).
fn version(request: &Request) -> Cow<'static, str> {
    if let Some(revision) = request.source().negotiated_revision() {
        return Cow::Borrowed(revision);
    }
    match request.meta().protocol_version.as_str() {
        crate::protocol::PROTOCOL_VERSION => Cow::Borrowed(crate::protocol::PROTOCOL_VERSION),
        other => Cow::Owned(other.to_owned()),
    }
}

/// The span's parent: the trace context in `_meta` (the conventions'
/// choice: one MCP request may take several HTTP requests). The HTTP
/// request's own `traceparent`, the ambient context, is linked when both
/// are there, and is the parent when `_meta` has none.
pub(super) fn parent_and_link(
    span: &tracing::Span,
    meta: &TraceCarrier<'_>,
    source: &RequestSource,
) {
    let http = (source.attachment::<HttpRequest>())
        .map(|http| HeaderCarrier(http.headers()))
        .filter(|carrier| carrier.0.contains_key("traceparent"));
    let extract = |carrier: &dyn Extractor| {
        opentelemetry::global::get_text_map_propagator(|propagator| propagator.extract(carrier))
    };
    // Each fails only when no OpenTelemetry layer is installed.
    match (meta.traceparent.is_some(), http) {
        (true, http) => {
            let _ = span.set_parent(extract(meta));
            if let Some(http) = http {
                let ambient = extract(&http);
                let context = ambient.span().span_context().clone();
                if context.is_valid() {
                    span.add_link(context);
                }
            }
        }
        (false, Some(http)) => {
            let _ = span.set_parent(extract(&http));
        }
        (false, None) => {}
    }
}

/// A duration histogram point's attributes that both sides record: the
/// method, the protocol version, and the tool (with `execute_tool`) or
/// prompt.
pub(super) fn point_attributes(
    method: &str,
    version: &str,
    tool: Option<&str>,
    prompt: Option<&str>,
) -> Vec<KeyValue> {
    let mut attributes = vec![
        KeyValue::new("mcp.method.name", method.to_owned()),
        KeyValue::new("mcp.protocol.version", version.to_owned()),
    ];
    if let Some(tool) = tool {
        attributes.push(KeyValue::new("gen_ai.tool.name", tool.to_owned()));
        attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
    }
    if let Some(prompt) = prompt {
        attributes.push(KeyValue::new("gen_ai.prompt.name", prompt.to_owned()));
    }
    attributes
}

/// A duration histogram (seconds, the conventions' buckets) from the global
/// meter provider: made at first use, after [`Otel::install`](super::Otel::install)
/// set the provider.
pub(super) fn histogram(name: &'static str, description: &'static str) -> Histogram<f64> {
    opentelemetry::global::meter("mcp-runtime")
        .f64_histogram(name)
        .with_unit("s")
        .with_description(description)
        .with_boundaries(BOUNDARIES.to_vec())
        .build()
}

/// `mcp.server.operation.duration`.
pub(super) fn duration() -> &'static Histogram<f64> {
    static DURATION: OnceLock<Histogram<f64>> = OnceLock::new();
    DURATION.get_or_init(|| {
        histogram(
            "mcp.server.operation.duration",
            "The duration of the MCP request or notification as observed on the receiver from the time it was received until the result or ack is sent.",
        )
    })
}

/// A `tools/call`'s arguments as JSON text (for the opt-in attribute
/// only: this parses the params again).
fn arguments(request: &Request) -> Option<String> {
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(borrow)]
        arguments: Option<&'a RawValue>,
    }
    let params = serde_json::from_str::<Params<'_>>(request.params()?).ok()?;
    Some(cut(params.arguments?.get()))
}

/// `text`, cut to [`SHOWN_BYTES`] on a character boundary.
fn cut(text: &str) -> String {
    let mut end = text.len().min(SHOWN_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

/// A message's `_meta` trace context, as the propagators read it: the
/// unprefixed `traceparent`, `tracestate` and `baggage` keys.
pub(super) struct TraceCarrier<'a> {
    pub(super) traceparent: Option<&'a str>,
    pub(super) tracestate: Option<&'a str>,
    pub(super) baggage: Option<&'a str>,
}

impl<'a> TraceCarrier<'a> {
    fn of(meta: &'a crate::protocol::RequestMeta) -> Self {
        TraceCarrier {
            traceparent: meta.traceparent.as_deref(),
            tracestate: meta.tracestate.as_deref(),
            baggage: meta.baggage.as_deref(),
        }
    }
}

impl Extractor for TraceCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            "traceparent" => self.traceparent,
            "tracestate" => self.tracestate,
            "baggage" => self.baggage,
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec!["traceparent", "tracestate", "baggage"]
    }
}

/// The HTTP request's trace context headers.
struct HeaderCarrier<'a>(&'a http::HeaderMap);

impl Extractor for HeaderCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key)?.to_str().ok()
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(http::HeaderName::as_str).collect()
    }
}

/// The client's `traceparent`: from `_meta`, else the HTTP request's.
pub(super) fn traceparent<'a>(meta: Option<&'a str>, source: &'a RequestSource) -> Option<&'a str> {
    if let Some(traceparent) = meta {
        return Some(traceparent);
    }
    let http = source.attachment::<HttpRequest>()?;
    http.headers().get("traceparent")?.to_str().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parent_based_policy_follows_the_clients_sampled_flag() {
        let kept = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let dropped = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
        let policy = Spans::WhenParentSampled;
        assert!(policy.wanted(|| Some(kept)));
        assert!(!policy.wanted(|| Some(dropped)) && !policy.wanted(|| None));
        assert!(!policy.wanted(|| Some("garbage")));
        assert!(Spans::Always.wanted(|| None) && !Spans::Never.wanted(|| Some(kept)));
    }
}
