//! The interface between the runtime and wherever tasks are kept.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde_json::{Map, Value};

use super::record::{Signals, TaskRecord, TaskUpdate};

/// The future a [`TaskStore`] method returns.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Where tasks are kept: in this process's memory by default
/// ([`InMemoryTaskStore`](super::InMemoryTaskStore)), or a backend that
/// several instances share.
///
/// The runtime calls it from three sides: the request that creates a task
/// (`create`), the client's `tasks/get`, `tasks/update` and `tasks/cancel`
/// (`get`, `respond`, `cancel`, with the caller's owner key: a task of
/// another owner must look exactly like an unknown one), and the worker
/// running the task (`update`, `signals`, under its [`Lease`](super::Lease)). Times are
/// passed in, in milliseconds since the Unix epoch, so that every instance
/// judges expiry by the same rules.
///
/// A store must:
/// - keep a task until `created_at_ms + ttl_ms` and may drop it after;
/// - derive the status from the record ([`TaskRecord::derive_status`])
///   after every change;
/// - refuse with [`StoreError::Full`] or [`StoreError::Quota`] rather than
///   grow without bound;
/// - answer `get` for a task whose lease ran out before it ended as
///   `failed` (an instance died with it), never `working` forever;
/// - make a created task visible to `get` on every instance before
///   `create` returns (the spec's durable creation).
pub trait TaskStore: Send + Sync + fmt::Debug + 'static {
    /// Keeps a new task.
    fn create(&self, task: TaskRecord) -> StoreFuture<'_, ()>;

    /// The task `id` of `owner`, if it exists and has not expired.
    fn get<'a>(
        &'a self,
        id: &'a str,
        owner: &'a str,
        now_ms: u64,
    ) -> StoreFuture<'a, Option<TaskRecord>>;

    /// Applies the worker's write ([`TaskRecord::apply`]) if `worker` holds
    /// the task's [`Lease`](super::Lease) (a write carrying a lease renews it); the record as it is now. [`StoreError::LeaseLost`]
    /// when the task is gone, ended or run by another worker: the worker
    /// then stops.
    fn update<'a>(
        &'a self,
        id: &'a str,
        worker: &'a str,
        update: TaskUpdate,
        now_ms: u64,
    ) -> StoreFuture<'a, TaskRecord>;

    /// Delivers a client's answers ([`TaskRecord::deliver`]); the record as
    /// it is now, or `None` for an unknown task (or another owner's).
    fn respond<'a>(
        &'a self,
        id: &'a str,
        owner: &'a str,
        responses: Map<String, Value>,
        now_ms: u64,
    ) -> StoreFuture<'a, Option<TaskRecord>>;

    /// Asks the task's worker to cancel it (nothing changes on a task that
    /// has ended); the record as it is now, or `None` for an unknown task.
    fn cancel<'a>(
        &'a self,
        id: &'a str,
        owner: &'a str,
        now_ms: u64,
    ) -> StoreFuture<'a, Option<TaskRecord>>;

    /// For the worker holding the task's lease: takes the answers and cancellation
    /// sent since it last looked, waiting up to `wait` for some to arrive.
    /// [`StoreError::LeaseLost`] when the task is gone or not this
    /// worker's.
    fn signals<'a>(
        &'a self,
        id: &'a str,
        worker: &'a str,
        wait: Duration,
    ) -> StoreFuture<'a, Signals>;
}

/// Why a [`TaskStore`] refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreError {
    /// The store holds as many tasks, or bytes, as it may.
    Full(String),
    /// The owner has as many live tasks as it may.
    Quota(String),
    /// The task is gone, has ended, or another worker holds it.
    LeaseLost,
    /// The backend could not be reached or failed; the operation may work
    /// if tried again.
    Unavailable(String),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Full(why) => write!(f, "the task store is full: {why}"),
            StoreError::Quota(why) => write!(f, "too many tasks: {why}"),
            StoreError::LeaseLost => f.write_str("the task is no longer this worker's"),
            StoreError::Unavailable(why) => write!(f, "the task store is unavailable: {why}"),
        }
    }
}

impl std::error::Error for StoreError {}
