//! The built-in client's side of the conventions: a CLIENT span per request,
//! its context injected into the request's `_meta` (so that the server's
//! span continues the client's trace), and `mcp.client.operation.duration`.

use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Histogram, Meter};
use opentelemetry::propagation::Injector;
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use serde_json::{Map, Value};
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use mcp_runtime::diagnostics::{ClientTracer, TracedRequest};
use mcp_runtime::protocol::{ErrorObject, PROTOCOL_VERSION};

use super::layer::{TARGET, histogram};

/// The client's tracer: a [`ClientCall`] per request, each a point of
/// its `mcp.client.operation.duration`.
#[derive(Debug)]
pub(crate) struct ClientSpans {
    duration: Histogram<f64>,
}

impl ClientSpans {
    /// Recording into `meter` (the export's provider's, or the global one).
    pub(crate) fn new(meter: &Meter) -> Self {
        let duration = histogram(
            meter,
            "mcp.client.operation.duration",
            "The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received.",
        );
        ClientSpans { duration }
    }
}

impl ClientTracer for ClientSpans {
    fn start(&self, method: &str, params: &Map<String, Value>, id: u64) -> Box<dyn TracedRequest> {
        Box::new(ClientCall::start(method, params, id, self.duration.clone()))
    }

    fn trace_id(&self, span: &tracing::Span) -> Option<String> {
        super::trace_id(span)
    }
}

/// One request the client sends, traced from send to answer.
struct ClientCall {
    span: tracing::Span,
    attributes: Vec<KeyValue>,
    started: Instant,
    duration: Histogram<f64>,
}

impl ClientCall {
    /// The CLIENT span of request `id` of `method` with `params`, the
    /// current span (the caller's work) its parent; its point goes to
    /// `duration`.
    fn start(
        method: &str,
        params: &Map<String, Value>,
        id: u64,
        duration: Histogram<f64>,
    ) -> ClientCall {
        let name = |key: &str| params.get(key).and_then(Value::as_str);
        let (tool, prompt) = match method {
            "tools/call" => (name("name"), None),
            "prompts/get" => (None, name("name")),
            _ => (None, None),
        };
        let span_name = match tool.or(prompt) {
            Some(target) => format!("{method} {target}"),
            None => method.to_owned(),
        };
        let uri = name("uri").filter(|_| method.starts_with("resources/"));
        let span = tracing::info_span!(
            target: TARGET,
            "mcp.client",
            otel.name = span_name,
            otel.kind = "client",
            otel.status_code = Empty,
            otel.status_description = Empty,
            mcp.method.name = method,
            jsonrpc.request.id = id,
            mcp.protocol.version = PROTOCOL_VERSION,
            gen_ai.tool.name = tool,
            gen_ai.prompt.name = prompt,
            gen_ai.operation.name = tool.map(|_| "execute_tool"),
            mcp.resource.uri = uri,
            error.type = Empty,
            rpc.response.status_code = Empty,
        );
        let version = PROTOCOL_VERSION;
        let attributes = point_attributes(method, version, tool, prompt);
        ClientCall {
            span,
            attributes,
            started: Instant::now(),
            duration,
        }
    }
}

impl TracedRequest for ClientCall {
    fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// Writes the span's context into the request's `_meta`
    /// (`traceparent`, `tracestate`, `baggage`, unprefixed as the
    /// conventions say); nothing when no OpenTelemetry layer records it.
    fn inject(&self, meta: &mut Map<String, Value>) {
        use opentelemetry::propagation::TextMapPropagator as _;
        let context = self.span.context();
        let mut injector = MetaInjector(meta);
        TraceContextPropagator::new().inject_context(&context, &mut injector);
        BaggagePropagator::new().inject_context(&context, &mut injector);
    }

    fn finish(mut self: Box<Self>, error: Option<&ErrorObject>) {
        if let Some(error) = error {
            let code = error.code.to_string();
            self.span.record("error.type", code.as_str());
            self.span.record("rpc.response.status_code", code.as_str());
            self.span.record("otel.status_code", "ERROR");
            self.span.record("otel.status_description", &*error.message);
            self.attributes
                .push(KeyValue::new("error.type", code.clone()));
            self.attributes
                .push(KeyValue::new("rpc.response.status_code", code));
        }
        let elapsed = self.started.elapsed().as_secs_f64();
        self.duration.record(elapsed, &self.attributes);
    }
}

/// A client duration point's attributes: the method, the protocol
/// version, and the tool (with `execute_tool`) or prompt.
fn point_attributes(
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

/// A request's `_meta`, as the propagators write it.
struct MetaInjector<'a>(&'a mut Map<String, Value>);

impl Injector for MetaInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), Value::String(value));
    }
}
