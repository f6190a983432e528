//! The built-in client's CLIENT span and the server's SERVER span of one
//! request, in process: the client injects its span's context into `_meta`,
//! the server's span is its child, in the same trace, both named and
//! attributed by the MCP conventions. Spans are collected by the SDK's
//! in-memory exporter through `tracing-opentelemetry`, as a real exporter
//! would get them.
use mcp_runtime::testing::TestClient;
use mcp_runtime::{ServerBuilder, tool};
use mcp_runtime_otel::OtelLayer;
use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt as _;

/// Says hello.
#[tool]
fn otel_hello(name: String) -> String {
    format!("hello {name}")
}

fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

#[tokio::test]
async fn the_server_span_continues_the_client_span() {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    let _default = tracing::subscriber::set_default(subscriber);

    let server = ServerBuilder::new("otel-test", "1.0.0")
        .with(OtelLayer::new())
        .build()
        .unwrap();
    let mut client = TestClient::with_server(server);
    let called = client
        .call_tool("otel_hello", json!({"name": "Ada"}))
        .await
        .complete();
    assert!(!called.is_error, "{called:?}");
    let missing = client.call_tool("nothing", json!({})).await.error();
    assert_eq!(missing.code, -32602);
    provider.force_flush().unwrap();

    let spans = exporter.get_finished_spans().unwrap();
    let named = |name: &str, kind: SpanKind| {
        spans
            .iter()
            .find(|span| span.name == name && span.span_kind == kind)
            .unwrap_or_else(|| panic!("no {kind:?} span {name}: {spans:#?}"))
    };
    let client_span = named("tools/call otel_hello", SpanKind::Client);
    let server_span = named("tools/call otel_hello", SpanKind::Server);
    assert_eq!(
        server_span.span_context.trace_id(),
        client_span.span_context.trace_id()
    );
    assert_eq!(
        server_span.parent_span_id,
        client_span.span_context.span_id()
    );
    for span in [client_span, server_span] {
        assert_eq!(
            attribute(span, "mcp.method.name").as_deref(),
            Some("tools/call")
        );
        assert_eq!(
            attribute(span, "gen_ai.tool.name").as_deref(),
            Some("otel_hello")
        );
        assert_eq!(
            attribute(span, "gen_ai.operation.name").as_deref(),
            Some("execute_tool")
        );
        assert_eq!(
            attribute(span, "mcp.protocol.version").as_deref(),
            Some("2026-07-28")
        );
        assert_eq!(span.status, Status::Unset);
    }
    // In process: no network transport to name.
    assert_eq!(attribute(server_span, "network.transport"), None);

    // An error answer: both sides record its code and the ERROR status.
    let client_error = named("tools/call nothing", SpanKind::Client);
    let server_error = named("tools/call nothing", SpanKind::Server);
    assert_eq!(
        server_error.parent_span_id,
        client_error.span_context.span_id()
    );
    for span in [client_error, server_error] {
        assert_eq!(attribute(span, "error.type").as_deref(), Some("-32602"));
        assert_eq!(
            attribute(span, "rpc.response.status_code").as_deref(),
            Some("-32602")
        );
        assert!(
            matches!(span.status, Status::Error { .. }),
            "{:?}",
            span.status
        );
    }
}
