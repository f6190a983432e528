//! Middleware on an MCP server: tower layers around tools, a group and an
//! extension method, and a server-wide layer that counts every call in
//! the application's state.
//!
//! - `sleep` runs under `tower::timeout::TimeoutLayer` (300 ms), `nap`
//!   under its own `timeout_ms = 300`: past it the handler is dropped,
//!   and [`Activity`] shows that it stopped.
//! - `render` is limited to one call at a time and the excess waits
//!   (`ConcurrencyLimitLayer`); `render_now` refuses the excess at once
//!   (`LoadShedLayer` over the limit: `-31001`).
//! - `delete` is guarded by an async function that refuses paths under
//!   `/etc` with a tool error, before the handler runs.
//! - The `reports` group's layer stamps each result's `_meta`.
//! - `example.com/stats/get`, an extension method, has a layer that
//!   refuses a `reset` it was not configured for.
//! - Every invocation is counted per item in [`Metrics`], a state the
//!   layer reads from the invocation's context.
//! - A request layer resolves the caller's [`Tenant`] (the `X-Tenant`
//!   header over HTTP, `local` on stdio) and attaches it to the request;
//!   `whoami` reads it as `#[ctx] Extension<Tenant>`. Without the header
//!   the tenant is `public`; a malformed one is refused before any handler
//!   runs.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_runtime::extension::{Extension, ExtensionMethod, MethodResult};
use mcp_runtime::middleware::{self, BoxError, Invocation, Next, Output, Request, Response};
use mcp_runtime::{CallToolResult, ErrorObject, Items, ServerBuilder, State, tool};
use serde::Deserialize;
use tower::limit::ConcurrencyLimitLayer;
use tower::load_shed::LoadShedLayer;
use tower::timeout::TimeoutLayer;

/// The extension this example serves a method of.
pub const STATS_EXTENSION: &str = "example.com/stats";
/// Its method: the per-item counts.
pub const STATS_METHOD: &str = "example.com/stats/get";

/// Calls per item, counted by the server-wide layer: `tool:sleep` and so
/// on, and per outcome.
#[derive(Clone, Debug, Default)]
pub struct Metrics(Arc<Mutex<BTreeMap<String, Counts>>>);

/// One item's counts.
#[derive(Clone, Copy, Debug, Default, serde::Serialize, schemars::JsonSchema, PartialEq, Eq)]
pub struct Counts {
    /// Invocations that answered (a tool error included).
    pub ok: u64,
    /// Invocations answered with a JSON-RPC error (a timeout included).
    pub error: u64,
}

impl Metrics {
    fn record(&self, key: String, ok: bool) {
        let mut counts = self.0.lock().expect("not poisoned");
        let counts = counts.entry(key).or_default();
        if ok {
            counts.ok += 1;
        } else {
            counts.error += 1;
        }
    }

    /// Every item's counts.
    pub fn snapshot(&self) -> BTreeMap<String, Counts> {
        self.0.lock().expect("not poisoned").clone()
    }
}

/// What the slow tools did: ticks of work, and how their runs ended.
#[derive(Clone, Debug, Default)]
pub struct Activity {
    ticks: Arc<AtomicU64>,
    finished: Arc<AtomicU64>,
    dropped: Arc<AtomicU64>,
}

/// [`Activity`] as the `activity` tool reports it.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct ActivityReport {
    /// 10 ms ticks worked, by every slow call so far.
    pub ticks: u64,
    /// Slow calls that ran to the end.
    pub finished: u64,
    /// Slow calls dropped before the end (timed out, or cancelled).
    pub dropped: u64,
}

/// Counts a run as dropped unless it was marked finished.
struct RunGuard {
    activity: Activity,
    finished: bool,
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        let counter = match self.finished {
            true => &self.activity.finished,
            false => &self.activity.dropped,
        };
        counter.fetch_add(1, Ordering::SeqCst);
    }
}

/// Works in 10 ms ticks for `ms`, counting them.
async fn work(activity: &Activity, ms: u64) {
    let mut guard = RunGuard {
        activity: activity.clone(),
        finished: false,
    };
    for _ in 0..ms.div_ceil(10) {
        tokio::time::sleep(Duration::from_millis(10)).await;
        activity.ticks.fetch_add(1, Ordering::SeqCst);
    }
    guard.finished = true;
}

/// Works for `ms` milliseconds; the server gives up after 300.
#[tool(layer = TimeoutLayer::new(Duration::from_millis(300)))]
pub async fn sleep(ms: u64, #[ctx] activity: State<Activity>) -> String {
    work(&activity, ms).await;
    format!("slept {ms} ms")
}

/// Works for `ms` milliseconds, under its own 300 ms limit.
#[tool(timeout_ms = 300)]
pub async fn nap(ms: u64, #[ctx] activity: State<Activity>) -> String {
    work(&activity, ms).await;
    format!("napped {ms} ms")
}

/// What the slow tools have done so far.
#[tool(annotations(read_only))]
pub fn activity(#[ctx] activity: State<Activity>) -> mcp_runtime::Json<ActivityReport> {
    let read = |counter: &AtomicU64| counter.load(Ordering::SeqCst);
    mcp_runtime::Json(ActivityReport {
        ticks: read(&activity.ticks),
        finished: read(&activity.finished),
        dropped: read(&activity.dropped),
    })
}

/// Renders for `ms` milliseconds, one call at a time: the others wait.
#[tool(layer = ConcurrencyLimitLayer::new(1))]
pub async fn render(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("rendered in {ms} ms")
}

/// Renders for `ms` milliseconds, one call at a time: the others are
/// refused at once.
#[tool(layer = (LoadShedLayer::new(), ConcurrencyLimitLayer::new(1)))]
pub async fn render_now(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("rendered in {ms} ms")
}

#[derive(Deserialize)]
struct PathArgument {
    path: String,
}

/// Refuses paths under `/etc` with a tool error, before the handler runs.
/// Arguments it cannot read go on to the handler, which says what is
/// wrong with them.
async fn guard_etc(call: Invocation, next: Next<Invocation>) -> Result<Output, BoxError> {
    if let Ok(PathArgument { path }) = call.arguments_as()
        && (path == "/etc" || path.starts_with("/etc/"))
    {
        let refusal = format!("{path} is under /etc, which this server never deletes");
        return Ok(Output::Tool(CallToolResult::error(refusal)));
    }
    next.run(call).await
}

/// Deletes `path` (pretends to: this is an example).
#[tool(annotations(destructive), layer = middleware::from_fn(guard_etc))]
pub fn delete(path: String) -> String {
    format!("deleted {path}")
}

/// Today's report.
#[tool(group = "reports")]
pub fn daily_report() -> String {
    "all quiet".to_owned()
}

/// This week's report.
#[tool(group = "reports")]
pub fn weekly_report() -> String {
    "all quiet, all week".to_owned()
}

/// Stamps each result of the `reports` group: `_meta` says which layer
/// passed it.
async fn stamp_reports(call: Invocation, next: Next<Invocation>) -> Result<Output, BoxError> {
    let mut output = next.run(call).await?;
    if let Output::Tool(result) = &mut output {
        let meta = result.meta.get_or_insert_with(Default::default);
        meta.insert("example.com/layer".to_owned(), "reports".into());
    }
    Ok(output)
}

/// Counts every invocation in the server's [`Metrics`] state.
async fn count(call: Invocation, next: Next<Invocation>) -> Result<Output, BoxError> {
    let metrics = call.context().state::<Metrics>().cloned();
    let key = format!("{}:{}", call.kind().as_str(), call.name());
    let answer = next.run(call).await;
    if let Some(metrics) = metrics {
        metrics.record(key, answer.is_ok());
    }
    answer
}

/// The caller's tenant, resolved by the [`resolve_tenant`] request layer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tenant(pub String);

/// The header that names the tenant over HTTP.
pub const TENANT_HEADER: &str = "x-tenant";

/// Attaches the caller's [`Tenant`]: over HTTP, the `X-Tenant` header (1
/// to 64 letters, digits, `-` or `_`; a malformed one is refused with
/// `-32602` before any handler runs), `public` without one; on stdio,
/// `local`, the caller being whoever started the server. A server behind
/// authorization would read a claim of the token instead
/// (`request.source().principal()`).
pub async fn resolve_tenant(
    mut request: Request,
    next: Next<Request>,
) -> Result<Response, BoxError> {
    let tenant = match request.http() {
        None => "local".to_owned(),
        Some(http) => {
            let Some(header) = http.headers().get(TENANT_HEADER) else {
                request.extensions_mut().insert(Tenant("public".to_owned()));
                return next.run(request).await;
            };
            let name = header.to_str().unwrap_or_default();
            let valid = (1..=64).contains(&name.len())
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if !valid {
                let message = "Send an X-Tenant header: 1 to 64 letters, digits, '-' or '_'";
                return Err(ErrorObject::invalid_params(message).into());
            }
            name.to_owned()
        }
    };
    request.extensions_mut().insert(Tenant(tenant));
    next.run(request).await
}

/// Which tenant's data this call sees.
#[tool(annotations(read_only))]
pub fn whoami(#[ctx] tenant: middleware::Extension<Tenant>) -> String {
    format!("tenant {}", tenant.0.0)
}

#[derive(Deserialize)]
struct StatsParams {
    #[serde(default)]
    reset: bool,
}

/// Refuses `reset`: this server keeps its counts.
async fn no_reset(call: Invocation, next: Next<Invocation>) -> Result<Output, BoxError> {
    let StatsParams { reset } = call.arguments_as()?;
    if reset {
        return Err(ErrorObject::invalid_params("this server does not reset its counts").into());
    }
    next.run(call).await
}

/// The stats extension: one method answering the counts.
fn stats_extension() -> Extension {
    let get = ExtensionMethod::new(
        STATS_METHOD,
        |_: StatsParams, context: mcp_runtime::Context| {
            let counts = context.state::<Metrics>().map(Metrics::snapshot);
            async move {
                Ok(MethodResult::complete(
                    serde_json::json!({ "counts": counts }),
                ))
            }
        },
    )
    .open_to_all_clients();
    Extension::new(STATS_EXTENSION).method(get)
}

/// The server: the states, the tenant's request layer, the server-wide
/// metrics layer, the group's layer and the extension method's.
pub fn configure(builder: ServerBuilder) -> ServerBuilder {
    builder
        .request_layer(middleware::from_fn(resolve_tenant))
        .state(Metrics::default())
        .state(Activity::default())
        .with(stats_extension())
        .layer(middleware::from_fn(count))
        .layer_on(Items::group("reports"), middleware::from_fn(stamp_reports))
        .layer_on(Items::method(STATS_METHOD), middleware::from_fn(no_reset))
}
