//! The request layer that makes each request a SERVER span and a point of
//! `mcp.server.operation.duration`, by OpenTelemetry's MCP conventions.

use std::sync::{Arc, OnceLock};
use std::task::{Context as TaskContext, Poll};
use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::metrics::Histogram;
use opentelemetry::propagation::Extractor;
use serde::Deserialize;
use serde_json::value::RawValue;
use tracing::Instrument as _;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use super::counters::InFlight;
use crate::middleware::{BoxError, BoxFuture, Layer, Request, Response, Service};
use crate::protocol::ErrorObject;
use crate::source::TransportKind;

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

    /// Whether a request with this `traceparent` gets a span.
    fn wanted(self, traceparent: Option<&str>) -> bool {
        match self {
            Spans::Always => true,
            Spans::Never => false,
            Spans::WhenParentSampled => traceparent.is_some_and(sampled),
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
    recording: Recording,
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
        let operation = Operation::of(&request, self.recording);
        let span = match self
            .recording
            .spans
            .wanted(request.meta().traceparent.as_deref())
        {
            true => operation.span(&request),
            false => tracing::Span::none(),
        };
        let in_flight = InFlight::begin(&operation.method);
        let answer = self.inner.call(request).instrument(span.clone());
        let recording = self.recording;
        Box::pin(async move {
            // Dropped with the future, answered or not.
            let _in_flight = in_flight;
            let answer = answer.await;
            operation.finish(&span, &answer, recording);
            answer
        })
    }
}

/// The params the span's target and attributes come from.
#[derive(Deserialize)]
struct Target<'a> {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    uri: Option<String>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

/// One request's attributes, kept for its histogram point.
struct Operation {
    method: Arc<str>,
    tool: Option<String>,
    prompt: Option<String>,
    uri: Option<String>,
    arguments: Option<String>,
    version: String,
    transport: Option<&'static str>,
    started: Instant,
}

impl Operation {
    fn of(request: &Request, recording: Recording) -> Operation {
        let method: Arc<str> = request.method().into();
        let target = request
            .params()
            .and_then(|params| serde_json::from_str::<Target<'_>>(params).ok());
        let (name, uri, arguments) = match target {
            Some(target) => (target.name, target.uri, target.arguments),
            None => (None, None, None),
        };
        let (tool, prompt) = match &*method {
            "tools/call" => (name, None),
            "prompts/get" => (None, name),
            _ => (None, None),
        };
        let arguments = arguments
            .filter(|_| recording.arguments && tool.is_some())
            .map(|raw| cut(raw.get()));
        Operation {
            method,
            tool,
            prompt,
            uri: uri.filter(|_| request.method().starts_with("resources/")),
            arguments,
            // An older client's own revision, through the adapter.
            version: match request.source().negotiated_revision() {
                Some(revision) => revision.to_owned(),
                None => request.meta().protocol_version.clone(),
            },
            transport: match request.source().transport() {
                TransportKind::Stdio => Some("pipe"),
                TransportKind::Http => Some("tcp"),
                _ => None,
            },
            started: Instant::now(),
        }
    }

    /// The span, its parent the client's trace context when it sent one.
    fn span(&self, request: &Request) -> tracing::Span {
        let name = match self.tool.as_deref().or(self.prompt.as_deref()) {
            Some(target) => format!("{} {target}", self.method),
            None => self.method.to_string(),
        };
        let span = tracing::info_span!(
            target: TARGET,
            "mcp.server",
            otel.name = name,
            otel.kind = "server",
            otel.status_code = Empty,
            otel.status_description = Empty,
            mcp.method.name = &*self.method,
            jsonrpc.request.id = %request.id(),
            mcp.protocol.version = self.version.as_str(),
            network.transport = self.transport,
            gen_ai.tool.name = self.tool.as_deref(),
            gen_ai.prompt.name = self.prompt.as_deref(),
            gen_ai.operation.name = self.tool.as_ref().map(|_| "execute_tool"),
            mcp.resource.uri = self.uri.as_deref(),
            gen_ai.tool.call.arguments = self.arguments.as_deref(),
            gen_ai.tool.call.result = Empty,
            error.type = Empty,
            rpc.response.status_code = Empty,
        );
        let meta = request.meta();
        if meta.traceparent.is_some() {
            let carrier = MetaCarrier(meta);
            let parent = opentelemetry::global::get_text_map_propagator(|propagator| {
                propagator.extract(&carrier)
            });
            // Fails only when no OpenTelemetry layer is installed.
            let _ = span.set_parent(parent);
        }
        span
    }

    /// Records the outcome on the span and the histogram.
    fn finish(
        self,
        span: &tracing::Span,
        answer: &Result<Response, BoxError>,
        recording: Recording,
    ) {
        let error = match answer {
            Err(error) => Some(match error.downcast_ref::<ErrorObject>() {
                Some(error) => (error.code.to_string(), error.message.to_string()),
                None => ("-32603".to_owned(), error.to_string()),
            }),
            Ok(result) if self.tool.is_some() && is_tool_error(result) => {
                Some(("tool_error".to_owned(), String::new()))
            }
            Ok(_) => None,
        };
        if let (Ok(result), true) = (answer, recording.results && self.tool.is_some()) {
            span.record("gen_ai.tool.call.result", cut(result.json()));
        }
        let mut attributes = self.attributes();
        if let Some((kind, message)) = &error {
            span.record("error.type", kind.as_str());
            span.record("otel.status_code", "ERROR");
            if !message.is_empty() {
                span.record("otel.status_description", message.as_str());
            }
            attributes.push(KeyValue::new("error.type", kind.clone()));
            if kind != "tool_error" {
                span.record("rpc.response.status_code", kind.as_str());
                attributes.push(KeyValue::new("rpc.response.status_code", kind.clone()));
            }
        }
        let elapsed = self.started.elapsed().as_secs_f64();
        duration().record(elapsed, &attributes);
    }

    /// The histogram point's attributes (no id, no URI: they would make a
    /// series per request).
    fn attributes(&self) -> Vec<KeyValue> {
        let mut attributes = point_attributes(
            &self.method,
            &self.version,
            self.tool.as_deref(),
            self.prompt.as_deref(),
        );
        if let Some(transport) = self.transport {
            attributes.push(KeyValue::new("network.transport", transport));
        }
        attributes
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
fn duration() -> &'static Histogram<f64> {
    static DURATION: OnceLock<Histogram<f64>> = OnceLock::new();
    DURATION.get_or_init(|| {
        histogram(
            "mcp.server.operation.duration",
            "The duration of the MCP request or notification as observed on the receiver from the time it was received until the result or ack is sent.",
        )
    })
}

/// Whether a `tools/call` result is a tool error (`isError: true`).
fn is_tool_error(result: &Response) -> bool {
    #[derive(Deserialize)]
    struct Flag {
        #[serde(rename = "isError", default)]
        is_error: bool,
    }
    serde_json::from_str::<Flag>(result.json()).is_ok_and(|flag| flag.is_error)
}

/// `text`, cut to [`SHOWN_BYTES`] on a character boundary.
fn cut(text: &str) -> String {
    let mut end = text.len().min(SHOWN_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

/// The request's `_meta` trace context, as the propagators read it: the
/// unprefixed `traceparent`, `tracestate` and `baggage` keys.
struct MetaCarrier<'a>(&'a crate::protocol::RequestMeta);

impl Extractor for MetaCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            "traceparent" => self.0.traceparent.as_deref(),
            "tracestate" => self.0.tracestate.as_deref(),
            "baggage" => self.0.baggage.as_deref(),
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec!["traceparent", "tracestate", "baggage"]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parent_based_policy_follows_the_clients_sampled_flag() {
        let kept = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let dropped = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
        let policy = Spans::WhenParentSampled;
        assert!(policy.wanted(Some(kept)));
        assert!(!policy.wanted(Some(dropped)) && !policy.wanted(None));
        assert!(!policy.wanted(Some("garbage")));
        assert!(Spans::Always.wanted(None) && !Spans::Never.wanted(Some(kept)));
    }
}
