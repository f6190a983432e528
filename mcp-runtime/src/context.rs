//! What a handler can see and do beyond its arguments: the request's
//! metadata, progress reporting, per-request logging and cancellation.
//!
//! Handlers opt in by marking a parameter `#[ctx]`; its type must implement
//! [`FromContext`]. Nothing is recognised by the name of a type.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use serde::Serialize;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::changes::Changes;
use crate::mrtr::Input;
use crate::protocol::jsonrpc::notification_frame;
use crate::protocol::method::Method;
use crate::protocol::{
    ClientCapabilities, Implementation, LogLevel, ProgressToken, RequestId, RequestMeta,
};
use crate::request_extensions::Extensions;
use crate::security::Principal;
use crate::source::RequestSource;
use crate::state::{App, Requirement, State};

/// Where a request's notifications go. The transport decides: its own
/// queue for one response (HTTP), a shared writer (stdio), a collector (in
/// process).
pub(crate) trait Sink: Send + Sync {
    /// Sends one complete JSON-RPC frame. A sink whose client is gone drops
    /// it: the request is being cancelled, and nobody is left to tell.
    fn send(&self, frame: Bytes);

    /// Whether this is a task's sink: progress becomes the task's status
    /// (whatever the request's `progressToken`), and notifications, which
    /// tasks do not carry, are dropped.
    fn is_task(&self) -> bool {
        false
    }

    /// A task's progress report (only called on a task's sink).
    fn progress(&self, _progress: f64, _total: Option<f64>, _message: Option<&str>) {}
}

impl Sink for UnboundedSender<Bytes> {
    fn send(&self, frame: Bytes) {
        let _ = UnboundedSender::send(self, frame);
    }
}

/// The sink one request's notifications go to. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Outbox(Arc<dyn Sink>);

impl fmt::Debug for Outbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Outbox")
    }
}

impl Outbox {
    pub(crate) fn new(sink: Arc<dyn Sink>) -> Self {
        Outbox(sink)
    }

    /// An outbox into a channel.
    pub(crate) fn channel(sender: UnboundedSender<Bytes>) -> Self {
        Outbox(Arc::new(sender))
    }

    pub(crate) fn send(&self, frame: Vec<u8>) {
        self.0.send(Bytes::from(frame));
    }

    fn is_task(&self) -> bool {
        self.0.is_task()
    }
}

/// The method a request is for, as its handler sees it: one pointer wide
/// (scopes move through every request's future).
#[derive(Clone, Debug)]
pub(crate) enum MethodLabel {
    Core(Method),
    /// An extension's method, named by the server's build.
    Extension(Arc<String>),
}

impl MethodLabel {
    fn name(&self) -> &str {
        match self {
            MethodLabel::Core(method) => method.name(),
            MethodLabel::Extension(name) => name,
        }
    }
}

/// A request's cancellation token, made when it is first asked for: most
/// handlers never ask, and making one (and cloning it: each clone takes its
/// lock) was a measurable part of a small call. Cancelling one not asked
/// for yet makes it cancelled, so that one asked for afterwards (by work
/// the handler handed elsewhere) is.
#[derive(Clone, Debug, Default)]
pub(crate) struct Cancellation(Arc<OnceLock<CancellationToken>>);

impl Cancellation {
    /// Cancellation through `token` (a task's, which `tasks/cancel` cancels).
    pub(crate) fn of(token: CancellationToken) -> Cancellation {
        Cancellation(Arc::new(OnceLock::from(token)))
    }

    pub(crate) fn token(&self) -> &CancellationToken {
        self.0.get_or_init(CancellationToken::new)
    }

    fn is_cancelled(&self) -> bool {
        self.0.get().is_some_and(CancellationToken::is_cancelled)
    }

    pub(crate) fn cancel(&self) {
        self.token().cancel();
    }

    /// Cancels when dropped, unless disarmed first.
    pub(crate) fn drop_guard(self) -> CancelOnDrop {
        CancelOnDrop(Some(self))
    }
}

/// [`Cancellation::drop_guard`].
pub(crate) struct CancelOnDrop(Option<Cancellation>);

impl CancelOnDrop {
    pub(crate) fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(cancellation) = self.0.take() {
            cancellation.cancel();
        }
    }
}

/// Everything about a request a handler can see, except its input.
#[derive(Debug)]
pub(crate) struct Scope {
    pub(crate) request_id: RequestId,
    pub(crate) method: MethodLabel,
    /// Shared: it is large, scopes move through every request's future,
    /// and requests whose `_meta` is the same text share one reading.
    pub(crate) meta: Arc<RequestMeta>,
    pub(crate) outbox: Outbox,
    pub(crate) cancellation: Cancellation,
    /// The server's change announcements and application states.
    pub(crate) app: App,
    pub(crate) source: RequestSource,
    /// What the request layers attached.
    pub(crate) extensions: Extensions,
}

struct Inner {
    scope: Scope,
    input: Input,
    last_progress: Mutex<Option<f64>>,
}

/// The request a handler is serving: its id, `_meta`, and the channels back
/// to the client. Cheap to clone; `Send + Sync`.
#[derive(Clone)]
pub struct Context {
    inner: Arc<Inner>,
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("request_id", &self.inner.scope.request_id)
            .field("method", &self.inner.scope.method)
            .field("meta", &self.inner.scope.meta)
            .finish_non_exhaustive()
    }
}

impl Context {
    pub(crate) fn new(scope: Scope, input: Input) -> Self {
        Context {
            inner: Arc::new(Inner {
                scope,
                input,
                last_progress: Mutex::new(None),
            }),
        }
    }

    /// The request's scope: what a task's worker carries over into the
    /// context it runs the handler with.
    pub(crate) fn scope(&self) -> &Scope {
        &self.inner.scope
    }

    /// Cancels the request's token: its handler was dropped (a layer
    /// timed it out, or refused it).
    pub(crate) fn cancel(&self) {
        self.inner.scope.cancellation.cancel();
    }

    /// The request's input. Not public: only handlers of methods that can
    /// ask (`tools/call`, `resources/read`, `prompts/get`) receive an
    /// [`Input`], as a `#[ctx]` parameter, so no other code can ask.
    pub(crate) fn input(&self) -> &Input {
        &self.inner.input
    }

    /// Where the request came from: the transport, the caller, and what
    /// the transport attached.
    pub fn source(&self) -> &RequestSource {
        &self.inner.scope.source
    }

    /// The authenticated caller (HTTP with authorization; `None` on
    /// stdio, where credentials come from the environment).
    pub fn principal(&self) -> Option<&Principal> {
        self.inner.scope.source.principal()
    }

    /// The handle for announcing changes to subscribed clients (for example
    /// after a tool modified a resource).
    pub fn changes(&self) -> &Changes {
        self.inner.scope.app.changes()
    }

    /// The state of type `T` the server was given with
    /// [`ServerBuilder::state`](crate::ServerBuilder::state) (or by its
    /// start-up hook), if it was. Handlers take one as a `#[ctx]`
    /// parameter, [`State<T>`](crate::State), which the server checks when
    /// it is built; this is for code that has only the context (runtime
    /// catalog items, extension methods, completers, your own
    /// [`FromContext`] types).
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.inner.scope.app.states().get()
    }

    /// The request extension of type `T` a request layer attached
    /// ([`middleware::Extensions`](crate::middleware::Extensions)), if
    /// one did. Handlers take one as a `#[ctx]` parameter,
    /// [`Extension<T>`](crate::middleware::Extension), which is checked
    /// before they run.
    pub fn extension<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.inner.scope.extensions.get()
    }

    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.scope.request_id
    }

    /// The JSON-RPC method being served, e.g. `tools/call`.
    pub fn method(&self) -> &str {
        self.inner.scope.method.name()
    }

    /// The request's `_meta`.
    pub fn meta(&self) -> &RequestMeta {
        &self.inner.scope.meta
    }

    /// The capabilities the client declared on this request.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.inner.scope.meta.client_capabilities
    }

    /// The client's self-reported identity, if it sent one. For display and
    /// logging only: it is not verified.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.inner.scope.meta.client_info.as_deref()
    }

    /// A handle for progress notifications.
    pub fn progress(&self) -> Progress {
        Progress { ctx: self.clone() }
    }

    /// A handle for `notifications/message` under the given logger name.
    pub fn logger(&self, name: impl Into<String>) -> Logger {
        Logger {
            ctx: self.clone(),
            name: Some(name.into()),
        }
    }

    /// Sends `notifications/message` if the client asked for messages at
    /// `level` or above on this request, and always emits a `tracing` event.
    pub fn log(&self, level: LogLevel, data: impl Serialize) {
        self.log_as(None, level, &data);
    }

    fn log_as(&self, logger: Option<&str>, level: LogLevel, data: &dyn erased::Data) {
        let value = data.to_value();
        tracing::event!(
            target: "mcp_runtime::handler",
            tracing::Level::INFO,
            level = %level,
            logger = logger.unwrap_or(""),
            data = %value,
            "handler log"
        );
        let Some(threshold) = self.inner.scope.meta.log_level else {
            return;
        };
        if level < threshold {
            return;
        }
        #[derive(Serialize)]
        struct Params<'a> {
            level: LogLevel,
            #[serde(skip_serializing_if = "Option::is_none")]
            logger: Option<&'a str>,
            data: &'a serde_json::Value,
        }
        let params = Params {
            level,
            logger,
            data: &value,
        };
        self.inner
            .scope
            .outbox
            .send(notification_frame("notifications/message", &params));
    }

    /// The token cancelled when the client cancels the request or goes away.
    ///
    /// The handler's own future is dropped first (it is not polled again),
    /// so the token is for work the handler handed elsewhere: a spawned
    /// task, a thread, a child process that should stop with the request.
    pub fn cancellation(&self) -> &CancellationToken {
        self.inner.scope.cancellation.token()
    }

    /// Whether the request has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.scope.cancellation.is_cancelled()
    }

    /// Completes when the request is cancelled (see
    /// [`cancellation`](Self::cancellation): awaited by work the handler
    /// spawned, since the handler's own future is dropped first).
    pub async fn cancelled(&self) {
        self.inner.scope.cancellation.token().cancelled().await;
    }
}

/// `Serialize` values made object-safe, so `log_as` is not generic.
mod erased {
    pub(super) trait Data {
        fn to_value(&self) -> serde_json::Value;
    }
    impl<T: serde::Serialize + ?Sized> Data for T {
        fn to_value(&self) -> serde_json::Value {
            crate::protocol::finite::to_value(self)
                .unwrap_or_else(|e| serde_json::Value::String(format!("<unserializable: {e}>")))
        }
    }
}

/// Reports progress on the current request.
///
/// Notifications are sent only when the request carried a `progressToken`;
/// otherwise reporting is a no-op. As the spec requires, each reported value
/// must exceed the previous one: values that do not are dropped.
#[derive(Clone, Debug)]
pub struct Progress {
    ctx: Context,
}

impl Progress {
    /// Whether anyone reads progress: the request carried a
    /// `progressToken`, or it runs as a task (whose status message shows
    /// the last report).
    pub fn is_requested(&self) -> bool {
        self.ctx.inner.scope.meta.progress_token.is_some() || self.ctx.inner.scope.outbox.is_task()
    }

    /// Reports `progress` with no known total.
    pub fn report(&self, progress: f64) {
        self.send(progress, None, None);
    }

    /// Reports `progress` out of `total`.
    pub fn report_total(&self, progress: f64, total: f64) {
        self.send(progress, Some(total), None);
    }

    /// Reports `progress` (out of `total`, if known) with a human-readable message.
    pub fn report_message(&self, progress: f64, total: Option<f64>, message: &str) {
        self.send(progress, total, Some(message));
    }

    fn send(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let outbox = &self.ctx.inner.scope.outbox;
        let token = self.ctx.inner.scope.meta.progress_token.as_ref();
        if token.is_none() && !outbox.is_task() {
            return;
        }
        if !progress.is_finite() || total.is_some_and(|t| !t.is_finite()) {
            return;
        }
        {
            let mut last = self
                .ctx
                .inner
                .last_progress
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if last.is_some_and(|l| progress <= l) {
                tracing::debug!(progress, "dropping non-increasing progress value");
                return;
            }
            *last = Some(progress);
        }
        let Some(token) = token.filter(|_| !outbox.is_task()) else {
            outbox.0.progress(progress, total, message);
            return;
        };
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Params<'a> {
            progress_token: &'a ProgressToken,
            progress: Number,
            #[serde(skip_serializing_if = "Option::is_none")]
            total: Option<Number>,
            #[serde(skip_serializing_if = "Option::is_none")]
            message: Option<&'a str>,
        }
        let params = Params {
            progress_token: token,
            progress: Number(progress),
            total: total.map(Number),
            message,
        };
        self.ctx
            .inner
            .scope
            .outbox
            .send(notification_frame("notifications/progress", &params));
    }
}

/// A finite number written as an integer when it is one (`50`, not `50.0`).
struct Number(f64);

impl Serialize for Number {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
        if self.0.fract() == 0.0 && self.0.abs() < EXACT {
            #[expect(clippy::cast_possible_truncation, reason = "integral and below 2^53")]
            serializer.serialize_i64(self.0 as i64)
        } else {
            serializer.serialize_f64(self.0)
        }
    }
}

/// Sends `notifications/message` for the current request.
///
/// Messages reach the client only when the request set
/// `io.modelcontextprotocol/logLevel`, and only at or above that level;
/// the spec forbids sending them otherwise. Every message is also emitted
/// as a `tracing` event (to stderr by default).
///
/// MCP logging is deprecated as of 2026-07-28: prefer `tracing` to stderr or
/// OpenTelemetry for new diagnostics.
#[derive(Clone, Debug)]
pub struct Logger {
    ctx: Context,
    name: Option<String>,
}

macro_rules! level_methods {
    ($($(#[$doc:meta])* $fn:ident => $level:ident,)*) => {$(
        $(#[$doc])*
        pub fn $fn(&self, data: impl Serialize) {
            self.log(LogLevel::$level, data);
        }
    )*};
}

impl Logger {
    /// Logs `data` at `level`.
    pub fn log(&self, level: LogLevel, data: impl Serialize) {
        self.ctx.log_as(self.name.as_deref(), level, &data);
    }

    level_methods! {
        /// Logs at `debug`.
        debug => Debug,
        /// Logs at `info`.
        info => Info,
        /// Logs at `notice`.
        notice => Notice,
        /// Logs at `warning`.
        warning => Warning,
        /// Logs at `error`.
        error => Error,
        /// Logs at `critical`.
        critical => Critical,
        /// Logs at `alert`.
        alert => Alert,
        /// Logs at `emergency`.
        emergency => Emergency,
    }
}

/// Types a handler can take as a `#[ctx]` parameter: the built-in ones
/// (`&Context`, `Progress`, [`State<T>`](crate::State), ...) and your own.
///
/// Implement it for a type of your own to hand handlers something built
/// from the request and the application's states, the way axum's
/// extractors do: a repository over the pool, the caller's tenant.
///
/// ```
/// use mcp_runtime::{Context, FromContext, Requirement};
///
/// #[derive(Clone)]
/// struct Pool; // e.g. sqlx::PgPool
///
/// /// The issues of the caller's tenant.
/// struct Issues {
///     pool: Pool,
///     tenant: String,
/// }
///
/// impl FromContext<'_> for Issues {
///     // Checked when the server is built: a server without a `Pool`
///     // state refuses to start, naming the handler that needs it.
///     const REQUIRES: &'static [Requirement] = &[Requirement::state::<Pool>()];
///
///     fn from_context(ctx: &Context) -> Self {
///         Issues {
///             pool: ctx.state::<Pool>().cloned().expect("checked at startup"),
///             tenant: ctx.principal().and_then(|p| p.subject()).unwrap_or("public").to_owned(),
///         }
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `#[ctx]` parameter",
    label = "not a context type",
    note = "`#[ctx]` parameters can be `State<T>` (a state given with `ServerBuilder::state`), `&Context`, `Context`, `Progress`, `Logger`, `CancellationToken`, `&RequestMeta`, `&ClientCapabilities`, `Option<&Implementation>`, `Option<&HttpRequest>`, `Option<&Principal>`, `&RequestSource`, `Input`, `Extension<T>` (a value a request layer attached), or a type of yours that implements `FromContext`",
    note = "a `State<T>` or an `Extension<T>` needs `T: Clone + Send + Sync + 'static` (it is cloned for each request): put a value that is not `Clone` in an `Arc`",
    note = "to take this value as a tool argument instead, remove `#[ctx]`"
)]
pub trait FromContext<'a>: Sized {
    /// Whether this parameter lets the handler send `notifications/message`
    /// (decides whether the server advertises the `logging` capability).
    const CAN_LOG: bool = false;

    /// The application states this parameter reads (see
    /// [`State`](crate::State)): the server refuses to start when a handler
    /// needs one it was not given. A type of your own that reads a state in
    /// `from_context` lists it here, e.g.
    /// `const REQUIRES: &'static [Requirement] = &[Requirement::state::<PgPool>()];`.
    const REQUIRES: &'static [Requirement] = &[];

    /// Extracts the value from the request context.
    fn from_context(ctx: &'a Context) -> Self;
}

impl<T: Clone + Send + Sync + 'static> FromContext<'_> for State<T> {
    const REQUIRES: &'static [Requirement] = &[Requirement::state::<T>()];

    fn from_context(ctx: &Context) -> Self {
        match ctx.state::<T>() {
            Some(value) => State(value.clone()),
            // Not reached: the server checks every handler's states when it
            // is built (`REQUIRES`), and refuses to start without them.
            None => unreachable!(
                "state `{}` was checked when the server was built",
                std::any::type_name::<T>()
            ),
        }
    }
}

impl<'a> FromContext<'a> for &'a Context {
    const CAN_LOG: bool = true;
    fn from_context(ctx: &'a Context) -> Self {
        ctx
    }
}

impl FromContext<'_> for Context {
    const CAN_LOG: bool = true;
    fn from_context(ctx: &Context) -> Self {
        ctx.clone()
    }
}

impl FromContext<'_> for Input {
    fn from_context(ctx: &Context) -> Self {
        ctx.input().clone()
    }
}

impl FromContext<'_> for Progress {
    fn from_context(ctx: &Context) -> Self {
        ctx.progress()
    }
}

impl FromContext<'_> for Logger {
    const CAN_LOG: bool = true;
    fn from_context(ctx: &Context) -> Self {
        Logger {
            ctx: ctx.clone(),
            name: None,
        }
    }
}

impl FromContext<'_> for CancellationToken {
    fn from_context(ctx: &Context) -> Self {
        ctx.cancellation().clone()
    }
}

impl<'a> FromContext<'a> for &'a RequestMeta {
    fn from_context(ctx: &'a Context) -> Self {
        ctx.meta()
    }
}

impl<'a> FromContext<'a> for &'a ClientCapabilities {
    fn from_context(ctx: &'a Context) -> Self {
        ctx.client_capabilities()
    }
}

/// Where the request came from: the transport, the caller, and what the
/// transport attached.
impl<'a> FromContext<'a> for &'a RequestSource {
    fn from_context(ctx: &'a Context) -> Self {
        ctx.source()
    }
}

/// The authenticated caller: subject, client id, scopes and claims, for a
/// handler's own object-level checks.
impl<'a> FromContext<'a> for Option<&'a Principal> {
    fn from_context(ctx: &'a Context) -> Self {
        ctx.principal()
    }
}

impl<'a> FromContext<'a> for Option<&'a Implementation> {
    fn from_context(ctx: &'a Context) -> Self {
        ctx.client_info()
    }
}

/// A request extension a handler takes as a `#[ctx]` parameter:
/// `#[ctx] tenant: Extension<Tenant>`, the value of type `T` a request
/// layer attached ([`Request::extensions_mut`](crate::middleware::Request::extensions_mut)).
///
/// The value is cloned for the handler, as axum's `Extension` is. A
/// request that reaches the handler without one (no layer attached it, or
/// the layer did not for this request) is answered with an internal error
/// (`-32603`) naming `T`, and the handler does not run: a missing tenant is
/// the server's mistake, never read as "no tenant".
///
/// ```rust,standalone_crate
/// use mcp_runtime::middleware::{self, BoxError, Extension, Next, Request, Response};
/// use mcp_runtime::{ServerBuilder, tool};
///
/// #[derive(Clone)]
/// struct Tenant(String);
///
/// /// Whose data this call sees.
/// #[tool]
/// fn whoami(#[ctx] tenant: Extension<Tenant>) -> String {
///     tenant.0.0
/// }
///
/// /// Resolves the tenant (here from the client's name; a real server
/// /// reads a header or a token claim).
/// async fn tenant(mut request: Request, next: Next<Request>) -> Result<Response, BoxError> {
///     let name = request.meta().client_info.as_ref().map(|c| c.name.clone());
///     request.extensions_mut().insert(Tenant(name.unwrap_or_else(|| "public".into())));
///     next.run(request).await
/// }
///
/// # fn main() -> Result<(), mcp_runtime::BuildError> {
/// let server = ServerBuilder::new("tenants", "1.0.0")
///     .request_layer(middleware::from_fn(tenant))
///     .build()?;
/// # drop(server);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Extension<T>(pub T);

impl<T> Deref for Extension<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for Extension<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T: Clone + Send + Sync + 'static> FromContext<'_> for Extension<T> {
    const REQUIRES: &'static [Requirement] = &[Requirement::extension::<T>()];

    fn from_context(ctx: &Context) -> Self {
        match ctx.extension::<T>() {
            Some(value) => Extension(value.clone()),
            // Not reached: the dispatcher checks every handler's extensions
            // (`REQUIRES`) before it runs, and answers `-32603` without one.
            None => unreachable!(
                "request extension `{}` was checked before the handler ran",
                std::any::type_name::<T>()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ProgressToken;

    fn context(meta: RequestMeta) -> (Context, tokio::sync::mpsc::UnboundedReceiver<Bytes>) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let scope = Scope {
            request_id: RequestId::Number(1),
            method: MethodLabel::Core(Method::ToolsCall),
            meta: Arc::new(meta),
            outbox: Outbox::channel(tx),
            cancellation: Cancellation::default(),
            app: App::new(
                Changes::new(std::sync::Arc::new(crate::changes::InProcessBus::default())),
                crate::state::States::default(),
                crate::metrics::Metrics::default(),
            ),
            source: RequestSource::default(),
            extensions: Extensions::default(),
        };
        let ctx = Context::new(scope, Input::default());
        (ctx, rx)
    }

    #[test]
    fn a_dropped_request_cancels_its_token_whenever_it_is_asked_for() {
        // Asked for before the request is dropped.
        let cancellation = Cancellation::default();
        let early = cancellation.token().clone();
        let guard = cancellation.clone().drop_guard();
        assert!(!early.is_cancelled() && !cancellation.is_cancelled());
        drop(guard);
        assert!(early.is_cancelled() && cancellation.is_cancelled());
        // Asked for only afterwards (by work the handler handed elsewhere).
        let cancellation = Cancellation::default();
        drop(cancellation.clone().drop_guard());
        assert!(cancellation.token().is_cancelled());
        // A request that finished: never cancelled, asked for or not.
        let cancellation = Cancellation::default();
        cancellation.clone().drop_guard().disarm();
        assert!(!cancellation.is_cancelled() && !cancellation.token().is_cancelled());
        // A task's token is the one `tasks/cancel` cancels.
        let token = CancellationToken::new();
        let cancellation = Cancellation::of(token.clone());
        token.cancel();
        assert!(cancellation.is_cancelled());
    }

    fn drain(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Bytes>) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(frame) = rx.try_recv() {
            out.push(String::from_utf8(frame.to_vec()).unwrap());
        }
        out
    }

    #[test]
    fn progress_needs_a_token_and_increasing_values() {
        let (ctx, mut rx) = context(RequestMeta::new(ClientCapabilities::default()));
        ctx.progress().report(1.0);
        assert!(drain(&mut rx).is_empty());

        let mut meta = RequestMeta::new(ClientCapabilities::default());
        meta.progress_token = Some(ProgressToken(RequestId::from("t")));
        let (ctx, mut rx) = context(meta);
        let progress = ctx.progress();
        progress.report_total(1.0, 2.0);
        progress.report(1.0);
        progress.report_message(2.0, Some(2.0), "done");
        assert_eq!(
            drain(&mut rx),
            [
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"total":2}}"#,
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":2,"total":2,"message":"done"}}"#,
            ]
        );
    }

    #[test]
    fn log_messages_only_at_or_above_the_requested_level() {
        let (ctx, mut rx) = context(RequestMeta::new(ClientCapabilities::default()));
        ctx.log(LogLevel::Emergency, "nobody asked");
        assert!(drain(&mut rx).is_empty());

        let mut meta = RequestMeta::new(ClientCapabilities::default());
        meta.log_level = Some(LogLevel::Warning);
        let (ctx, mut rx) = context(meta);
        ctx.log(LogLevel::Info, "too quiet");
        ctx.logger("db").error(serde_json::json!({"error": "down"}));
        assert_eq!(
            drain(&mut rx),
            [
                r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","logger":"db","data":{"error":"down"}}}"#
            ]
        );
    }
}
