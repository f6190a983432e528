//! Telemetry's shutdown stays within its documented bound (5 s) when the
//! collector accepts connections but never answers: the spans and the
//! metrics are flushed together, not one after the other.
use std::net::TcpListener;
use std::time::{Duration, Instant};

use mcp_runtime_otel::Otel;
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::{Tracer as _, TracerProvider as _};

#[test]
fn shutdown_with_a_collector_that_never_answers_takes_about_5_s_not_10() {
    // The kernel completes the handshakes into the listener's backlog;
    // nothing ever reads a request or answers one.
    let collector = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", collector.local_addr().unwrap());
    let telemetry = Otel::new().endpoint(endpoint).install().unwrap();

    // Something to flush on each signal.
    let tracer = telemetry.tracer_provider().tracer("shutdown-test");
    tracer.in_span("work", |_| {});
    let meter = telemetry.meter_provider().meter("shutdown-test");
    meter.u64_counter("shutdown_test.work").build().add(1, &[]);

    let started = Instant::now();
    drop(telemetry);
    let took = started.elapsed();
    // A bound check with slack for a loaded machine: one 5 s wait, where
    // flushing one signal after the other took 10 s.
    assert!(took < Duration::from_secs(8), "shutdown took {took:?}");
    drop(collector);
}
