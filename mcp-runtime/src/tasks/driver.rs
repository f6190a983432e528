//! A task's driver, on a task worker: runs the rest of the tool's stack
//! (its handler) with a live input, creates the task in the store when it
//! is due (unless the tool answered within `answer_within_ms`), writes its
//! progress, asks and end, renews its lease, and stops it when cancelled.

use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Map;
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{StoreError, TaskHost, TaskOutcome, TaskProgress, TaskRecord, TaskUpdate};
use crate::context::{Cancellation, Context, MethodLabel, Outbox, Scope, Sink};
use crate::middleware::{BoxError, Extensions, Invocation, Item, Next, Output, Runner};
use crate::mrtr::{Input, Stop};
use crate::protocol::finite::Finite;
use crate::protocol::method::Method;
use crate::protocol::{CallToolResult, ErrorObject, RequestId, RequestMeta, error_code};
use crate::source::RequestSource;
use crate::state::App;
use bytes::Bytes;

/// How long a worker waits for signals before looking again (it also
/// wakes for the handler, renewals and the deadline).
const SIGNAL_WAIT: Duration = Duration::from_secs(5);

/// The status message of a task cancelled because its handle never
/// reached the client.
const ABANDONED: &str =
    "Cancelled: the request that created the task failed before the client learned its id";

/// How one tool runs as a task: what `#[tool(task(...))]` declared.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TaskPlan {
    /// A client that did not declare the extension gets `-32021`.
    pub(crate) required: bool,
    pub(crate) answer_within_ms: u64,
    pub(crate) ttl_ms: Option<u64>,
    pub(crate) poll_interval_ms: Option<u64>,
    /// How many asks the tool declares (settled before the task).
    pub(crate) asks: usize,
}

/// What the request hands the task worker: everything the handler's
/// invocation needs, owned and `Send`.
pub(super) struct Job {
    pub(super) runtime: Arc<TaskHost>,
    /// The rest of the tool's stack: its handler, under its `timeout_ms`.
    pub(super) next: Next<Invocation>,
    pub(super) call: Call,
    /// The declared asks' answers, from the rounds before.
    pub(super) recorded: Map<String, serde_json::Value>,
    pub(super) record: TaskRecord,
    pub(super) answer_within: Duration,
    pub(super) created: oneshot::Sender<Result<Created, ErrorObject>>,
    /// Cancelled when no clone of the task's handle reached the answer
    /// (a layer above the engine panicked or failed): the task then stops.
    pub(super) abandoned: CancellationToken,
}

/// What a task's driver tells the request that started it.
pub(super) enum Created {
    /// The tool finished in time: its result, as for a synchronous call.
    Direct(CallToolResult),
    /// The task, durably created.
    Task(Box<TaskRecord>),
}

/// A new task of the tool `plan` describes for the request's caller,
/// leased to this process.
pub(super) fn new_record(
    runtime: &TaskHost,
    plan: &TaskPlan,
    source: &RequestSource,
) -> TaskRecord {
    let options = &runtime.options;
    let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let ttl = (plan.ttl_ms)
        .unwrap_or(millis(options.ttl))
        .min(millis(options.max_ttl));
    let poll = plan
        .poll_interval_ms
        .unwrap_or(millis(options.poll_interval));
    let now = runtime.now();
    let mut record = TaskRecord::new(
        super::new_id(),
        super::owner(source),
        now,
        ttl.max(1),
        poll.max(1),
    );
    record.lease = Some(runtime.lease(now));
    record
}

/// A task's sink: progress becomes the status; notifications (log
/// messages), which tasks do not carry, are dropped.
struct TaskSink {
    changed: Arc<Notify>,
    reported: Mutex<Reported>,
}

#[derive(Debug, Default)]
struct Reported {
    message: Option<String>,
    progress: Option<TaskProgress>,
}

impl Sink for TaskSink {
    fn send(&self, _frame: Bytes) {}

    fn is_task(&self) -> bool {
        true
    }

    fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let message = message.map_or_else(|| describe(progress, total), str::to_owned);
        let mut reported = self
            .reported
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        reported.message = Some(message);
        reported.progress = Some(TaskProgress { progress, total });
        self.changed.notify_one();
    }
}

/// A status message for a progress report without one: `3 of 10 (30%)`.
fn describe(progress: f64, total: Option<f64>) -> String {
    match total {
        Some(total) if total > 0.0 => {
            let percent = (progress / total * 100.0).clamp(0.0, 100.0).round();
            format!("{progress} of {total} ({percent}%)")
        }
        _ => format!("{progress}"),
    }
}

impl TaskSink {
    fn take(&self) -> Reported {
        std::mem::take(
            &mut *self
                .reported
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

/// One running task, on its worker.
struct Driver {
    runtime: Arc<TaskHost>,
    record: TaskRecord,
    input: Input,
    sink: Arc<TaskSink>,
    changed: Arc<Notify>,
    cancel: CancellationToken,
    /// See [`Job::abandoned`].
    abandoned: CancellationToken,
    app: App,
    /// What could not be written yet (the store was unavailable).
    unsent: TaskUpdate,
}

/// How a running handler ended.
type Ran = Result<CallToolResult, ErrorObject>;

/// Runs one task: the handler (the rest of the tool's stack), and
/// everything around it.
pub(super) async fn drive(job: Job) {
    let Job {
        runtime,
        next,
        call,
        recorded,
        record,
        answer_within,
        created,
        abandoned,
    } = job;
    let Call {
        item,
        arguments,
        run,
        request_id,
        meta,
        source,
        app,
        extensions,
    } = call;
    let _running = app.metrics().task();
    let changed = Arc::new(Notify::new());
    let sink = Arc::new(TaskSink {
        changed: changed.clone(),
        reported: Mutex::default(),
    });
    let input = Input::live(meta.client_capabilities.clone(), recorded, changed.clone());
    let cancel = CancellationToken::new();
    let scope = Scope {
        request_id,
        method: MethodLabel::Core(Method::ToolsCall),
        meta,
        outbox: Outbox::new(sink.clone()),
        cancellation: Cancellation::of(cancel.clone()),
        app: app.clone(),
        source,
        extensions,
    };
    let context = Context::new(scope, input.clone());
    let invocation = Call::invocation(item, arguments, run, context);
    let running = pin!(ran(input.clone(), next.run(invocation)));
    let mut driver = Driver {
        runtime,
        record,
        input,
        sink,
        changed,
        cancel,
        abandoned,
        app,
        unsent: TaskUpdate::default(),
    };
    // Dropping the driver's future (the worker stopped) cancels the token.
    let _cancel_on_drop = driver.cancel.clone().drop_guard();
    driver.run(running, answer_within, created).await;
}

/// What the rest of the stack answered, as the task's end sees it.
async fn ran(input: Input, answer: impl Future<Output = Result<Output, BoxError>>) -> Ran {
    match answer.await {
        Ok(Output::Tool(result)) => Ok(result),
        // A live input waits for answers: only a stopped one ends here.
        Ok(Output::InputRequired) => Err(input
            .stopped()
            .map_or_else(ErrorObject::internal_error, stop_error)),
        Ok(_) => {
            tracing::error!("a layer answered a task's tool with another kind's output");
            Err(ErrorObject::internal_error())
        }
        Err(error) => Err(crate::middleware::error_object(error, "tool", "task")),
    }
}

impl Driver {
    async fn run(
        &mut self,
        mut running: std::pin::Pin<&mut impl Future<Output = Ran>>,
        answer_within: Duration,
        created: oneshot::Sender<Result<Created, ErrorObject>>,
    ) {
        // Without `answer_within_ms`, every call is a task, however quick:
        // the handler is not polled before the task exists.
        let early = match answer_within.is_zero() {
            true => None,
            false => self.until_due(running.as_mut(), answer_within).await,
        };
        if let Some(output) = early {
            let _ = created.send(output.map(Created::Direct));
            return;
        }
        if !self.materialize(created).await {
            return;
        }
        let outcome = self.supervise(running).await;
        self.cancel.cancel();
        if let Some(outcome) = outcome {
            self.end(outcome).await;
        }
    }

    /// Runs the handler until it finishes (its output), or until the task
    /// is due: `answer_within` has passed, or it needs the client.
    async fn until_due(
        &mut self,
        mut running: std::pin::Pin<&mut impl Future<Output = Ran>>,
        answer_within: Duration,
    ) -> Option<Ran> {
        let due = Instant::now() + answer_within;
        loop {
            tokio::select! {
                biased;
                output = running.as_mut() => return Some(output),
                () = self.changed.notified() => {
                    if let Some(stop) = self.input.stopped() {
                        return Some(Err(stop_error(stop)));
                    }
                    if self.input.has_pending() {
                        return None;
                    }
                }
                () = tokio::time::sleep_until(due) => return None,
            }
        }
    }

    /// Creates the task in the store and sends its handle; `false` when the
    /// task ends here (the store refused, or nobody waits for the handle).
    async fn materialize(
        &mut self,
        created: oneshot::Sender<Result<Created, ErrorObject>>,
    ) -> bool {
        let now = self.runtime.now();
        let update = self.pending_update();
        let lease = self.record.lease.clone();
        self.record.apply(update, now);
        self.record.lease = lease;
        if let Err(error) = self.runtime.store().create(self.record.clone()).await {
            let _ = created.send(Err(super::store_error(&error)));
            return false;
        }
        if created
            .send(Ok(Created::Task(Box::new(self.record.clone()))))
            .is_err()
        {
            // The request was dropped before the client learned the id:
            // nobody can poll this task, so its work stops.
            tracing::debug!(task = %self.record.id, "task created for a request that went away; cancelled");
            self.end(TaskOutcome::Cancelled).await;
            return false;
        }
        true
    }
}

/// The JSON-RPC error a stopped handler's task fails with.
fn stop_error(stop: Stop) -> ErrorObject {
    match stop {
        Stop::Invalid(problem) => {
            ErrorObject::invalid_params(format!("Invalid input response: {problem}"))
        }
        Stop::Missing(required) => ErrorObject::missing_capability(required),
        Stop::Misused(problem) => ErrorObject::new(
            error_code::INTERNAL_ERROR,
            format!("Internal error: {problem}"),
        ),
        Stop::Pending(_) | Stop::Ready => ErrorObject::internal_error(),
    }
}

impl Driver {
    /// Runs the created task until it ends: `None` when there is nothing
    /// left to write (the task is gone, or another worker has it).
    async fn supervise(
        &mut self,
        mut running: std::pin::Pin<&mut impl Future<Output = Ran>>,
    ) -> Option<TaskOutcome> {
        let store = self.runtime.options.store.clone();
        let (id, worker) = (self.record.id.clone(), self.runtime.worker.clone());
        let renew_every = self.runtime.options.lease / 3;
        let expires = Instant::now()
            + Duration::from_millis(
                self.record
                    .expires_at_ms()
                    .saturating_sub(self.runtime.now()),
            );
        let mut renewal = tokio::time::interval_at(Instant::now() + renew_every, renew_every);
        let mut signals = store.signals(&id, &worker, SIGNAL_WAIT);
        loop {
            tokio::select! {
                biased;
                output = running.as_mut() => return Some(outcome(output)),
                () = self.abandoned.cancelled() => {
                    tracing::warn!(task = %id, "a layer dropped the handle of a task it created (it panicked or failed after the Tasks engine answered): the task is cancelled, as its client never learned its id");
                    return Some(TaskOutcome::Cancelled);
                }
                () = self.changed.notified() => {
                    if let Some(stop) = self.input.stopped() {
                        return Some(super::error_outcome(&stop_error(stop)));
                    }
                    self.publish().await.ok()?;
                }
                received = &mut signals => {
                    match received {
                        Ok(received) if received.cancel => return Some(TaskOutcome::Cancelled),
                        Ok(received) => {
                            let answered = !received.responses.is_empty();
                            self.input.deliver(received.responses);
                            if answered {
                                // The store moved the task on when the answers
                                // came; say so, from here, in order.
                                self.publish_announcing().await.ok()?;
                            }
                        }
                        Err(StoreError::LeaseLost) => return None,
                        Err(error) => {
                            tracing::warn!(%error, task = %id, "task signals unavailable; retrying");
                            tokio::time::sleep(Duration::from_secs(1)).await;
                        }
                    }
                    signals = store.signals(&id, &worker, SIGNAL_WAIT);
                }
                _ = renewal.tick() => self.publish().await.ok()?,
                () = tokio::time::sleep_until(expires) => return None,
            }
        }
    }

    /// What the handler reported since the last write, with what could not
    /// be written before.
    fn pending_update(&mut self) -> TaskUpdate {
        let mut update = std::mem::take(&mut self.unsent);
        let reported = self.sink.take();
        if reported.message.is_some() {
            update.status_message = reported.message;
        }
        if reported.progress.is_some() {
            update.progress = reported.progress;
        }
        update.new_input_requests.extend(self.input.take_pending());
        update
    }

    /// Writes what changed (and renews the lease); announces the new
    /// state when it is observable. `Err` when the task is no longer this
    /// worker's.
    async fn publish(&mut self) -> Result<(), StoreError> {
        self.write(false).await
    }

    /// [`publish`](Self::publish), announcing the state whatever changed
    /// (a client's answers changed it in the store).
    async fn publish_announcing(&mut self) -> Result<(), StoreError> {
        self.write(true).await
    }

    async fn write(&mut self, announce: bool) -> Result<(), StoreError> {
        let mut update = self.pending_update();
        let now = self.runtime.now();
        update.lease = Some(self.runtime.lease(now));
        let renewal_only = update.is_renewal_only() && !announce;
        let written =
            self.runtime
                .store()
                .update(&self.record.id, &self.runtime.worker, update.clone(), now);
        match written.await {
            Ok(record) => {
                if !renewal_only {
                    super::announce(self.app.changes(), &record);
                }
                self.record = record;
                Ok(())
            }
            Err(StoreError::LeaseLost) => Err(StoreError::LeaseLost),
            Err(error) => {
                tracing::warn!(%error, task = %self.record.id, "task state not written; will retry");
                update.lease = None;
                self.unsent = update;
                Ok(())
            }
        }
    }

    /// Writes the task's end, retrying while the store is unavailable
    /// (within the task's lifetime).
    async fn end(&mut self, outcome: TaskOutcome) {
        let mut update = self.pending_update();
        if let TaskOutcome::Cancelled = outcome {
            update.status_message = Some(match self.abandoned.is_cancelled() {
                true => ABANDONED.into(),
                false => "Cancelled by the client".into(),
            });
        }
        if let TaskOutcome::Failed(error) = &outcome {
            update.status_message = Some(failure_message(error.get()));
        }
        update.outcome = Some(outcome);
        for attempt in 0..5_u32 {
            let now = self.runtime.now();
            let written = self.runtime.store().update(
                &self.record.id,
                &self.runtime.worker,
                update.clone(),
                now,
            );
            match written.await {
                Ok(record) => {
                    super::announce(self.app.changes(), &record);
                    return;
                }
                Err(StoreError::LeaseLost) => return,
                Err(error) => {
                    tracing::warn!(%error, attempt, task = %self.record.id, "task end not written; retrying");
                    tokio::time::sleep(Duration::from_millis(200 << attempt)).await;
                }
            }
        }
        tracing::error!(task = %self.record.id, "the task's end could not be written; its lease will expire and it will be reported failed");
    }
}

/// The task's end, from the handler's output.
fn outcome(output: Ran) -> TaskOutcome {
    let result = match output {
        Ok(result) => result,
        Err(error) => return super::error_outcome(&error),
    };
    match serde_json::value::to_raw_value(&Finite(&result.wire(None))) {
        Ok(json) => TaskOutcome::Completed(json),
        Err(error) => {
            tracing::error!(%error, "a task's result failed to serialize");
            super::error_outcome(&ErrorObject::internal_error())
        }
    }
}

/// The status message of a failed task: its error's message.
fn failure_message(error: &str) -> String {
    serde_json::from_str::<ErrorObject>(error)
        .map(|error| error.message.into_owned())
        .unwrap_or_else(|_| "The task failed".into())
}

/// An invocation's parts a task worker takes along (owned and `Send`),
/// to run it again with the task's own context.
pub(super) struct Call {
    pub(super) item: Arc<Item>,
    pub(super) arguments: Arc<str>,
    pub(super) run: Runner,
    pub(super) request_id: RequestId,
    pub(super) meta: Arc<RequestMeta>,
    pub(super) source: RequestSource,
    pub(super) app: App,
    pub(super) extensions: Extensions,
}

impl Call {
    pub(super) fn of(call: Invocation) -> Call {
        let scope = call.context.scope();
        Call {
            request_id: scope.request_id.clone(),
            meta: scope.meta.clone(),
            source: scope.source.clone(),
            app: scope.app.clone(),
            extensions: scope.extensions.clone(),
            item: call.item,
            arguments: call.arguments,
            run: call.run,
        }
    }

    /// The invocation again, in the task's `context`.
    pub(super) fn invocation(
        item: Arc<Item>,
        arguments: Arc<str>,
        run: Runner,
        context: Context,
    ) -> Invocation {
        Invocation {
            item,
            uri: None,
            arguments,
            context,
            run,
        }
    }
}
