//! The runtime's own counters ([`mcp_runtime::metrics`]) as OpenTelemetry
//! instruments, read when a reader collects (an OTLP export, a Prometheus
//! scrape), and the in-flight requests the request layer counts.
//!
//! Their names are under `mcp_runtime.`, not `mcp.`: the conventions own
//! that namespace, and these are this runtime's, not the conventions'.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Meter, ObservableCounter, ObservableGauge, ObservableUpDownCounter};

use mcp_runtime::metrics::{Metrics, Refusal, Snapshot, WeakMetrics};

/// What an export reads when a reader collects: the counters of every
/// server it was given to (`.with(otel)`, `.with(&telemetry)`), and the
/// requests its layers have in flight. Each server counts its own; the
/// export reports their sum, as one process's. A server that is gone
/// drops out of the sum.
#[derive(Debug, Default)]
pub(crate) struct Sources {
    /// Locked when a server is built and when a reader collects, never
    /// on a request's path.
    servers: Mutex<Vec<WeakMetrics>>,
    active: Active,
}

impl Sources {
    /// Reads `metrics` (a server's, as it is built) at each collection.
    pub(crate) fn attach(&self, metrics: &Metrics) {
        let mut servers = self.servers.lock().unwrap_or_else(PoisonError::into_inner);
        servers.push(metrics.downgrade());
    }

    /// The in-flight count the export's layers keep.
    pub(super) fn active(&self) -> &Active {
        &self.active
    }

    /// The live servers' counts, added up; the servers gone are forgotten.
    fn total(&self) -> Snapshot {
        let mut servers = self.servers.lock().unwrap_or_else(PoisonError::into_inner);
        let mut total = Metrics::default().snapshot();
        servers.retain(|server| {
            let Some(counts) = server.snapshot() else {
                return false;
            };
            for (sum, (_, count)) in total.refusals.iter_mut().zip(counts.refusals) {
                sum.1 += count;
            }
            total.tasks_running += counts.tasks_running;
            total.subscriptions_open += counts.subscriptions_open;
            total.shared_store_errors += counts.shared_store_errors;
            true
        });
        total
    }
}

/// The observable instruments: kept alive with the [`Telemetry`](super::Telemetry)
/// that registered them.
#[derive(Debug)]
pub(super) struct Counters {
    _refusals: ObservableCounter<u64>,
    _shared_store_errors: ObservableCounter<u64>,
    _tasks: ObservableGauge<u64>,
    _subscriptions: ObservableGauge<u64>,
    _active: ObservableUpDownCounter<i64>,
}

impl Counters {
    pub(super) fn register(meter: &Meter, sources: &Arc<Sources>) -> Counters {
        let [refusals, store, tasks, subscriptions, active] = [(); 5].map(|()| sources.clone());
        Counters {
            _refusals: meter
                .u64_observable_counter("mcp_runtime.refusals")
                .with_unit("{request}")
                .with_description(
                    "Requests refused before a handler ran, by reason and HTTP status.",
                )
                .with_callback(move |observer| {
                    for (refusal, count) in refusals.total().refusals {
                        observer.observe(count, &refusal_attributes(refusal));
                    }
                })
                .build(),
            _shared_store_errors: meter
                .u64_observable_counter("mcp_runtime.shared_store.errors")
                .with_unit("{error}")
                .with_description(
                    "Commands to the shared store (Redis) that failed or did not answer in time.",
                )
                .with_callback(move |observer| {
                    observer.observe(store.total().shared_store_errors, &[])
                })
                .build(),
            _tasks: meter
                .u64_observable_gauge("mcp_runtime.tasks.running")
                .with_unit("{task}")
                .with_description("Tasks whose work is running in this process.")
                .with_callback(move |observer| observer.observe(tasks.total().tasks_running, &[]))
                .build(),
            _subscriptions: meter
                .u64_observable_gauge("mcp_runtime.subscriptions.open")
                .with_unit("{subscription}")
                .with_description("subscriptions/listen streams open on this process.")
                .with_callback(move |observer| {
                    observer.observe(subscriptions.total().subscriptions_open, &[]);
                })
                .build(),
            _active: meter
                .i64_observable_up_down_counter("mcp_runtime.requests.active")
                .with_unit("{request}")
                .with_description("Requests being served now (in flight).")
                .with_callback(move |observer| {
                    observer.observe(active.active.0.load(Ordering::Relaxed), &[]);
                })
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

/// Requests the export's layers have let in and not yet answered: counted
/// here and read when a reader collects (an OpenTelemetry up-down counter
/// would hash an attribute set twice per request). One per export, shared
/// by the layers it hands out.
#[derive(Clone, Debug, Default)]
pub(crate) struct Active(Arc<AtomicI64>);

impl Active {
    /// A request began (an observer's count, which has no guard).
    pub(super) fn opened(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    /// A request ended.
    pub(super) fn closed(&self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }

    /// Counts one request in flight while the guard lives (a clone of the
    /// count: the guard goes into the request's boxed future).
    pub(super) fn begin(&self) -> InFlight {
        self.opened();
        InFlight(self.clone())
    }
}

/// Counts one request in flight while it lives.
pub(super) struct InFlight(Active);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.closed();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_export_adds_up_the_servers_it_was_given_to_while_they_live() {
        let sources = Sources::default();
        let (first, second, other) = (Metrics::default(), Metrics::default(), Metrics::default());
        sources.attach(&first);
        sources.attach(&second);
        first.shared_store_error();
        second.shared_store_error();
        second.shared_store_error();
        other.shared_store_error();
        let total = sources.total();
        assert_eq!(total.shared_store_errors, 3, "not the server left out");
        assert!(total.refusals.iter().all(|(_, count)| *count == 0));
        drop(first);
        assert_eq!(sources.total().shared_store_errors, 2);
        assert_eq!(
            sources.servers.lock().unwrap().len(),
            1,
            "a server gone is forgotten"
        );
    }
}
