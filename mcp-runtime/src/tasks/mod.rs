//! The Tasks extension (`io.modelcontextprotocol/tasks`): long-running
//! tools as durable, pollable tasks.
//!
//! Mark a tool `#[tool(task)]` and write it as any other. For a client
//! whose request declares the extension, `tools/call` answers at once with
//! a task handle (`resultType: "task"`); the tool runs on the server's task
//! workers, its progress becomes the task's status message, and its asks
//! (`input.elicit(..)` and friends) put the task in `input_required` until
//! `tasks/update` brings the answers, resuming the same running handler.
//! The client polls with `tasks/get` (the result is inlined once
//! `completed`), or listens for `notifications/tasks`, and may stop the
//! work with `tasks/cancel`. A client that did not declare the extension
//! gets the ordinary result, synchronously; `#[tool(task(required))]`
//! answers it with `-32021` instead.
//!
//! The engine is the tool's innermost item layer (see
//! [`middleware`](crate::middleware)): layers around it see the call and
//! the task it made ([`Output::Task`](crate::middleware::Output::Task)),
//! and the tool's `timeout_ms` bounds the task's work.
//!
//! ```no_run
//! use mcp_runtime::{Progress, tool};
//!
//! /// Builds the release: takes minutes.
//! #[tool(task)]
//! async fn build(target: String, #[ctx] progress: Progress) -> String {
//!     for step in 1..=10 {
//!         tokio::time::sleep(std::time::Duration::from_secs(6)).await;
//!         progress.report_message(f64::from(step), Some(10.0), &format!("step {step} of 10"));
//!     }
//!     format!("built {target}")
//! }
//! # fn main() {}
//! ```
//!
//! Tasks are kept in a [`TaskStore`]: [`InMemoryTaskStore`] by default
//! (bounded; one process), or a store several instances share, set with
//! [`TaskOptions::store`] and `ServerBuilder::with(TaskOptions)`. Every task is bound
//! to the caller that created it: another caller's `tasks/get`,
//! `tasks/update` or `tasks/cancel` gets exactly the error an unknown id
//! gets.

mod driver;
mod engine;
mod memory;
mod methods;
mod record;
mod store;
pub(crate) mod wire;
pub use self::wire::PROGRESS_META_KEY;
mod workers;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub(crate) use self::driver::TaskPlan;
pub(crate) use self::engine::Followed;
pub use self::engine::{TASK_ENGINE, TASK_ENGINES, TaskEngine};
pub use self::memory::InMemoryTaskStore;
pub(crate) use self::methods::announce;
pub use self::record::{
    Lease, Signals, TaskOutcome, TaskProgress, TaskRecord, TaskStatus, TaskUpdate,
};
pub use self::store::{StoreError, StoreFuture, TaskStore};
use crate::protocol::{ErrorObject, error_code};
use crate::security::Principal;
use crate::source::{RequestSource, TransportKind};

/// The extension's identifier.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/tasks";

/// The `tracing` target of a task's work span (`task {tool}`).
pub(crate) const WORK_TARGET: &str = crate::diagnostics::TASK_TARGET;

/// How a server runs tasks: where they are kept, how long, how often
/// clients should poll. A plugin: `.with(TaskOptions::new()...)` offers the
/// extension even without task tools; a server with `#[tool(task)]` tools
/// and no options uses the defaults.
#[derive(Clone)]
#[must_use]
pub struct TaskOptions {
    pub(crate) store: Arc<dyn TaskStore>,
    /// Whether `store` is the default one (a server with shared state then
    /// keeps its tasks there instead).
    pub(crate) default_store: bool,
    pub(crate) ttl: Duration,
    pub(crate) max_ttl: Duration,
    pub(crate) poll_interval: Duration,
    pub(crate) lease: Duration,
    pub(crate) workers: usize,
}

impl fmt::Debug for TaskOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskOptions")
            .field("store", &self.store)
            .field("ttl", &self.ttl)
            .field("max_ttl", &self.max_ttl)
            .field("poll_interval", &self.poll_interval)
            .field("lease", &self.lease)
            .field("workers", &self.workers)
            .finish()
    }
}

impl Default for TaskOptions {
    fn default() -> Self {
        TaskOptions {
            store: Arc::new(InMemoryTaskStore::default()),
            default_store: true,
            ttl: Duration::from_secs(3600),
            max_ttl: Duration::from_secs(24 * 3600),
            poll_interval: Duration::from_secs(1),
            lease: Duration::from_secs(30),
            workers: std::thread::available_parallelism().map_or(1, usize::from),
        }
    }
}

impl TaskOptions {
    /// The defaults: an [`InMemoryTaskStore`], tasks kept an hour (at most
    /// a day, whatever a tool declares), polls every second, a 30-second
    /// lease, one worker thread per CPU.
    pub fn new() -> Self {
        TaskOptions::default()
    }

    /// Keeps tasks in `store`.
    pub fn store(mut self, store: impl TaskStore) -> Self {
        self.store = Arc::new(store);
        self.default_store = false;
        self
    }

    /// Keeps tasks in `store`, shared with other code.
    pub fn shared_store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.store = store;
        self.default_store = false;
        self
    }

    /// How long a task is kept after it is created (its `ttlMs`), unless
    /// its tool declares `task(ttl_ms = ...)` (default one hour).
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl.max(Duration::from_millis(1));
        self
    }

    /// The longest any task is kept, whatever its tool declares (default
    /// one day). Results may hold user data: this bounds how long.
    pub fn max_ttl(mut self, ttl: Duration) -> Self {
        self.max_ttl = ttl.max(Duration::from_millis(1));
        self
    }

    /// How often clients should poll (`pollIntervalMs`), unless the tool
    /// declares `task(poll_interval_ms = ...)` (default one second).
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// How long a worker's claim on a running task lasts without renewal
    /// (renewed every third of it). A task whose instance stopped is
    /// reported `failed` once its lease has run out (default 30 seconds).
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(30));
        self
    }

    /// How many threads run tasks (default: one per CPU). They start with
    /// the first task.
    pub fn workers(mut self, threads: usize) -> Self {
        self.workers = threads.max(1);
        self
    }

    /// The store.
    pub fn task_store(&self) -> &Arc<dyn TaskStore> {
        &self.store
    }
}

/// What a server running tasks holds: its options, its workers, the
/// identity its workers' leases carry, and the clock.
pub(crate) struct TaskHost {
    pub(crate) options: TaskOptions,
    pub(crate) workers: self::workers::Workers,
    /// Random per process: a lease names the process holding it.
    pub(crate) worker: String,
    pub(crate) clock: crate::mrtr::Clock,
}

impl fmt::Debug for TaskHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskHost")
            .field("options", &self.options)
            .field("worker", &self.worker)
            .finish_non_exhaustive()
    }
}

impl TaskHost {
    pub(crate) fn new(options: TaskOptions, clock: crate::mrtr::Clock) -> Self {
        TaskHost {
            workers: self::workers::Workers::new(options.workers),
            worker: format!("worker-{}", new_id()),
            options,
            clock,
        }
    }

    /// Now, in milliseconds since the Unix epoch.
    pub(crate) fn now(&self) -> u64 {
        millis((self.clock)())
    }

    /// A lease for this process's worker from `now_ms`.
    pub(crate) fn lease(&self, now_ms: u64) -> Lease {
        let lease = u64::try_from(self.options.lease.as_millis()).unwrap_or(u64::MAX);
        Lease {
            worker: self.worker.clone(),
            expires_at_ms: now_ms.saturating_add(lease),
        }
    }

    /// The store.
    pub(crate) fn store(&self) -> &dyn TaskStore {
        &*self.options.store
    }

    /// Runs `job` on a task worker.
    pub(crate) fn spawn(&self, job: self::workers::Job) -> Result<(), &'static str> {
        self.workers.spawn(job)
    }

    /// The extension serving `tasks/get`, `tasks/update` and `tasks/cancel`.
    pub(crate) fn extension(self: &Arc<Self>) -> crate::extension::Extension {
        self::methods::extension(self.clone())
    }
}

/// The owner key a request's tasks are bound to, and counted under: the
/// authenticated caller, or, without one, the client as the transport
/// knows it: on HTTP its address (IPv6 by its /64, as fair admission
/// counts clients), stdio's one client, the process's in-process callers.
/// Anonymous callers of one address are told apart only by their
/// unguessable task ids.
pub(crate) fn owner(source: &RequestSource) -> String {
    owner_of(
        source.principal(),
        source.transport(),
        source.client_address(),
    )
}

fn owner_of(
    principal: Option<&Principal>,
    transport: TransportKind,
    address: Option<std::net::IpAddr>,
) -> String {
    match (principal, address) {
        (Some(principal), _) => format!("principal:{}", principal.id()),
        (None, Some(address)) => {
            let client = crate::security::client_of(address);
            format!("anonymous:{transport:?}:{client}")
        }
        (None, None) => format!("anonymous:{transport:?}"),
    }
}

/// A new task id: 144 random bits, base64url (24 characters).
pub(crate) fn new_id() -> String {
    use base64::Engine as _;
    let mut bytes = [0_u8; 18];
    getrandom::fill(&mut bytes).expect("the operating system's random source is available");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Whether `id` could be one of ours: bounded and printable, so that an
/// attacker's id is rejected before any store sees it.
pub(crate) fn plausible_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.~".contains(&b))
}

/// Milliseconds since the Unix epoch.
pub(crate) fn millis(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A `failed` outcome carrying an internal error with `message`.
pub(crate) fn failure(message: &str) -> TaskOutcome {
    error_outcome(&ErrorObject::new(
        error_code::INTERNAL_ERROR,
        format!("Internal error: {message}"),
    ))
}

/// A `failed` outcome carrying `error`.
pub(crate) fn error_outcome(error: &ErrorObject) -> TaskOutcome {
    let json = serde_json::value::to_raw_value(error).expect("error objects serialize");
    TaskOutcome::Failed(json)
}

/// The error a store's refusal becomes for the client.
pub(crate) fn store_error(error: &StoreError) -> ErrorObject {
    let code = match error {
        StoreError::Quota(_) => error_code::RATE_LIMITED,
        StoreError::Full(_) | StoreError::Unavailable(_) => error_code::SERVER_BUSY,
        StoreError::LeaseLost => error_code::INTERNAL_ERROR,
    };
    ErrorObject::new(code, error.to_string())
}

/// The error an unknown task id (or another caller's) gets.
pub(crate) fn not_found() -> ErrorObject {
    ErrorObject::invalid_params("Failed to retrieve task: Task not found")
}

#[cfg(test)]
mod tests;
