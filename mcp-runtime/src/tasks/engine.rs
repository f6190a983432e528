//! The Tasks engine, on the middleware seam: a task tool's innermost item
//! layer (inside the user's layers, around its handler and `timeout_ms`)
//! routes a call from a client that declared the extension into a task,
//! and passes every other call on.
//!
//! The request settles the tool's declared asks first, in ordinary rounds
//! (the spec: a server SHOULD settle multi round-trip exchanges before it
//! answers with a task), by running the rest of the stack until they are
//! answered ([`Input::probe`]). Then a task worker runs the rest of the
//! stack from the top with those answers; its driver answers the request
//! directly if the tool finishes within `answer_within_ms`, or creates the
//! task in the store (durably, before the handle is sent) and keeps
//! running it.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Map;
use serde_json::value::RawValue;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::driver::{Call, Created, Job, TaskPlan, drive, new_record};
use super::wire::{self, Shape};
use super::{EXTENSION_ID, TaskHost, TaskOptions, TaskStore, WORK_TARGET};
use crate::extension::Extension;
use crate::middleware::{BoxError, Invocation, ItemLayer, Next, Output, TaskHandle, from_fn};
use crate::mrtr::Clock;
use crate::protocol::ErrorObject;

/// The Tasks engine's functions, reached only through `TASK_ENGINE`:
/// what `#[tool(task)]` generates puts it in `TASK_ENGINES` (and
/// `ServerBuilder::with(TaskOptions)` names it), so that a server without task tools
/// links none of the driver, the store or the extension's methods.
#[doc(hidden)]
pub struct TaskEngine {
    /// A task tool's layer.
    pub(crate) layer: fn(&Arc<TaskHost>, TaskPlan) -> ItemLayer,
    /// Makes the tasks' runtime: options, the shared store, the clock.
    pub(crate) runtime: RuntimeFn,
    /// The extension serving `tasks/get`, `tasks/update`, `tasks/cancel`.
    pub(crate) extension: fn(&Arc<TaskHost>) -> Extension,
    /// The tasks a subscription follows.
    pub(crate) followed: FollowedFn,
}

/// Makes the tasks' runtime: options, the shared store, the clock.
type RuntimeFn = fn(Option<TaskOptions>, Option<Arc<dyn TaskStore>>, Clock) -> Arc<TaskHost>;

impl std::fmt::Debug for TaskEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskEngine").finish_non_exhaustive()
    }
}

/// The Tasks engine.
#[doc(hidden)]
pub static TASK_ENGINE: &TaskEngine = &TaskEngine {
    layer,
    runtime,
    extension,
    followed: followed_boxed,
};

/// The engine once per `#[tool(task)]` in the final binary: a slice of
/// its own, so that a tool's entry in the registry (below the Tasks
/// extension, which serves methods) need not name it.
#[doc(hidden)]
#[linkme::distributed_slice]
pub static TASK_ENGINES: [&'static TaskEngine];

/// A task a subscription follows, as it is when the subscription starts.
pub(crate) struct Followed {
    pub(crate) id: String,
    /// Whether it has ended: nothing about it follows.
    pub(crate) ended: bool,
    /// Its `notifications/tasks` params, without `_meta`.
    pub(crate) params: String,
}

pub(crate) type FollowedFn = for<'a> fn(
    &'a TaskHost,
    Vec<String>,
    &'a str,
)
    -> Pin<Box<dyn Future<Output = Vec<Followed>> + Send + 'a>>;

fn followed_boxed<'a>(
    runtime: &'a TaskHost,
    ids: Vec<String>,
    owner: &'a str,
) -> Pin<Box<dyn Future<Output = Vec<Followed>> + Send + 'a>> {
    Box::pin(followed(runtime, ids, owner))
}

/// Those of the tasks `ids` that `owner` has, as they are now.
async fn followed(runtime: &TaskHost, ids: Vec<String>, owner: &str) -> Vec<Followed> {
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

/// The tasks' runtime: with `options` (the defaults when `None`), their
/// store the `shared` one (the server's shared state) unless the options
/// name one.
fn runtime(
    options: Option<TaskOptions>,
    shared: Option<Arc<dyn TaskStore>>,
    clock: Clock,
) -> Arc<TaskHost> {
    let mut options = options.unwrap_or_default();
    if let Some(store) = shared.filter(|_| options.default_store) {
        options = options.shared_store(store);
    }
    Arc::new(TaskHost::new(options, clock))
}

fn extension(runtime: &Arc<TaskHost>) -> Extension {
    runtime.extension()
}

/// A task tool's layer, written with [`from_fn`] as a user's would be.
fn layer(runtime: &Arc<TaskHost>, plan: TaskPlan) -> ItemLayer {
    let runtime = runtime.clone();
    ItemLayer::new(from_fn(move |call: Invocation, next: Next<Invocation>| {
        route(runtime.clone(), plan, call, next)
    }))
}

/// Runs the call as a task for a client that declared the extension;
/// passes it on otherwise (`-32021` for a tool that requires tasks).
async fn route(
    runtime: Arc<TaskHost>,
    plan: TaskPlan,
    call: Invocation,
    next: Next<Invocation>,
) -> Result<Output, BoxError> {
    let client = &call.context().meta().client_capabilities;
    if !client.supports_extension(EXTENSION_ID) {
        if plan.required {
            let required = serde_json::json!({ "extensions": { EXTENSION_ID: {} } });
            return Err(ErrorObject::missing_capability(required).into());
        }
        return next.run(call).await;
    }
    let input = call.context().input().clone();
    let recorded = if plan.asks == 0 {
        Map::new()
    } else {
        input.probe(plan.asks);
        match next.clone().run(call.clone()).await? {
            Output::InputRequired if input.is_ready() => input.carried(),
            // An ask is still open (the request answers `input_required`),
            // or the tool finished without the task.
            output => return Ok(output),
        }
    };
    start(&runtime, plan, call, next, recorded).await
}

/// The span of a task's work: it outlives the request that created it, so
/// it starts a trace of its own, linked to the request's span (`follows_from`,
/// which `mcp-runtime-otel` exports as a span link). Named `task {tool}`, kind
/// INTERNAL; the handler's own spans are its children.
fn work_span(job: &Job) -> tracing::Span {
    let tool = &*job.call.item.name;
    let span = tracing::info_span!(
        target: WORK_TARGET,
        parent: None,
        "mcp.task",
        otel.name = format!("task {tool}"),
        otel.kind = "internal",
        mcp.task.id = job.record.id.as_str(),
        gen_ai.tool.name = tool,
    );
    span.follows_from(tracing::Span::current());
    span
}

/// Starts the task's worker, and answers with the task (or the tool's
/// result, if it finished within `answer_within_ms`).
async fn start(
    runtime: &Arc<TaskHost>,
    plan: TaskPlan,
    call: Invocation,
    next: Next<Invocation>,
    recorded: Map<String, serde_json::Value>,
) -> Result<Output, BoxError> {
    let call = Call::of(call);
    let (sender, receiver) = oneshot::channel();
    // Cancelled when the task's handle never reaches the client.
    let abandoned = CancellationToken::new();
    let job = Job {
        abandoned: abandoned.clone(),
        record: new_record(runtime, &plan, &call.source),
        runtime: runtime.clone(),
        next,
        call,
        recorded,
        answer_within: Duration::from_millis(plan.answer_within_ms),
        created: sender,
    };
    let span = work_span(&job);
    runtime
        .spawn(Box::new(move || Box::pin(drive(job).instrument(span))))
        .map_err(|problem| {
            tracing::error!(problem, "a task could not be started");
            ErrorObject::internal_error()
        })?;
    match receiver.await {
        Ok(Ok(Created::Task(record))) => {
            let id = record.id.clone();
            let written = move |server_info: Option<&RawValue>| {
                wire::to_vec(&record, Shape::Created, server_info)
            };
            Ok(Output::Task(TaskHandle::new(id, written, abandoned)))
        }
        Ok(Ok(Created::Direct(result))) => Ok(Output::Tool(result)),
        Ok(Err(error)) => Err(error.into()),
        Err(_) => Err(ErrorObject::internal_error().into()),
    }
}
