//! `tools/call` of a task tool (the Tasks extension), for a client whose
//! request declares the extension.
//!
//! The request resolves the tool's declared asks first, in ordinary rounds
//! (the spec: a server SHOULD settle multi round-trip exchanges before it
//! answers with a task), by running the handler until they are answered
//! ([`Input::probe`]). Then a task worker runs the handler from the top
//! with those answers; its driver answers the request directly if the tool
//! finishes within `answer_within_ms`, or creates the task in the store
//! (durably, before the handle is sent) and keeps running it: progress
//! becomes the status message, an inline ask puts the task in
//! `input_required` and waits for `tasks/update`, `tasks/cancel` drops the
//! handler and fires its cancellation token.

use std::any::Any;
use std::pin::{Pin, pin};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use serde_json::{Map, Value};
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::Dispatcher;
use super::extensions::require_extension;
use super::guard::Handler;
use super::invoke::{invoke, written};
use super::mrtr::{Retry, Rounds, Target};
use crate::context::{Cancellation, Context, MethodLabel, Outbox, Scope, Sink};
use crate::extension::Extension;
use crate::mrtr::Clock;
use crate::mrtr::{Input, Stop};
use crate::protocol::finite::Finite;
use crate::protocol::method::Method;
use crate::protocol::{CallToolResult, ErrorObject, RequestId, RequestMeta};
use crate::registry::{RegisteredTool, ToolEntry};
use crate::source::RequestSource;
use crate::state::App;
use crate::tasks::wire::{self, Shape};
use crate::tasks::{
    EXTENSION_ID, Runtime, StoreError, TaskOptions, TaskOutcome, TaskProgress, TaskRecord,
    TaskStore, TaskUpdate,
};
use crate::tool::ToolInvocation;

/// How long a worker waits for signals before looking again (it also
/// wakes for the handler, renewals and the deadline).
const SIGNAL_WAIT: Duration = Duration::from_secs(5);

/// The Tasks engine: the functions that run tasks, reached only through
/// this static. What `#[tool(task)]` generates names it (and so does
/// `ServerBuilder::tasks`), so a server without task tools links none of
/// the driver, the store or the extension's methods.
#[doc(hidden)]
pub static TASK_ENGINE: &(dyn Any + Send + Sync) = &Engine {
    call: call_boxed,
    runtime,
    extension,
    followed: followed_boxed,
};

/// What [`TASK_ENGINE`] holds.
struct Engine {
    call: CallFn,
    runtime: RuntimeFn,
    extension: fn(&Arc<Runtime>) -> Extension,
    followed: FollowedFn,
}

/// Makes the tasks' runtime: options, the shared store, the clock.
type RuntimeFn = fn(Option<TaskOptions>, Option<Arc<dyn TaskStore>>, Clock) -> Arc<Runtime>;

/// A task a subscription follows, as it is when the subscription starts.
pub(crate) struct Followed {
    pub(crate) id: String,
    /// Whether it has ended: nothing about it follows.
    pub(crate) ended: bool,
    /// Its `notifications/tasks` params, without `_meta`.
    pub(crate) params: String,
}

type FollowedFn = for<'a> fn(
    &'a Runtime,
    Vec<String>,
    &'a str,
) -> Pin<Box<dyn Future<Output = Vec<Followed>> + Send + 'a>>;

fn followed_boxed<'a>(
    runtime: &'a Runtime,
    ids: Vec<String>,
    owner: &'a str,
) -> Pin<Box<dyn Future<Output = Vec<Followed>> + Send + 'a>> {
    Box::pin(followed(runtime, ids, owner))
}

/// Those of the tasks `ids` that `owner` has, as they are now.
async fn followed(runtime: &Runtime, ids: Vec<String>, owner: &str) -> Vec<Followed> {
    let mut found = Vec::new();
    for id in ids {
        if let Ok(Some(task)) = runtime.store().get(&id, owner, runtime.now()).await {
            found.push(Followed {
                ended: task.status.is_terminal(),
                params: wire::notification_params(&task),
                id,
            });
        }
    }
    found
}

type CallFn = for<'a> fn(
    &'a Dispatcher,
    &'a Arc<Runtime>,
    &'a RegisteredTool,
    &'static ToolEntry,
    &'a str,
    Retry<'a>,
    Scope,
) -> Pin<Box<dyn Future<Output = Result<Bytes, ErrorObject>> + 'a>>;

fn call_boxed<'a>(
    dispatcher: &'a Dispatcher,
    runtime: &'a Arc<Runtime>,
    tool: &'a RegisteredTool,
    entry: &'static ToolEntry,
    arguments: &'a str,
    retry: Retry<'a>,
    scope: Scope,
) -> Pin<Box<dyn Future<Output = Result<Bytes, ErrorObject>> + 'a>> {
    Box::pin(call(
        dispatcher, runtime, tool, entry, arguments, retry, scope,
    ))
}

/// The tasks' runtime: with `options` (the defaults when `None`), their
/// store the `shared` one (the server's shared state) unless the options
/// name one.
fn runtime(
    options: Option<TaskOptions>,
    shared: Option<Arc<dyn TaskStore>>,
    clock: Clock,
) -> Arc<Runtime> {
    let mut options = options.unwrap_or_default();
    if let Some(store) = shared.filter(|_| options.default_store) {
        options = options.shared_store(store);
    }
    Arc::new(Runtime::new(options, clock))
}

fn extension(runtime: &Arc<Runtime>) -> Extension {
    runtime.extension()
}

/// A server's tasks: its runtime, and the engine that drives them.
#[derive(Clone)]
pub(crate) struct Tasks {
    pub(crate) runtime: Arc<Runtime>,
    engine: &'static Engine,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("runtime", &self.runtime)
            .finish_non_exhaustive()
    }
}

impl Tasks {
    /// The tasks of a server whose engine is `engine` (a task tool's, or
    /// [`TASK_ENGINE`]), run with `options` (the defaults when `None`),
    /// kept in `shared` (the server's shared state) unless the options say
    /// where.
    pub(crate) fn new(
        engine: &'static (dyn Any + Send + Sync),
        options: Option<TaskOptions>,
        shared: Option<Arc<dyn TaskStore>>,
        clock: Clock,
    ) -> Option<Tasks> {
        let engine = engine.downcast_ref::<Engine>()?;
        Some(Tasks {
            runtime: (engine.runtime)(options, shared, clock),
            engine,
        })
    }

    /// The extension serving `tasks/get`, `tasks/update`, `tasks/cancel`.
    pub(crate) fn extension(&self) -> Extension {
        (self.engine.extension)(&self.runtime)
    }

    /// Those of the tasks `ids` that `owner` has, as they are now.
    pub(crate) async fn followed(&self, ids: Vec<String>, owner: &str) -> Vec<Followed> {
        (self.engine.followed)(&self.runtime, ids, owner).await
    }
}

/// The runtime to run this call as a task with, if it runs as one:
/// `None` for a client that did not declare the extension (the call runs
/// synchronously), or `-32021` naming the extension for a tool that
/// requires it.
pub(super) fn route<'a>(
    dispatcher: &'a Dispatcher,
    entry: &ToolEntry,
    meta: &RequestMeta,
) -> Result<Option<&'a Tasks>, ErrorObject> {
    let client = &meta.client_capabilities;
    let required = entry.task.is_some_and(|task| task.required);
    match &dispatcher.tasks {
        Some(tasks) if client.supports_extension(EXTENSION_ID) => Ok(Some(tasks)),
        _ if required => require_extension(EXTENSION_ID, client).map(|()| None),
        _ => Ok(None),
    }
}

/// What a task's driver tells the request that started it.
enum Created {
    /// The tool finished in time: its result, as for a synchronous call.
    Direct(CallToolResult),
    /// The task, durably created.
    Task(Box<TaskRecord>),
}

/// What the request hands the task worker: everything the handler's
/// context needs, owned and `Send`.
struct Job {
    runtime: Arc<Runtime>,
    entry: &'static ToolEntry,
    arguments: String,
    /// The declared asks' answers, from the rounds before.
    recorded: Map<String, Value>,
    request_id: RequestId,
    meta: Arc<RequestMeta>,
    source: RequestSource,
    app: App,
    record: TaskRecord,
    answer_within: Duration,
    created: oneshot::Sender<Result<Created, ErrorObject>>,
}

/// Runs the call as a task, through the engine `tasks` holds.
pub(super) fn start<'a>(
    dispatcher: &'a Dispatcher,
    tasks: &'a Tasks,
    tool: &'a RegisteredTool,
    entry: &'static ToolEntry,
    arguments: &'a str,
    retry: Retry<'a>,
    scope: Scope,
) -> Pin<Box<dyn Future<Output = Result<Bytes, ErrorObject>> + 'a>> {
    let runtime = &tasks.runtime;
    (tasks.engine.call)(dispatcher, runtime, tool, entry, arguments, retry, scope)
}

async fn call(
    dispatcher: &Dispatcher,
    runtime: &Arc<Runtime>,
    tool: &RegisteredTool,
    entry: &'static ToolEntry,
    arguments: &str,
    retry: Retry<'_>,
    scope: Scope,
) -> Result<Bytes, ErrorObject> {
    let server_info = dispatcher.server_info.as_deref();
    // A hand-written schema is checked here: the task's worker starts the
    // handler from its entry.
    if let Err(error) = tool.check_input(arguments) {
        let name = entry.name;
        let result = CallToolResult::error(format!("Invalid arguments for tool {name}: {error}"));
        return written(tool, &result, server_info);
    }
    let target = Target {
        method: "tools/call",
        name: entry.name,
        arguments,
    };
    let (rounds, input) =
        match Rounds::start(&dispatcher.sealer, target, retry, &scope, tool.state)?.ready() {
            Ok(ready) => ready,
            Err(claiming) => claiming.await?,
        };
    let (request_id, meta, source) = (
        scope.request_id.clone(),
        scope.meta.clone(),
        scope.source.clone(),
    );
    let app = scope.app.clone();
    let recorded = if entry.asks.is_empty() {
        Map::new()
    } else {
        input.probe(entry.asks.len());
        let context = Context::new(scope, input.clone());
        match invoke(tool, arguments, context, &input).await? {
            Some(result) => return written(tool, &result, server_info),
            None if input.is_ready() => input.carried(),
            None => return rounds.stopped(&input, server_info),
        }
    };
    let (sender, receiver) = oneshot::channel();
    let job = Job {
        record: new_record(runtime, entry, &source),
        runtime: runtime.clone(),
        entry,
        arguments: arguments.to_owned(),
        recorded,
        request_id,
        meta,
        source,
        app,
        answer_within: Duration::from_millis(entry.task.map_or(0, |t| t.answer_within_ms)),
        created: sender,
    };
    runtime
        .spawn(Box::new(move || Box::pin(drive(job))))
        .map_err(|problem| {
            tracing::error!(problem, "a task could not be started");
            ErrorObject::internal_error()
        })?;
    match receiver.await {
        Ok(Ok(Created::Task(record))) => Ok(Bytes::from(wire::to_vec(
            &record,
            Shape::Created,
            server_info,
        ))),
        Ok(Ok(Created::Direct(result))) => written(tool, &result, server_info),
        Ok(Err(error)) => Err(error),
        Err(_) => Err(ErrorObject::internal_error()),
    }
}

/// A new task of `entry` for the request's caller, leased to this process.
fn new_record(runtime: &Runtime, entry: &ToolEntry, source: &RequestSource) -> TaskRecord {
    let options = &runtime.options;
    let (declared_ttl, declared_poll) = entry
        .task
        .map_or((None, None), |task| (task.ttl_ms, task.poll_interval_ms));
    let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let ttl = declared_ttl
        .unwrap_or(millis(options.ttl))
        .min(millis(options.max_ttl));
    let poll = declared_poll.unwrap_or(millis(options.poll_interval));
    let now = runtime.now();
    let mut record = TaskRecord::new(
        crate::tasks::new_id(),
        crate::tasks::owner(source),
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
    runtime: Arc<Runtime>,
    record: TaskRecord,
    input: Input,
    sink: Arc<TaskSink>,
    changed: Arc<Notify>,
    cancel: CancellationToken,
    app: App,
    /// What could not be written yet (the store was unavailable).
    unsent: TaskUpdate,
}

/// How a running handler ended.
type Output = Result<CallToolResult, ErrorObject>;

/// Runs one task: the handler, and everything around it.
async fn drive(job: Job) {
    let Job {
        runtime,
        entry,
        arguments,
        recorded,
        request_id,
        meta,
        source,
        app,
        record,
        answer_within,
        created,
    } = job;
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
    };
    let context = Context::new(scope, input.clone());
    let handler = Handler {
        kind: "tool",
        name: entry.name,
    };
    let invocation = ToolInvocation {
        arguments: &arguments,
        context,
    };
    let future = match handler.start(|| (entry.call)(invocation)) {
        Ok(Ok(future)) => future,
        Ok(Err(error)) => {
            let name = entry.name;
            let result =
                CallToolResult::error(format!("Invalid arguments for tool {name}: {error}"));
            let _ = created.send(Ok(Created::Direct(result)));
            return;
        }
        Err(error) => {
            let _ = created.send(Err(error));
            return;
        }
    };
    let running = pin!(handler.finish(future));
    let mut driver = Driver {
        runtime,
        record,
        input,
        sink,
        changed,
        cancel,
        app,
        unsent: TaskUpdate::default(),
    };
    // Dropping the driver's future (the worker stopped) cancels the token.
    let _cancel_on_drop = driver.cancel.clone().drop_guard();
    driver.run(running, answer_within, created).await;
}

impl Driver {
    async fn run(
        &mut self,
        mut running: std::pin::Pin<&mut impl Future<Output = Output>>,
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
            let answer = match self.input.stopped() {
                Some(stop) => Err(stop_error(stop)),
                None => output.map(Created::Direct),
            };
            let _ = created.send(answer);
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
        mut running: std::pin::Pin<&mut impl Future<Output = Output>>,
        answer_within: Duration,
    ) -> Option<Output> {
        let due = Instant::now() + answer_within;
        loop {
            tokio::select! {
                biased;
                output = running.as_mut() => return Some(output),
                () = self.changed.notified() => {
                    if self.input.is_stopped() {
                        return Some(Err(ErrorObject::internal_error()));
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
            let _ = created.send(Err(crate::tasks::store_error(&error)));
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
        Stop::Misused(problem) => super::mrtr::misused(&problem),
        Stop::Pending(_) | Stop::Ready => ErrorObject::internal_error(),
    }
}

impl Driver {
    /// Runs the created task until it ends: `None` when there is nothing
    /// left to write (the task is gone, or another worker has it).
    async fn supervise(
        &mut self,
        mut running: std::pin::Pin<&mut impl Future<Output = Output>>,
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
                () = self.changed.notified() => {
                    if let Some(stop) = self.input.stopped() {
                        return Some(crate::tasks::error_outcome(&stop_error(stop)));
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
                    crate::tasks::announce(self.app.changes(), &record);
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
            update.status_message = Some("Cancelled by the client".into());
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
                    crate::tasks::announce(self.app.changes(), &record);
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
fn outcome(output: Output) -> TaskOutcome {
    let result = match output {
        Ok(result) => result,
        Err(error) => return crate::tasks::error_outcome(&error),
    };
    match serde_json::value::to_raw_value(&Finite(&result.wire(None))) {
        Ok(json) => TaskOutcome::Completed(json),
        Err(error) => {
            tracing::error!(%error, "a task's result failed to serialize");
            crate::tasks::error_outcome(&ErrorObject::internal_error())
        }
    }
}

/// The status message of a failed task: its error's message.
fn failure_message(error: &str) -> String {
    serde_json::from_str::<ErrorObject>(error)
        .map(|error| error.message.into_owned())
        .unwrap_or_else(|_| "The task failed".into())
}
