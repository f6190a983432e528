//! The request layer that makes each request a SERVER span and a point of
//! `mcp.server.operation.duration`, by OpenTelemetry's MCP conventions.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::BuildHasher as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context as TaskContext, Poll};
use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{BoundHistogram, Histogram, Meter};
use opentelemetry::propagation::Extractor;
use opentelemetry::trace::TraceContextExt as _;
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use serde::Deserialize;
use serde_json::value::RawValue;
use tracing::Instrument as _;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use mcp_runtime::middleware::{
    BoxError, BoxFuture, Finished, Layer, ObservedRequest, Request, RequestObserver, Response,
    Service,
};
use mcp_runtime::protocol::{ErrorObject, PROTOCOL_VERSION, SUPPORTED_VERSIONS, error_code};
use mcp_runtime::{HttpRequest, RequestSource, TransportKind};

use super::counters::Active;

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

/// A request layer ([`ServerBuilder::request_layer`](mcp_runtime::ServerBuilder::request_layer))
/// that makes each request a `tracing` span by OpenTelemetry's semantic
/// conventions for MCP (`{mcp.method.name} {target}`, kind SERVER, its
/// parent the client's `traceparent` from `_meta`) and records its
/// duration in the `mcp.server.operation.duration` histogram.
///
/// The spans reach a collector through a `tracing-opentelemetry` layer:
/// [`Otel::install`](super::Otel::install) sets both up, and `.with(otel)`
/// does for a server `run()` serves. As a plugin (`.with(OtelLayer::new())`)
/// it is also the server's notification observer and traces the clients
/// made for it.
#[derive(Clone, Debug, Default)]
pub struct OtelLayer {
    pub(super) recording: Recording,
    /// The in-flight count of the export that handed the layer out (a
    /// count of its own for a layer made by hand, which no export reads).
    active: Active,
    /// The export's histogram (the global meter provider's for a layer
    /// made by hand).
    pub(super) duration: ServerDuration,
}

impl OtelLayer {
    /// The layer, recording what the conventions record by default, into
    /// the global meter provider (which the application sets, as it
    /// does its subscriber): for providers and a subscriber entirely your
    /// own. [`Telemetry::layer`](super::Telemetry::layer) records into the
    /// export's providers instead.
    pub fn new() -> Self {
        OtelLayer::default()
    }

    pub(crate) fn recording(
        recording: Recording,
        active: Active,
        duration: ServerDuration,
    ) -> Self {
        OtelLayer {
            recording,
            active,
            duration,
        }
    }
}

/// The `mcp.server.operation.duration` histogram of one meter provider,
/// with an id that keeps its bound points apart from another provider's in
/// the per-thread cache ([`BOUND`]).
#[derive(Clone, Debug)]
pub(crate) struct ServerDuration {
    id: u64,
    pub(super) histogram: Histogram<f64>,
}

impl ServerDuration {
    pub(crate) fn from_meter(meter: &Meter) -> Self {
        // Identities, not state: two histograms never share an id.
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        ServerDuration {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            histogram: histogram(
                meter,
                "mcp.server.operation.duration",
                "The duration of the MCP request or notification as observed on the receiver from the time it was received until the result or ack is sent.",
            ),
        }
    }
}

/// The global meter provider's, as it is when the layer is made.
impl Default for ServerDuration {
    fn default() -> Self {
        ServerDuration::from_meter(&opentelemetry::global::meter("mcp-runtime"))
    }
}

impl<S> Layer<S> for OtelLayer {
    type Service = Traced<S>;

    fn layer(&self, inner: S) -> Traced<S> {
        Traced {
            inner,
            recording: self.recording,
            active: self.active.clone(),
            duration: self.duration.clone(),
        }
    }
}

/// The rest of the stack, traced.
#[derive(Clone, Debug)]
pub struct Traced<S> {
    inner: S,
    recording: Recording,
    active: Active,
    duration: ServerDuration,
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
        let in_flight = self.active.begin();
        let duration = self.duration.clone();
        let started = Instant::now();
        let answer = self.inner.call(request).instrument(span.clone());
        Box::pin(async move {
            // Dropped with the future, answered or not.
            let _in_flight = in_flight;
            let answer = answer.await;
            operation.finish(&span, &answer, (recording, &duration), started);
            answer
        })
    }
}

/// As a request observer
/// ([`plugin::request_observer`](mcp_runtime::plugin::request_observer)),
/// the layer records the metrics only: the duration histogram and the
/// in-flight count, at a fraction of a layer's cost. It makes no span (an
/// observer cannot wrap the request's work), so the export installs it this
/// way only where no span would be kept (traces not exported, or a
/// sampler at 0).
impl RequestObserver for OtelLayer {
    fn started(&self, _: &ObservedRequest<'_>) {
        self.active.opened();
    }

    fn finished(&self, request: &ObservedRequest<'_>, outcome: Finished<'_>) {
        self.active.closed();
        let elapsed = request.started().elapsed().as_secs_f64();
        let failure = Failure::of_outcome(&outcome, request.method() == "tools/call");
        if failure.is_none() && Repeated::record(request, elapsed, &self.duration) {
            return;
        }
        let operation = Operation::observed(request);
        let point = operation.record(elapsed, failure.as_ref(), &self.duration);
        if let (None, Some(point)) = (&failure, point) {
            Repeated::remember(request, point);
        }
    }

    fn abandoned(&self, _: &ObservedRequest<'_>) {
        self.active.closed();
    }
}

/// What an [`Operation`] names.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Target {
    Tool,
    Prompt,
}

/// One request's attributes, kept for its histogram point. Nothing is
/// parsed again (the envelope located the name); a layer's copy owns the
/// tool's or prompt's name, an observer's borrows it.
struct Operation<'a> {
    method: Cow<'a, str>,
    /// The tool of a `tools/call`, the prompt of a `prompts/get`.
    target: Option<(Target, Cow<'a, str>)>,
    /// One this runtime speaks, or `_OTHER`: never the client's text.
    version: &'static str,
    transport: Option<&'static str>,
}

impl<'a> Operation<'a> {
    /// A layer's copy, which outlives the request: only the tool's or
    /// prompt's name is copied (the method and the revisions this runtime
    /// speaks are static text).
    fn of(request: &Request) -> Operation<'static> {
        let negotiated = request.source().negotiated_revision();
        let version = recorded_version(negotiated, &request.meta().protocol_version);
        let name = || Some(Cow::Owned(request.name()?.into_owned()));
        Operation {
            target: target(request.method()).and_then(|target| Some((target, name()?))),
            method: request.method_to_keep(),
            version,
            transport: network_transport(request.source()),
        }
    }

    /// An observer's, borrowed from the request.
    fn observed(request: &ObservedRequest<'a>) -> Operation<'a> {
        let target = target(request.method());
        Operation {
            target: target.and_then(|target| Some((target, request.name()?))),
            method: Cow::Borrowed(request.method()),
            version: observed_version(request),
            transport: network_transport(request.source()),
        }
    }

    /// The tool or prompt named, if `kind`.
    fn named(&self, kind: Target) -> Option<&str> {
        let (target, name) = self.target.as_ref()?;
        (*target == kind).then_some(name)
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
            mcp.protocol.version = self.version,
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
        &self,
        span: &tracing::Span,
        answer: &Result<Response, BoxError>,
        (recording, duration): (Recording, &ServerDuration),
        started: Instant,
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
        let elapsed = started.elapsed().as_secs_f64();
        self.record(elapsed, failure.as_ref(), duration);
    }

    /// The histogram point, through a handle bound to its attribute set:
    /// the SDK hashes an attribute set (SipHash over every key and value)
    /// for each unbound point, about 2,300 instructions a request. The
    /// handles are kept per thread, found by a hash of what the attributes
    /// are made of (borrowed: nothing is copied to look one up), at most
    /// [`BOUND_POINTS`] of them; past that a point is recorded unbound. Where
    /// the handle is kept, if it is.
    fn record(
        &self,
        elapsed: f64,
        failure: Option<&Failure>,
        duration: &ServerDuration,
    ) -> Option<Point> {
        let unknown = failure.map_or(Unknown::Neither, Failure::unknown);
        let error = failure.map(|failure| &*failure.kind);
        let (method, name) = self.recorded(unknown);
        let hash = foldhash::fast::FixedState::default().hash_one((
            (method, self.version),
            name,
            (self.transport, error),
        ));
        let kind = self.target.as_ref().map(|(kind, _)| *kind);
        let key = PointKey {
            method,
            target: kind.zip(name),
            version: self.version,
            transport: self.transport,
            error,
        };
        let kept = with_bound(duration.id, |bound| {
            let index = bound.find(hash, &key).or_else(|| {
                let handle = || duration.histogram.bind(&self.attributes(failure));
                bound.insert(hash, key.owned(), handle)
            })?;
            bound.points[&hash][index].1.record(elapsed);
            Some(Point {
                histogram: duration.id,
                hash,
                index,
            })
        });
        if kept.is_none() {
            (duration.histogram).record(elapsed, &self.attributes(failure));
        }
        kept
    }

    /// The method and the tool's or prompt's name a point records: each
    /// `_OTHER` where it was not served or never looked up.
    fn recorded(&self, unknown: Unknown) -> (&str, Option<&str>) {
        let name = self.target.as_ref().map(|(_, name)| match unknown {
            Unknown::Neither => &**name,
            Unknown::Item | Unknown::Both => OTHER,
        });
        match unknown {
            Unknown::Both => (OTHER, name),
            _ => (&*self.method, name),
        }
    }

    /// The histogram point's attributes (no id, no URI: they would make a
    /// series per request). A method not found and a tool or prompt not
    /// served are `_OTHER`, as OpenTelemetry records unknown HTTP methods:
    /// each name a client makes up would otherwise be a series of its own.
    fn attributes(&self, failure: Option<&Failure>) -> Vec<KeyValue> {
        let unknown = failure.map_or(Unknown::Neither, Failure::unknown);
        let (method, name) = self.recorded(unknown);
        let mut attributes = Vec::with_capacity(7);
        attributes.push(KeyValue::new("mcp.method.name", method.to_owned()));
        attributes.push(KeyValue::new("mcp.protocol.version", self.version));
        if let (Some((target, _)), Some(name)) = (&self.target, name) {
            let name = name.to_owned();
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

/// Where a histogram point's bound handle is kept in [`BOUND`].
#[derive(Clone, Copy)]
struct Point {
    /// The [`ServerDuration`]'s id.
    histogram: u64,
    hash: u64,
    index: usize,
}

/// The last request an observer on this thread recorded, as the client
/// wrote it: a request like it (the same method, tool or prompt name,
/// version and transport, answered with a result) is recorded on the same
/// point without decoding its name or hashing its attributes. Calls of
/// one tool in a row are the common case.
struct Repeated {
    method: Box<str>,
    raw_name: Option<Box<[u8]>>,
    version: &'static str,
    transport: Option<&'static str>,
    point: Point,
}

thread_local! {
    static REPEATED: RefCell<Option<Repeated>> = const { RefCell::new(None) };
}

impl Repeated {
    /// Records `request`'s point into `duration` if it is the last one's;
    /// whether it was.
    fn record(request: &ObservedRequest<'_>, elapsed: f64, duration: &ServerDuration) -> bool {
        let point = REPEATED.with_borrow(|last| {
            let last = last
                .as_ref()
                .filter(|last| last.point.histogram == duration.id)?;
            let version = observed_version(request);
            let same = (*last.method == *request.method() && last.version == version)
                && (last.raw_name.as_deref() == request.raw_name())
                && last.transport == network_transport(request.source());
            same.then_some(last.point)
        });
        let Some(point) = point else { return false };
        // Kept while its histogram's cache is (see `with_bound`).
        with_bound(point.histogram, |bound| {
            let handle = (bound.points.get(&point.hash)).and_then(|points| points.get(point.index));
            handle.map(|(_, handle)| handle.record(elapsed)).is_some()
        })
    }

    fn remember(request: &ObservedRequest<'_>, point: Point) {
        let repeated = Repeated {
            method: request.method().into(),
            raw_name: request.raw_name().map(Into::into),
            version: observed_version(request),
            transport: network_transport(request.source()),
            point,
        };
        REPEATED.set(Some(repeated));
    }
}

/// The protocol version an observed request's client speaks, as a point
/// records it.
fn observed_version(request: &ObservedRequest<'_>) -> &'static str {
    let negotiated = request.source().negotiated_revision();
    recorded_version(negotiated, &request.meta().protocol_version)
}

/// The protocol version a point records: an older client's own through
/// the adapter, else the `_meta` version when this runtime speaks it, else
/// `_OTHER`. A request with a version nobody speaks is refused, and each
/// one a client makes up would otherwise be a series (and a bound handle)
/// of its own.
fn recorded_version(negotiated: Option<&'static str>, sent: &str) -> &'static str {
    if let Some(revision) = negotiated {
        return revision;
    }
    match sent {
        PROTOCOL_VERSION => PROTOCOL_VERSION,
        sent => (SUPPORTED_VERSIONS.iter())
            .find(|known| **known == sent)
            .copied()
            .unwrap_or(OTHER),
    }
}

/// What a method names: a tool, a prompt, or neither.
fn target(method: &str) -> Option<Target> {
    match method {
        "tools/call" => Some(Target::Tool),
        "prompts/get" => Some(Target::Prompt),
        _ => None,
    }
}

thread_local! {
    /// The histograms' bound handles on this thread, by [`ServerDuration`]
    /// id, at most [`BOUND_HISTOGRAMS`].
    static BOUND: RefCell<Vec<(u64, Bound)>> = const { RefCell::new(Vec::new()) };
}

/// How many histograms (exports) a thread keeps bound handles for: a
/// process usually has one, a test suite a few at a time. Past this, the
/// oldest's are dropped (its points are bound again if it records more).
const BOUND_HISTOGRAMS: usize = 4;

/// Runs `f` on the bound handles of histogram `id` on this thread.
fn with_bound<R>(id: u64, f: impl FnOnce(&mut Bound) -> R) -> R {
    BOUND.with_borrow_mut(|all| {
        let index = match all.iter().position(|(kept, _)| *kept == id) {
            Some(index) => index,
            None => {
                if all.len() >= BOUND_HISTOGRAMS {
                    let (dropped, _) = all.remove(0);
                    // The last request's point may have been one of them.
                    REPEATED.with_borrow_mut(|last| {
                        if last
                            .as_ref()
                            .is_some_and(|last| last.point.histogram == dropped)
                        {
                            *last = None;
                        }
                    });
                }
                all.push((id, Bound::default()));
                all.len() - 1
            }
        };
        f(&mut all[index].1)
    })
}

/// How many bound handles a thread keeps. The attribute sets are bounded
/// (no client-chosen text reaches them), but by what the server serves:
/// a server with thousands of runtime tools would otherwise keep a handle
/// for each, and the SDK an aggregation for each handle, however rarely
/// used. Past this, points are recorded unbound (hashed by the SDK).
pub(super) const BOUND_POINTS: usize = 512;

/// Bound histogram handles, by the hash of what their attributes are made
/// of (several where hashes collide), at most [`BOUND_POINTS`].
#[derive(Default)]
struct Bound {
    points: HashMap<u64, Vec<(KeptKey, BoundHistogram<f64>)>, foldhash::fast::RandomState>,
    len: usize,
}

impl Bound {
    /// The index of `key`'s handle among those of `hash`, if kept.
    fn find(&self, hash: u64, key: &PointKey<'_>) -> Option<usize> {
        let points = self.points.get(&hash)?;
        points.iter().position(|(kept, _)| kept.is(key))
    }

    /// Keeps a handle for `key` (made by `bind`), unless the cache is full;
    /// its index among those of `hash`.
    fn insert(
        &mut self,
        hash: u64,
        key: KeptKey,
        bind: impl FnOnce() -> BoundHistogram<f64>,
    ) -> Option<usize> {
        if self.len >= BOUND_POINTS {
            return None;
        }
        self.len += 1;
        let points = self.points.entry(hash).or_default();
        points.push((key, bind()));
        Some(points.len() - 1)
    }
}

/// What a histogram point's attributes are made of, as recorded (`_OTHER`
/// in place of what was not served).
#[derive(PartialEq, Eq)]
struct PointKey<'a> {
    method: &'a str,
    target: Option<(Target, &'a str)>,
    version: &'static str,
    transport: Option<&'static str>,
    error: Option<&'a str>,
}

impl PointKey<'_> {
    /// A copy that owns its text, to keep.
    fn owned(&self) -> KeptKey {
        KeptKey {
            method: self.method.into(),
            target: self.target.map(|(kind, name)| (kind, name.into())),
            version: self.version,
            transport: self.transport,
            error: self.error.map(Into::into),
        }
    }
}

/// A [`PointKey`] kept with its handle.
struct KeptKey {
    method: Box<str>,
    target: Option<(Target, Box<str>)>,
    version: &'static str,
    transport: Option<&'static str>,
    error: Option<Box<str>>,
}

impl KeptKey {
    fn is(&self, key: &PointKey<'_>) -> bool {
        let target = self.target.as_ref().map(|(kind, name)| (*kind, &**name));
        (*self.method == *key.method && self.version == key.version)
            && (target == key.target && self.transport == key.transport)
            && self.error.as_deref() == key.error
    }
}

/// What the histogram records in place of a name nobody serves.
pub(super) const OTHER: &str = "_OTHER";

/// Which names of a failed request were not served, or never looked up.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unknown {
    Neither,
    /// The tool or prompt.
    Item,
    /// The method, and so its tool or prompt too.
    Both,
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
                Some(error) => Failure::of_error(error),
                None => Failure {
                    kind: Cow::Borrowed("-32603"),
                    message: Some(error.to_string()),
                    unknown: Unknown::Neither,
                },
            }),
            Ok(result) if tool && result.is_tool_error() => Some(Failure::TOOL),
            Ok(_) => None,
        }
    }

    /// A tool's error result.
    const TOOL: Failure = Failure {
        kind: Cow::Borrowed("tool_error"),
        message: None,
        unknown: Unknown::Neither,
    };

    fn of_error(error: &ErrorObject) -> Failure {
        Failure {
            kind: Cow::Owned(error.code.to_string()),
            message: Some(error.message.to_string()),
            unknown: match error.code {
                // Refused before the method was looked up: a made-up
                // version, or a request that is not one.
                error_code::METHOD_NOT_FOUND
                | error_code::UNSUPPORTED_PROTOCOL_VERSION
                | error_code::INVALID_REQUEST => Unknown::Both,
                _ if error.names_unknown_item() => Unknown::Item,
                _ => Unknown::Neither,
            },
        }
    }

    /// As an observer sees it.
    fn of_outcome(outcome: &Finished<'_>, tool: bool) -> Option<Failure> {
        match outcome {
            Finished::Failed(error) => Some(Failure::of_error(error)),
            Finished::Completed(result) if tool && result.is_tool_error() => Some(Failure::TOOL),
            Finished::Completed(_) => None,
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
    let extract = |carrier: &dyn Extractor| extract(carrier);
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

/// A duration histogram (seconds, the conventions' buckets) from `meter`.
pub(super) fn histogram(
    meter: &Meter,
    name: &'static str,
    description: &'static str,
) -> Histogram<f64> {
    meter
        .f64_histogram(name)
        .with_unit("s")
        .with_description(description)
        .with_boundaries(BOUNDARIES.to_vec())
        .build()
}

/// The W3C trace context and baggage `carrier` holds: what the MCP
/// conventions carry in `_meta` (and an HTTP request in its headers),
/// whatever propagator the process sets globally.
pub(super) fn extract(carrier: &dyn Extractor) -> opentelemetry::Context {
    use opentelemetry::propagation::TextMapPropagator as _;
    let context = TraceContextPropagator::new().extract(carrier);
    BaggagePropagator::new().extract_with_context(&context, carrier)
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
    fn of(meta: &'a mcp_runtime::protocol::RequestMeta) -> Self {
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

    /// How many bound handles this thread keeps (each test has a thread).
    fn kept() -> usize {
        BOUND.with_borrow(|all| all.iter().map(|(_, bound)| bound.len).sum())
    }

    fn operation(
        method: String,
        tool: Option<String>,
        version: &'static str,
    ) -> Operation<'static> {
        Operation {
            method: Cow::Owned(method),
            target: tool.map(|tool| (Target::Tool, Cow::Owned(tool))),
            version,
            transport: Some("pipe"),
        }
    }

    #[test]
    fn made_up_versions_methods_and_names_are_recorded_as_other() {
        let duration = ServerDuration::default();
        for i in 0..3_000 {
            let sent = format!("1999-01-{i}");
            let version = recorded_version(None, &sent);
            assert_eq!(version, OTHER);
            let refused = ErrorObject::unsupported_version(&sent, SUPPORTED_VERSIONS);
            let refused = Failure::of_error(&refused);
            operation(format!("made/up/{i}"), None, version).record(0.1, Some(&refused), &duration);
            let call = operation("tools/call".into(), Some(format!("tool{i}")), version);
            call.record(0.1, Some(&refused), &duration);
            let method = format!("nothing/{i}");
            let missing = Failure::of_error(&ErrorObject::method_not_found(&method));
            operation(method, None, PROTOCOL_VERSION).record(0.1, Some(&missing), &duration);
            let tool = format!("tool{i}");
            let unknown = ErrorObject::invalid_params(format!("Unknown tool: {tool}"));
            let call = operation("tools/call".into(), Some(tool), PROTOCOL_VERSION);
            call.record(0.1, Some(&Failure::of_error(&unknown)), &duration);
        }
        // A refused version with and without a tool, a method not found, a
        // tool not found.
        assert_eq!(kept(), 4);
        let point = operation("made/up".into(), Some("x".into()), OTHER);
        let failure = Failure::of_error(&ErrorObject::unsupported_version("x", &[]));
        let attributes = point.attributes(Some(&failure));
        let value = |key: &str| {
            let found = attributes.iter().find(|kv| kv.key.as_str() == key);
            found.map(|kv| kv.value.to_string())
        };
        assert_eq!(value("mcp.method.name").as_deref(), Some(OTHER));
        assert_eq!(value("mcp.protocol.version").as_deref(), Some(OTHER));
        assert_eq!(value("gen_ai.tool.name").as_deref(), Some(OTHER));
        assert_eq!(recorded_version(None, PROTOCOL_VERSION), PROTOCOL_VERSION);
        assert_eq!(recorded_version(Some("2025-06-18"), "x"), "2025-06-18");
    }

    #[test]
    fn the_bound_handles_are_capped_and_points_past_them_still_recorded() {
        let duration = ServerDuration::default();
        for i in 0..BOUND_POINTS * 2 {
            let call = operation(
                "tools/call".into(),
                Some(format!("tool{i}")),
                PROTOCOL_VERSION,
            );
            let point = call.record(0.1, None, &duration);
            assert_eq!(point.is_some(), i < BOUND_POINTS, "{i}");
        }
        assert_eq!(kept(), BOUND_POINTS);
        // A point kept is found again, not bound twice.
        let call = operation("tools/call".into(), Some("tool0".into()), PROTOCOL_VERSION);
        assert!(call.record(0.1, None, &duration).is_some());
        assert_eq!(kept(), BOUND_POINTS);
    }

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

    #[test]
    fn each_histogram_keeps_its_own_bound_handles_and_the_oldest_go_first() {
        let call = || operation("tools/call".into(), Some("t".into()), PROTOCOL_VERSION);
        let histograms: Vec<ServerDuration> = (0..=BOUND_HISTOGRAMS)
            .map(|_| ServerDuration::default())
            .collect();
        let first = call().record(0.1, None, &histograms[0]).unwrap();
        assert_eq!(first.histogram, histograms[0].id);
        let second = call().record(0.1, None, &histograms[1]).unwrap();
        assert_eq!(second.histogram, histograms[1].id, "not the first's handle");
        assert_eq!(kept(), 2);
        for histogram in &histograms[2..] {
            call().record(0.1, None, histogram).unwrap();
        }
        // One more histogram than are kept: the first's handles went.
        assert_eq!(kept(), BOUND_HISTOGRAMS);
        let ids: Vec<u64> = BOUND.with_borrow(|all| all.iter().map(|(id, _)| *id).collect());
        assert!(!ids.contains(&histograms[0].id), "{ids:?}");
    }
}
