//! The runtime's own counters ([`crate::metrics`]) as OpenTelemetry
//! instruments, read when a reader collects (an OTLP export, a Prometheus
//! scrape), and the in-flight requests the request layer counts.
//!
//! Their names are under `mcp_runtime.`, not `mcp.`: the conventions own
//! that namespace, and these are this runtime's, not the conventions'.

use std::sync::atomic::{AtomicI64, Ordering};

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Meter, ObservableCounter, ObservableGauge, ObservableUpDownCounter};

use crate::metrics::{self, Refusal};

/// The observable instruments: kept alive with the [`Telemetry`](super::Telemetry)
/// that registered them.
#[derive(Debug)]
pub(super) struct Counters {
    _refusals: ObservableCounter<u64>,
    _redis_errors: ObservableCounter<u64>,
    _tasks: ObservableGauge<u64>,
    _subscriptions: ObservableGauge<u64>,
    _active: ObservableUpDownCounter<i64>,
}

impl Counters {
    pub(super) fn register(meter: &Meter) -> Counters {
        Counters {
            _refusals: meter
                .u64_observable_counter("mcp_runtime.refusals")
                .with_unit("{request}")
                .with_description(
                    "Requests refused before a handler ran, by reason and HTTP status.",
                )
                .with_callback(|observer| {
                    for (refusal, count) in metrics::snapshot().refusals {
                        observer.observe(count, &refusal_attributes(refusal));
                    }
                })
                .build(),
            _redis_errors: meter
                .u64_observable_counter("mcp_runtime.redis.errors")
                .with_unit("{error}")
                .with_description("Redis commands that failed or did not answer in time.")
                .with_callback(|observer| observer.observe(metrics::snapshot().redis_errors, &[]))
                .build(),
            _tasks: meter
                .u64_observable_gauge("mcp_runtime.tasks.running")
                .with_unit("{task}")
                .with_description("Tasks whose work is running in this process.")
                .with_callback(|observer| observer.observe(metrics::snapshot().tasks_running, &[]))
                .build(),
            _subscriptions: meter
                .u64_observable_gauge("mcp_runtime.subscriptions.open")
                .with_unit("{subscription}")
                .with_description("subscriptions/listen streams open on this process.")
                .with_callback(|observer| {
                    observer.observe(metrics::snapshot().subscriptions_open, &[]);
                })
                .build(),
            _active: meter
                .i64_observable_up_down_counter("mcp_runtime.requests.active")
                .with_unit("{request}")
                .with_description("Requests being served now (in flight).")
                .with_callback(|observer| observer.observe(ACTIVE.load(Ordering::Relaxed), &[]))
                .build(),
        }
    }
}

fn refusal_attributes(refusal: Refusal) -> [KeyValue; 2] {
    [
        KeyValue::new("reason", refusal.reason()),
        KeyValue::new("http.response.status_code", i64::from(refusal.status())),
    ]
}

/// Requests the request layer has let in and not yet answered: counted
/// here and read when a reader collects (an OpenTelemetry up-down counter
/// would hash an attribute set twice per request).
static ACTIVE: AtomicI64 = AtomicI64::new(0);

/// Counts one request in flight while it lives.
pub(super) struct InFlight(());

impl InFlight {
    pub(super) fn begin() -> InFlight {
        InFlight::opened();
        InFlight(())
    }

    /// A request began (an observer's count, which has no guard).
    pub(super) fn opened() {
        ACTIVE.fetch_add(1, Ordering::Relaxed);
    }

    /// A request ended.
    pub(super) fn closed() {
        ACTIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        InFlight::closed();
    }
}
