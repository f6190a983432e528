//! Logging that a client cannot turn against the server. Its public part
//! is [`Throttle`]: events a client can provoke at will (refusals, a shared
//! store failing under load) logged at most once a second per kind, with a
//! count of the rest, for plugins as for the runtime.
//!
//! Inside, values a client sent are cut and escaped before they are logged
//! (`Shown`), and the standard entry point writes to stderr through a
//! bounded, non-blocking queue that drops lines (and says how many) rather
//! than stall a worker when nobody reads stderr (`init`).

use std::fmt;
use std::io::{IsTerminal as _, Write as _};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use tracing_appender::non_blocking::{NonBlocking, NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::fmt::MakeWriter;

#[cfg_attr(
    all(not(feature = "http"), not(test)),
    expect(dead_code, reason = "client values are logged by the HTTP transport")
)]
/// How much of a client's value a log line shows.
const SHOWN_BYTES: usize = 64;

/// Lines waiting for stderr before new ones are dropped.
const QUEUED_LINES: usize = 8_192;

#[cfg_attr(
    all(not(feature = "http"), not(test)),
    expect(dead_code, reason = "client values are logged by the HTTP transport")
)]
/// A value the client sent, as a log line shows it: escaped (quoted, with
/// control characters written as escapes) and cut to its first 64 bytes,
/// with its full length. A 60 KB `Host` header then costs a line, not 60
/// KB of log per request.
pub(crate) struct Shown<'a>(pub(crate) Option<&'a str>);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(value) = self.0 else {
            return f.write_str("(none)");
        };
        if value.len() <= SHOWN_BYTES {
            return write!(f, "{value:?}");
        }
        let mut cut = SHOWN_BYTES;
        while !value.is_char_boundary(cut) {
            cut -= 1;
        }
        write!(f, "{:?}... ({} bytes)", &value[..cut], value.len())
    }
}

/// At most one log line a second for one kind of event; the events in
/// between are counted, and the next line says how many there were. A
/// count still pending when the events stop is not logged.
///
/// ```
/// use mcp_runtime::diagnostics::Throttle;
///
/// static FAILED: Throttle = Throttle::new();
///
/// for _ in 0..1000 {
///     FAILED.note(|suppressed| tracing::warn!(suppressed, "the store did not answer"));
/// }
/// ```
#[derive(Debug)]
pub struct Throttle {
    /// Milliseconds since [`epoch`] at the last line, plus one (0: never).
    last: AtomicU64,
    suppressed: AtomicU64,
}

#[cfg_attr(
    not(feature = "http"),
    expect(dead_code, reason = "client values are logged by the HTTP transport")
)]
/// The refusals a client can provoke at will, one throttle per kind.
pub(crate) struct Refusals {
    pub(crate) host: Throttle,
    pub(crate) origin: Throttle,
    /// Tokens that could not be verified (the authorization server is
    /// unreachable).
    pub(crate) unverified: Throttle,
    /// Connections and requests past their client's caps.
    pub(crate) client: Throttle,
}

#[cfg_attr(
    not(feature = "http"),
    expect(dead_code, reason = "client values are logged by the HTTP transport")
)]
pub(crate) static REFUSALS: Refusals = Refusals {
    host: Throttle::new(),
    origin: Throttle::new(),
    unverified: Throttle::new(),
    client: Throttle::new(),
};

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

impl Default for Throttle {
    fn default() -> Self {
        Throttle::new()
    }
}

impl Throttle {
    /// A throttle that has logged nothing yet.
    pub const fn new() -> Throttle {
        Throttle {
            last: AtomicU64::new(0),
            suppressed: AtomicU64::new(0),
        }
    }

    /// Calls `log` with the number of events not logged since the last
    /// line, unless a line was written less than a second ago.
    pub fn note(&self, log: impl FnOnce(u64)) {
        let now = u64::try_from(epoch().elapsed().as_millis()).unwrap_or(u64::MAX - 1);
        self.note_at(now + 1, log);
    }

    /// [`note`](Self::note) at `now` (milliseconds since the epoch, plus one).
    fn note_at(&self, now: u64, log: impl FnOnce(u64)) {
        let last = self.last.load(Ordering::Relaxed);
        let due = last == 0 || now.saturating_sub(last) >= 1_000;
        // Of two threads due at once, one logs and the other counts.
        if !due
            || self
                .last
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            self.suppressed.fetch_add(1, Ordering::Relaxed);
            return;
        }
        log(self.suppressed.swap(0, Ordering::Relaxed));
    }
}

/// The `tracing` target of the audit events (`mcp::audit`): tool
/// calls, refusals and authorization failures, with the arguments as the
/// audit's rules about secrets allow. An exporter of spans leaves it out.
pub const AUDIT_TARGET: &str = "mcp::audit";

/// The `tracing` target of a task's work span (`task {tool}`, `mcp::task`),
/// linked to the request that created the task.
pub const TASK_TARGET: &str = "mcp::task";

/// The `tracing` target of the inspector's span around each command
/// (`mcp::inspect`), whose requests share its trace.
pub const INSPECT_TARGET: &str = "mcp::inspect";

/// Traces the requests a [`Client`](crate::client::Client) sends: a span per
/// request, its context written into the request's `_meta` (so that the
/// server's span continues the client's trace), and the answer recorded.
/// `mcp-runtime-otel` implements it by OpenTelemetry's conventions for
/// MCP; give it to a client with `Client::set_tracer` (feature `client`),
/// or to a server's plugin setup with
/// [`Setup::client_tracer`](crate::plugin::Setup::client_tracer) for the
/// clients made for that server (`TestClient`, the inspector).
pub trait ClientTracer: Send + Sync + 'static {
    /// Starts tracing request `id` of `method` with `params` (its `_meta`
    /// not written yet), the current span its parent.
    fn start(
        &self,
        method: &str,
        params: &serde_json::Map<String, serde_json::Value>,
        id: u64,
    ) -> Box<dyn TracedRequest>;

    /// The trace id of `span` as a trace viewer shows it, if this tracer
    /// records it (the inspector prints it for its command's span).
    fn trace_id(&self, span: &tracing::Span) -> Option<String> {
        let _ = span;
        None
    }
}

/// One request being traced, from [`ClientTracer::start`].
pub trait TracedRequest: Send {
    /// The span the request is sent and answered in.
    fn span(&self) -> &tracing::Span;

    /// Writes the span's context into the request's `_meta`.
    fn inject(&self, meta: &mut serde_json::Map<String, serde_json::Value>);

    /// Records the answer: `error` is the JSON-RPC error, if it was one.
    fn finish(self: Box<Self>, error: Option<&crate::protocol::ErrorObject>);
}

/// A shared [`ClientTracer`], as clients and servers hold one.
pub type SharedTracer = std::sync::Arc<dyn ClientTracer>;

/// A `tracing` layer that exports spans (a plugin's: see
/// [`Setup::tracing_layer`](crate::plugin::Setup::tracing_layer)), so that
/// logging knows no exporter.
pub(crate) type Exported =
    Box<dyn tracing_subscriber::Layer<tracing_subscriber::Registry> + Send + Sync>;

/// What makes an [`Exported`] layer each time `run()` starts (a plugin's).
pub(crate) type MakeExported = std::sync::Arc<dyn Fn() -> Exported + Send + Sync>;

/// Logging to stderr for the standard entry point: what `RUST_LOG` enables,
/// in tracing-subscriber's `EnvFilter` directives (`info`,
/// `info,my_server=debug`, `warn,mcp::audit=info`; default `warn`; without
/// the `env-filter` feature, its `target=level` directives only), and
/// with `exported` the spans exported too, whatever the log shows. Keep the
/// guard until the process ends: dropping it writes out what is queued
/// (waiting at most a second for a stderr nobody reads).
pub(crate) fn init(exported: Vec<Exported>) -> Option<LogGuard> {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let spec = std::env::var("RUST_LOG").ok();
    let writer = Arc::new(Dropping::default());
    let ansi = std::io::stderr().is_terminal();
    let log = || (Shared(writer.clone()), ansi, spec.as_deref());
    // The exporters first (a `Vec` of layers is one layer); without any,
    // the log alone, so that a server that exports nothing has exactly
    // the subscriber it had before exporters could be plugged in (an
    // empty `Vec`'s interest in a callsite would be `never`).
    let installed = match exported.is_empty() {
        true => (tracing_subscriber::registry().with(log_layer(log()))).try_init(),
        false => (tracing_subscriber::registry().with(exported))
            .with(log_layer(log()))
            .try_init(),
    };
    installed.is_ok().then_some(LogGuard(writer))
}

/// The log to stderr: `writer`, in color when `ansi`, what `RUST_LOG`'s
/// `spec` enables.
fn log_layer<S>(
    (writer, ansi, spec): (Shared, bool, Option<&str>),
) -> impl tracing_subscriber::Layer<S>
where
    S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
{
    use tracing_subscriber::Layer as _;
    tracing_subscriber::fmt::layer()
        .with_writer(writer)
        .with_ansi(ansi)
        .with_filter(log_filter(spec))
}

/// The log's filter for a `RUST_LOG` value: `warn` when unset or empty;
/// directives that do not parse are left out (tracing-subscriber says which
/// on stderr). Regular expressions in field values stay off: the variable
/// comes from whoever starts the process, and a pattern is compiled per
/// span it is matched against.
#[cfg(feature = "env-filter")]
fn log_filter(spec: Option<&str>) -> tracing_subscriber::EnvFilter {
    tracing_subscriber::EnvFilter::builder()
        .with_default_directive(tracing_subscriber::filter::LevelFilter::WARN.into())
        .with_regex(false)
        .parse_lossy(spec.unwrap_or(""))
}

/// The log's filter without the `env-filter` feature: `RUST_LOG`'s `level`
/// and `target=level` directives (`info,my_server=debug`); one that does
/// not parse (a span or field directive among them) is left out, and said
/// so on stderr.
#[cfg(not(feature = "env-filter"))]
fn log_filter(spec: Option<&str>) -> tracing_subscriber::filter::Targets {
    use tracing_subscriber::filter::{LevelFilter, Targets};
    let mut filter = Targets::new().with_default(LevelFilter::WARN);
    let directives = spec.unwrap_or("").split(',').map(str::trim);
    for directive in directives.filter(|d| !d.is_empty()) {
        match directive.parse::<Targets>() {
            Ok(parsed) => {
                if let Some(level) = parsed.default_level() {
                    filter = filter.with_default(level);
                }
                filter = filter.with_targets(parsed);
            }
            // Logging is not set up yet: stderr is where it would go.
            Err(error) => eprintln!("ignoring RUST_LOG directive {directive:?}: {error}"),
        }
    }
    filter
}

/// Flushes the log when dropped.
pub(crate) struct LogGuard(Arc<Dropping>);

impl Drop for LogGuard {
    fn drop(&mut self) {
        let guard = self
            .0
            .guard
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        drop(guard);
    }
}

/// The non-blocking writer, started with the first line (a server that
/// logs nothing keeps a single thread, which the kernel serves faster), and
/// which first says how many lines it dropped since it last said so.
#[derive(Default)]
struct Dropping {
    writer: OnceLock<NonBlocking>,
    guard: Mutex<Option<WorkerGuard>>,
    reported: AtomicUsize,
}

impl Dropping {
    fn writer(&self) -> &NonBlocking {
        self.writer.get_or_init(|| {
            let (writer, guard) = NonBlockingBuilder::default()
                .lossy(true)
                .buffered_lines_limit(QUEUED_LINES)
                .thread_name("mcp-log")
                .finish(std::io::stderr());
            *self
                .guard
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(guard);
            writer
        })
    }
}

/// The writer, shared with the guard that flushes it.
struct Shared(Arc<Dropping>);

impl<'a> MakeWriter<'a> for Shared {
    type Writer = NonBlocking;

    fn make_writer(&'a self) -> NonBlocking {
        self.0.make_writer()
    }
}

impl Dropping {
    fn make_writer(&self) -> NonBlocking {
        let mut writer = self.writer().clone();
        let dropped = writer.error_counter().dropped_lines();
        let reported = self.reported.load(Ordering::Relaxed);
        if dropped > reported
            && self
                .reported
                .compare_exchange(reported, dropped, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            let _ = writeln!(
                writer,
                "WARN mcp_runtime: {} log lines were dropped: stderr was not read fast enough",
                dropped - reported
            );
        }
        writer
    }
}

/// Logs that `what` panicked (its answer, if any, is an internal error).
pub(crate) fn report_panic(what: &str, panic: &(dyn std::any::Any + Send)) {
    tracing::error!(panic = panic_message(panic), "{what} panicked");
}

pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("<non-string panic payload>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_log_takes_directives_by_target() {
        use tracing::Level;
        use tracing::metadata::{Kind, Metadata};
        /// The log filter's verdict on an event of `target` at `level`.
        fn logs(spec: Option<&str>, target: &'static str, level: Level) -> bool {
            use tracing_subscriber::layer::Filter;
            struct Nowhere;
            impl tracing::Callsite for Nowhere {
                fn set_interest(&self, _: tracing::subscriber::Interest) {}
                fn metadata(&self) -> &Metadata<'_> {
                    unreachable!("never registered")
                }
            }
            static NOWHERE: Nowhere = Nowhere;
            let fields =
                tracing::field::FieldSet::new(&[], tracing::callsite::Identifier(&NOWHERE));
            let metadata = Metadata::new("e", target, level, None, None, None, fields, Kind::EVENT);
            let metadata: &'static Metadata<'static> = Box::leak(Box::new(metadata));
            let filter = log_filter(spec);
            Filter::<tracing_subscriber::Registry>::callsite_enabled(&filter, metadata).is_always()
        }
        let spec = Some("info,my_server=debug");
        assert!(logs(spec, "my_server::db", Level::DEBUG));
        assert!(logs(spec, "mcp_runtime::dispatch", Level::INFO));
        assert!(!logs(spec, "mcp_runtime::dispatch", Level::DEBUG));
        assert!(logs(None, "my_server", Level::WARN));
        assert!(!logs(None, "my_server", Level::INFO));
        assert!(!logs(Some(""), "my_server", Level::INFO));
        let audit = Some("warn,mcp::audit=info");
        assert!(logs(audit, "mcp::audit", Level::INFO));
        assert!(!logs(audit, "my_server", Level::INFO));
        assert!(!logs(
            Some("info,mcp::audit=off"),
            "mcp::audit",
            Level::INFO
        ));
    }

    #[test]
    fn long_values_are_cut_and_escaped() {
        assert_eq!(Shown(None).to_string(), "(none)");
        assert_eq!(Shown(Some("a\nb\"")).to_string(), r#""a\nb\"""#);
        let long = "é".repeat(40);
        let shown = Shown(Some(&long)).to_string();
        assert_eq!(shown, format!("{:?}... (80 bytes)", "é".repeat(32)));
    }

    #[test]
    fn a_throttle_logs_once_a_second_and_counts_the_rest() {
        let throttle = Throttle::new();
        let mut lines = Vec::new();
        for now in [1, 2, 500, 999, 1_000] {
            throttle.note_at(now, |suppressed| lines.push(suppressed));
        }
        assert_eq!(lines, [0]);
        // A second after the last line, the next one counts the four not
        // logged.
        throttle.note_at(1_001, |suppressed| lines.push(suppressed));
        throttle.note_at(1_002, |suppressed| lines.push(suppressed));
        throttle.note_at(2_001, |suppressed| lines.push(suppressed));
        assert_eq!(lines, [0, 4, 1]);
    }
}
