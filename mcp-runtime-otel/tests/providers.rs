//! Providers of the application's own, one export per server: two servers
//! in one process, each given a `Telemetry` over in-memory providers of
//! its own, record their metrics apart (nothing of the export is global),
//! the spans of both go through the one OpenTelemetry layer of the
//! application's subscriber, and flushing leaves the application's
//! providers running.

use mcp_runtime::testing::TestClient;
use mcp_runtime::{ServerBuilder, tool};
use mcp_runtime_otel::{Otel, Telemetry};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt as _;

/// Says hello.
#[tool]
fn provided_hello(name: String) -> String {
    format!("hello {name}")
}

/// An export over in-memory providers, with what reads them back.
struct Exported {
    telemetry: Telemetry,
    spans: InMemorySpanExporter,
    metrics: InMemoryMetricExporter,
}

fn exported() -> Exported {
    let spans = InMemorySpanExporter::default();
    let metrics = InMemoryMetricExporter::default();
    let tracer_provider = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    let meter_provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics.clone()).build())
        .build();
    let telemetry = Otel::new()
        .providers(tracer_provider, meter_provider)
        .install()
        .unwrap();
    Exported {
        telemetry,
        spans,
        metrics,
    }
}

/// How many points `name` counted, over every exported batch's last one.
fn histogram_count(metrics: &InMemoryMetricExporter, name: &str) -> u64 {
    let batches = metrics.get_finished_metrics().unwrap();
    let Some(last) = batches.last() else { return 0 };
    let found = last.scope_metrics().flat_map(|scope| scope.metrics());
    let found = found.filter(|metric| metric.name() == name);
    found
        .map(|metric| match metric.data() {
            AggregatedMetrics::F64(MetricData::Histogram(histogram)) => histogram
                .data_points()
                .map(|point| point.count())
                .sum::<u64>(),
            other => panic!("{name} is not an f64 histogram: {other:?}"),
        })
        .sum::<u64>()
}

#[tokio::test]
async fn two_servers_record_into_their_own_providers() {
    let (one, two) = (exported(), exported());
    // A subscriber takes one OpenTelemetry layer: the spans go where the
    // application's subscriber sends them, the metrics to each server's.
    let subscriber = tracing_subscriber::registry().with(one.telemetry.tracing_layer());
    let _default = tracing::subscriber::set_default(subscriber);
    let server = |telemetry: &Telemetry| {
        ServerBuilder::new("provided", "1.0.0")
            .with(telemetry)
            .build()
            .unwrap()
    };
    let mut first = TestClient::with_server(server(&one.telemetry));
    let mut second = TestClient::with_server(server(&two.telemetry));
    for _ in 0..2 {
        let called = first
            .call_tool("provided_hello", json!({"name": "Ada"}))
            .await;
        assert!(!called.complete().is_error);
    }
    let called = second
        .call_tool("provided_hello", json!({"name": "Bo"}))
        .await;
    assert!(!called.complete().is_error);

    for export in [&one, &two] {
        export.telemetry.flush();
    }
    let server_points =
        |export: &Exported| histogram_count(&export.metrics, "mcp.server.operation.duration");
    let client_points =
        |export: &Exported| histogram_count(&export.metrics, "mcp.client.operation.duration");
    assert_eq!((server_points(&one), server_points(&two)), (2, 1));
    assert_eq!((client_points(&one), client_points(&two)), (2, 1));
    // The subscriber's layer exported every call's CLIENT and SERVER
    // spans, the second server's too.
    let named = |export: &Exported| {
        let spans = export.spans.get_finished_spans().unwrap();
        spans
            .iter()
            .filter(|span| span.name == "tools/call provided_hello")
            .count()
    };
    assert_eq!((named(&one), named(&two)), (6, 0));
    // Flushed, not shut down: the application's providers still run.
    assert!(one.telemetry.meter_provider().force_flush().is_ok());
}
