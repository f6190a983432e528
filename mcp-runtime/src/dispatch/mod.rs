//! The stateless dispatcher: one request in, one reply out, decided from
//! the request alone.
//!
//! Every caller (stdio, HTTP, the in-process client, the legacy adapter)
//! goes through [`Dispatcher::dispatch`], whose steps run in the order the
//! spec implies (and the conformance suite tests): `_meta` present
//! (`-32602`), then the transport's own checks (HTTP: headers agree with
//! the body, `-32020`), then the version is supported (`-32022`), the
//! method is offered (`-32601`) and what it needs of the client, static
//! answers (discover, list pages), then the transport admits what must run
//! (HTTP: caps and rate limits), and finally the handler.

mod access;
pub(crate) mod audit;
pub(crate) mod completion;
pub(crate) mod discover;
pub(crate) mod envelope;
mod extensions;
mod guard;
mod head;
mod invoke;
mod key;
pub(crate) mod layers;
mod meta;
mod mrtr;
pub(crate) mod page;
mod prompts;
mod resources;
mod run;
pub(crate) mod subscriptions;
mod tasks;

pub(crate) use self::tasks::Tasks;
mod tools;

use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

pub(crate) use self::access::Permitted;
use self::envelope::{MetaMember, Rejection, Request};
use self::extensions::Extensions;
pub(crate) use self::extensions::Served;
use self::meta::MetaError;
use self::page::Pages;
use self::prompts::Prompts;
use self::resources::{Resources, Templates};
use self::subscriptions::Offered;
pub(crate) use self::tools::Tools;
use crate::changes::Changes;
use crate::context::Outbox;
pub(crate) use crate::diagnostics::{panic_message, report_panic};
use crate::extension::Extension;
use crate::middleware::TaskHandle;
use crate::middleware::{
    self, Layers, Next, Request as MiddlewareRequest, RequestLayer, ResultRef,
};
use crate::mrtr::state::StateSealer;
use crate::protocol::jsonrpc::{Unframed, error_frame, result_frame};
use crate::protocol::method::{Method, MethodName};
use crate::protocol::{CacheHint, ErrorObject, Implementation, RequestId, RequestMeta};
use crate::registry::{BuildError, PromptRef, Registry, RuntimeItems, ToolRef};
use crate::security::Principal;
use crate::source::RequestSource;
use crate::state::App;

pub(crate) use crate::protocol::SUPPORTED_VERSIONS;

/// Settings that shape the dispatcher's answers.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) page_size: usize,
    pub(crate) list_cache: CacheHint,
    pub(crate) discover_cache: CacheHint,
    pub(crate) read_cache: CacheHint,
    pub(crate) max_resource_bytes: usize,
    pub(crate) server_info_in_results: bool,
    /// Advertise and deliver `listChanged` notifications.
    pub(crate) list_changed: bool,
    /// Advertise and deliver `notifications/resources/updated`.
    pub(crate) resource_subscriptions: bool,
    /// Audit events show the arguments themselves, not only their digest.
    pub(crate) audit_arguments: bool,
    /// Rate limits shared by every instance (the Redis plugin).
    pub(crate) shared_limits: Option<Arc<dyn crate::security::SharedLimits>>,
    /// Whether the shared backend can be reached now (readiness).
    pub(crate) shared_ready: Option<ReadyCheck>,
}

/// Whether a shared backend answers now (the readiness probe asks).
#[derive(Clone)]
pub(crate) struct ReadyCheck(Arc<dyn Fn() -> bool + Send + Sync>);

impl ReadyCheck {
    pub(crate) fn new(ready: impl Fn() -> bool + Send + Sync + 'static) -> ReadyCheck {
        ReadyCheck(Arc::new(ready))
    }

    pub(crate) fn ready(&self) -> bool {
        (self.0)()
    }
}

impl std::fmt::Debug for ReadyCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReadyCheck(..)")
    }
}

impl Settings {
    /// The server's identity as results carry it in `_meta`, if they do.
    pub(crate) fn server_info(&self) -> Option<Box<RawValue>> {
        self.server_info_in_results
            .then(|| serde_json::value::to_raw_value(&self.info).expect("serializes"))
    }
}

/// Items added while the server runs (a catalog), and the kinds the
/// server offers for them whether or not it holds any yet.
#[derive(Clone, Debug, Default)]
pub(crate) struct LiveCatalog {
    pub(crate) items: Option<Arc<dyn RuntimeItems>>,
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
}

/// One finished answer: a complete JSON-RPC response frame, and the error
/// code when it is an error (HTTP picks its status from it).
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub(crate) frame: Bytes,
    #[cfg_attr(
        not(feature = "http"),
        expect(dead_code, reason = "read by the HTTP transport (feature `http`)")
    )]
    pub(crate) error_code: Option<i32>,
}

impl Reply {
    pub(crate) fn result(id: &RequestId, result: &[u8]) -> Reply {
        Reply {
            frame: Bytes::from(result_frame(id, result)),
            error_code: None,
        }
    }

    pub(crate) fn error(id: Option<&RequestId>, error: &ErrorObject) -> Reply {
        Reply {
            frame: Bytes::from(error_frame(id, error)),
            error_code: Some(error.code),
        }
    }

    /// The answer to a request that ran past the transport's time limit.
    pub(crate) fn timed_out(id: &RequestId, limit: std::time::Duration) -> Reply {
        Reply::error(Some(id), &timed_out(limit))
    }
}

/// The error of a request that ran past the transport's time limit.
pub(crate) fn timed_out(limit: std::time::Duration) -> ErrorObject {
    let message = format!("The request did not finish within {} ms", limit.as_millis());
    ErrorObject::new(crate::protocol::error_code::REQUEST_TIMEOUT, message)
}

impl Reply {
    /// The reply carrying `result`, framed for the request `id`.
    pub(crate) fn framed(id: &RequestId, result: ResultJson) -> Reply {
        let frame = match result {
            ResultJson::Shared(json) => Bytes::from(result_frame(id, &json)),
            ResultJson::Unframed(json) => json.frame(id),
            ResultJson::Task(json, handle) => {
                handle.delivered();
                Bytes::from(result_frame(id, &json))
            }
        };
        Reply {
            frame,
            error_code: None,
        }
    }
}

/// A handler's result as JSON: bytes that may be shared (a result
/// serialized once), or written for this request with room for its
/// frame, which then costs no copy.
#[derive(Debug)]
pub(crate) enum ResultJson {
    Shared(Bytes),
    Unframed(Unframed),
    /// A task's handle, carried until the answer is framed: dropped before
    /// (a request layer panicked or replaced the answer), it cancels the
    /// task, whose client never learned its id.
    Task(Bytes, TaskHandle),
}

impl ResultJson {
    /// The result as request observers see it.
    pub(crate) fn observed(&self) -> ResultRef<'_> {
        match self {
            ResultJson::Shared(json) | ResultJson::Task(json, _) => ResultRef::Shared(json),
            ResultJson::Unframed(json) => ResultRef::Unframed(json),
        }
    }
}

impl From<Bytes> for ResultJson {
    fn from(json: Bytes) -> ResultJson {
        ResultJson::Shared(json)
    }
}

impl From<Box<Rejection>> for Reply {
    fn from(rejection: Box<Rejection>) -> Reply {
        Reply::error(rejection.id.as_ref(), &rejection.error)
    }
}

/// An answer known without running a handler.
#[derive(Debug)]
pub(crate) enum Answer {
    /// A result serialized once and shared (discover, a list page), to be
    /// framed with the request's id; a transport may send it in pieces.
    Shared { id: RequestId, result: Bytes },
    /// A complete frame: an error, or a result written for this request.
    Reply(Reply),
}

impl Answer {
    /// The answer as one frame.
    pub(crate) fn into_reply(self) -> Reply {
        match self {
            Answer::Shared { id, result } => Reply::result(&id, &result),
            Answer::Reply(reply) => reply,
        }
    }
}

/// What must run to answer a request.
#[derive(Clone, Debug)]
pub(crate) enum Target {
    /// A method of the core protocol.
    Core(Method),
    /// A method an extension serves.
    Extension(Arc<Served>),
}

/// What a request needs: an answer known at once, or something run.
enum Triage {
    Answered(Result<Bytes, ErrorObject>),
    Run(Target),
}

/// A request whose `_meta` has been read and checked for presence.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub(crate) request: Request,
    /// Boxed: it is large, and it moves with the request's future.
    pub(crate) meta: Arc<RequestMeta>,
    /// Where it came from.
    pub(crate) source: RequestSource,
}

/// What a transport decides about a request on its way through
/// [`Dispatcher::dispatch`]: its own checks once `_meta` is read, and
/// whether (and how) a request that must run may run.
pub(crate) trait Admission {
    /// What the transport answers a request it does not admit with.
    type Refusal;
    /// What a running request holds for the transport (a permit, limits).
    type Admitted;

    /// Checks the transport adds to the request's own (HTTP: the headers
    /// that mirror the body). Runs before any answer.
    fn check(&mut self, _request: &Prepared) -> Result<(), ErrorObject> {
        Ok(())
    }

    /// How long a request it admits may run (not a subscription): the
    /// dispatcher answers one past it with `-31002`, inside the request
    /// layers and before the observers' end, so that both see the timeout
    /// as the request's failure. The transport's own timer stays, as the
    /// backstop for a future that never yields.
    fn time_limit(&self) -> Option<std::time::Duration> {
        None
    }

    /// Attaches to the request's source what handlers and request layers
    /// read of the transport (HTTP: the request's head). Called for each
    /// request that runs, and for an answer known at once only when
    /// request layers will see it (nothing else reads it there).
    fn attach(&mut self, _request: &mut Prepared) {}

    /// Admits a request that must run: where its notifications go, and
    /// what it holds while it runs; or the refusal. It attaches
    /// ([`attach`](Admission::attach)) what running requests need.
    fn admit(
        &mut self,
        request: &mut Prepared,
        target: &Target,
    ) -> Result<(Outbox, Self::Admitted), Self::Refusal>;
}

/// The admission of a caller that runs everything it hands over, with the
/// notifications going to one outbox: stdio, the in-process exchange, the
/// legacy adapter's bridged requests.
pub(crate) struct Unconditional<'a>(
    pub(crate) &'a Outbox,
    pub(crate) Option<std::time::Duration>,
);

impl Admission for Unconditional<'_> {
    type Refusal = std::convert::Infallible;
    type Admitted = ();

    fn time_limit(&self) -> Option<std::time::Duration> {
        self.1
    }

    fn admit(&mut self, _: &mut Prepared, _: &Target) -> Result<(Outbox, ()), Self::Refusal> {
        Ok((self.0.clone(), ()))
    }
}

/// How [`Dispatcher::dispatch`] left a request.
pub(crate) enum Dispatched<F, A: Admission> {
    /// Answered without running anything.
    Answered(Answer),
    /// The transport did not admit it.
    Refused(A::Refusal),
    /// Known at once, but passed through the server's request layers:
    /// `future` answers it. Needs no admission (as an answer known at once
    /// does not).
    Layered {
        id: RequestId,
        future: Pin<Box<dyn Future<Output = Reply>>>,
    },
    /// Running: `future` answers it, and the transport holds `admitted`
    /// until it does. Boxed where it is made: it is the largest state of a
    /// request, and moved by value it would be copied at every step.
    Running {
        id: RequestId,
        future: Pin<Box<F>>,
        #[cfg_attr(
            not(feature = "http"),
            expect(dead_code, reason = "read by the HTTP transport (feature `http`)")
        )]
        admitted: A::Admitted,
    },
}

#[derive(Debug)]
pub(crate) struct Dispatcher {
    registry: Registry,
    extensions: Extensions,
    settings: Settings,
    sealer: StateSealer,
    app: App,
    offered: Offered,
    server_info: Option<Box<RawValue>>,
    discover: Bytes,
    tool_pages: Pages<Tools>,
    resource_pages: Pages<Resources>,
    template_pages: Pages<Templates>,
    prompt_pages: Pages<Prompts>,
    /// The Tasks extension's runtime and engine, when the server runs
    /// tasks.
    tasks: Option<Tasks>,
    runtime: LiveCatalog,
    /// Every item's stack of layers; empty (and never looked at) when the
    /// server has none.
    layers: Layers,
    /// The request layers' stack, if the server has request layers.
    request_layers: Option<Next<MiddlewareRequest>>,
    /// Those layers with the built-in audit layer innermost, for the
    /// requests audited while `mcp::audit` is listened to.
    audited: Next<MiddlewareRequest>,
    /// What sees the client's notifications.
    observers: middleware::Observers,
    /// What sees each request start and end.
    request_observers: middleware::RequestObservers,
}

/// What the dispatcher is built from besides its registry.
pub(crate) struct Parts {
    pub(crate) extensions: Vec<Extension>,
    pub(crate) app: App,
    pub(crate) sealer: StateSealer,
    pub(crate) tasks: Option<Tasks>,
    pub(crate) runtime: LiveCatalog,
    pub(crate) layers: Vec<layers::GivenLayer>,
    pub(crate) request_layers: Vec<RequestLayer>,
    pub(crate) observers: middleware::Observers,
    pub(crate) request_observers: middleware::RequestObservers,
}

impl Dispatcher {
    pub(crate) fn new(
        registry: Registry,
        settings: &Settings,
        parts: Parts,
    ) -> Result<Dispatcher, BuildError> {
        let Parts {
            mut extensions,
            app,
            sealer,
            tasks,
            runtime,
            layers,
            request_layers,
            observers,
            request_observers,
        } = parts;
        if let Some(tasks) = &tasks {
            extensions.push(tasks.extension());
        }
        let extensions = Extensions::build(extensions, &registry)?;
        let layers = layers::build(&registry, &extensions, tasks.as_ref(), &layers)?;
        let users_requests = middleware::request_stack(&request_layers);
        let audited = audit::stack(request_layers, &sealer.keys, settings.audit_arguments);
        let server_info = settings.server_info();
        let info = server_info.as_deref();
        let has = Offered {
            tools: !registry.tools().is_empty() || runtime.tools,
            prompts: !registry.prompts().is_empty() || runtime.prompts,
            resources: registry.has_resources() || runtime.resources,
            resource_updates: false,
            tasks: false,
        };
        // A catalog's changes are announced whatever the builder says.
        let offered = Offered {
            tools: has.tools && (settings.list_changed || runtime.tools),
            prompts: has.prompts && (settings.list_changed || runtime.prompts),
            resources: has.resources && (settings.list_changed || runtime.resources),
            resource_updates: settings.resource_subscriptions && has.resources,
            tasks: tasks.is_some(),
        };
        let page = |cache| (settings.page_size, cache);
        let (size, cache) = page(settings.list_cache);
        let can_log = registry.can_log() || runtime.items.is_some();
        let capabilities = (has, offered, can_log);
        Ok(Dispatcher {
            discover: discover::build(&registry, &extensions, settings, capabilities, info),
            tool_pages: Pages::new(registry.tools(), size, cache),
            resource_pages: Pages::new(registry.resources(), size, cache),
            template_pages: Pages::new(registry.templates_by_text(), size, cache),
            prompt_pages: Pages::new(registry.prompts(), size, cache),
            registry,
            extensions,
            settings: settings.clone(),
            sealer,
            app,
            offered,
            server_info,
            tasks,
            runtime,
            layers,
            request_layers: users_requests,
            audited,
            observers,
            request_observers,
        })
    }

    /// Whether anything observes the client's notifications.
    pub(crate) fn observes_notifications(&self) -> bool {
        !self.observers.is_empty()
    }

    /// Shows a client's notification to the observers, before the
    /// transport acts on it (a cancellation). Nothing is read for a server
    /// without observers.
    pub(crate) fn notified(
        &self,
        notification: &envelope::Notification,
        source: &RequestSource,
        received: std::time::Instant,
    ) {
        if self.observers.is_empty() {
            return;
        }
        let params = notification.params.as_deref().map(RawValue::get);
        let seen = middleware::ClientNotification {
            method: &notification.method,
            params,
            trace: middleware::TraceContext::read(params),
            source,
            received,
        };
        for observer in self.observers.iter() {
            let observe = std::panic::AssertUnwindSafe(|| observer.notified(&seen));
            if let Err(panic) = std::panic::catch_unwind(observe) {
                report_panic("a notification observer", &*panic);
            }
        }
    }

    /// The tool named `name`: a `#[tool]`, else a runtime tool.
    pub(crate) fn tool(&self, name: &str) -> Option<ToolRef<'_>> {
        if let Some(tool) = self.registry.tool(name) {
            return Some(ToolRef::Static(tool));
        }
        self.runtime
            .items
            .as_ref()?
            .tool(name)
            .map(ToolRef::Runtime)
    }

    /// The prompt named `name`: a `#[prompt]`, else a runtime prompt.
    pub(crate) fn prompt(&self, name: &str) -> Option<PromptRef> {
        if let Some(prompt) = self.registry.prompt(name) {
            return Some(PromptRef::Static(prompt));
        }
        self.runtime
            .items
            .as_ref()?
            .prompt(name)
            .map(PromptRef::Runtime)
    }

    /// The server's identity.
    pub(crate) fn info(&self) -> &Implementation {
        &self.settings.info
    }

    /// The keys that seal `requestState`; the legacy adapter seals its
    /// session ids with them too, and authorization its DPoP nonces, so
    /// every instance can open them.
    #[cfg_attr(not(feature = "http"), expect(dead_code, reason = "used over HTTP"))]
    pub(crate) fn state_keys(&self) -> &crate::security::KeyRing {
        &self.sealer.keys
    }

    /// Where used single-use values are remembered: `requestState`s, and
    /// DPoP proofs' `jti`s.
    #[cfg_attr(not(feature = "http"), expect(dead_code, reason = "used over HTTP"))]
    pub(crate) fn replay_guard(&self) -> &Arc<dyn crate::mrtr::ReplayGuard> {
        &self.sealer.replay
    }

    /// The handle that announces changes to subscriptions.
    pub(crate) fn changes(&self) -> &Changes {
        self.app.changes()
    }

    /// The server's counters.
    pub(crate) fn metrics(&self) -> &crate::metrics::Metrics {
        self.app.metrics()
    }

    /// Rate limits every instance shares, when the server has shared state.
    #[cfg_attr(
        not(feature = "http"),
        expect(dead_code, reason = "rate limits are the HTTP transport's")
    )]
    pub(crate) fn shared_limits(&self) -> Option<&dyn crate::security::SharedLimits> {
        self.settings.shared_limits.as_deref()
    }

    /// Whether what the server depends on answers now: its shared backend,
    /// when it has one (the readiness probe).
    #[cfg_attr(
        not(feature = "http"),
        expect(dead_code, reason = "the probes are the HTTP transport's")
    )]
    pub(crate) fn backend_ready(&self) -> bool {
        self.settings
            .shared_ready
            .as_ref()
            .is_none_or(|check| check.ready())
    }

    /// The `server/discover` result, as serialized once.
    pub(crate) fn discover_result(&self) -> &Bytes {
        &self.discover
    }

    /// Whether `method` is served (by the core or an extension), whatever
    /// the request: the legacy adapter passes on only these.
    pub(crate) fn serves(&self, method: &MethodName) -> bool {
        match method {
            MethodName::Known(method) => self.offers(*method),
            MethodName::Unknown(name) => self.extensions.method(name).is_some(),
        }
    }

    /// The one way through the dispatcher, for every transport: `_meta`,
    /// the transport's checks, the answers known at once, the transport's
    /// admission, then the handler (the future this returns; `shutdown`
    /// ends long-lived requests gracefully).
    pub(crate) fn dispatch<A: Admission>(
        self: &Arc<Self>,
        request: Request,
        source: RequestSource,
        shutdown: &CancellationToken,
        admission: &mut A,
    ) -> Dispatched<impl Future<Output = Reply> + 'static, A> {
        let mut prepared = match self.prepare(request, source) {
            Ok(prepared) => prepared,
            Err(reply) => return Dispatched::Answered(Answer::Reply(reply)),
        };
        if let Err(error) = admission.check(&prepared) {
            let reply = Reply::error(Some(&prepared.request.id), &error);
            return Dispatched::Answered(Answer::Reply(reply));
        }
        let target = match self.triage(&prepared) {
            Triage::Run(target) => target,
            Triage::Answered(answer) => match &self.request_layers {
                None => {
                    self.observe_answered(&prepared, &answer);
                    return Dispatched::Answered(answered(prepared.request.id, answer));
                }
                Some(stack) => {
                    admission.attach(&mut prepared);
                    return self.answered_through(stack, prepared, answer);
                }
            },
        };
        match admission.admit(&mut prepared, &target) {
            Err(refusal) => Dispatched::Refused(refusal),
            Ok((outbox, admitted)) => {
                // Only a subscription outlives requests enough to need it (a
                // token's clone takes its lock).
                let listen = matches!(target, Target::Core(Method::SubscriptionsListen));
                let shutdown = listen.then(|| shutdown.clone());
                let limit = admission.time_limit().filter(|_| !listen);
                Dispatched::Running {
                    id: prepared.request.id.clone(),
                    future: Box::pin(self.run(prepared, target, outbox, (shutdown, limit))),
                    admitted,
                }
            }
        }
    }

    /// Shows an answer known at once to the request observers, if any.
    /// Not generic (as `dispatch` is, over the transports' admissions), so
    /// that it is compiled once.
    fn observe_answered(&self, prepared: &Prepared, answer: &Result<Bytes, ErrorObject>) {
        let (request, meta) = (&prepared.request, &prepared.meta);
        if let Some(observation) = self.observe(request, meta, &prepared.source) {
            observation.finish(answer.as_ref().map(ResultRef::Shared));
        }
    }

    /// Reads `_meta` and checks the fields every request must carry.
    pub(crate) fn prepare(
        &self,
        mut request: Request,
        source: RequestSource,
    ) -> Result<Prepared, Reply> {
        match read_meta(&mut request) {
            Ok(meta) => Ok(Prepared {
                request,
                meta,
                source,
            }),
            Err(MetaError::Invalid(error)) => Err(Reply::error(Some(&request.id), &error)),
            Err(MetaError::LegacyInitialize { requested }) => Err(Reply::error(
                Some(&request.id),
                &ErrorObject::unsupported_version(&requested, SUPPORTED_VERSIONS),
            )),
        }
    }

    /// The version, the method and what it needs of the client; answers
    /// what needs no handler (`server/discover` and the list pages).
    fn triage(&self, prepared: &Prepared) -> Triage {
        let Prepared {
            request,
            meta,
            source,
        } = prepared;
        if !SUPPORTED_VERSIONS.contains(&meta.protocol_version.as_str()) {
            return Triage::Answered(Err(ErrorObject::unsupported_version(
                &meta.protocol_version,
                SUPPORTED_VERSIONS,
            )));
        }
        let method = match &request.method {
            MethodName::Known(method) if self.offers(*method) => *method,
            MethodName::Unknown(name) => return self.triage_extension(name, meta),
            MethodName::Known(method) => return Triage::Answered(Err(not_offered(*method))),
        };
        if method.is_list() {
            return Triage::Answered(self.list(method, request, source.list_filter()));
        }
        match method {
            Method::Discover => Triage::Answered(Ok(self.discover.clone())),
            method => Triage::Run(Target::Core(method)),
        }
    }

    fn triage_extension(&self, name: &str, meta: &RequestMeta) -> Triage {
        let Some(served) = self.extensions.method(name) else {
            return Triage::Answered(Err(ErrorObject::method_not_found(name)));
        };
        match served.check_negotiated(&meta.client_capabilities) {
            Ok(()) => Triage::Run(Target::Extension(served.clone())),
            Err(error) => Triage::Answered(Err(error)),
        }
    }

    /// How many tools it serves.
    #[cfg(feature = "bench-internals")]
    pub(crate) fn tool_count(&self) -> usize {
        self.registry.tools().len()
    }

    /// The `Mcp-Param-*` headers tool `name` mirrors, if it is a tool.
    #[cfg_attr(
        not(feature = "http"),
        expect(dead_code, reason = "read by the HTTP transport (feature `http`)")
    )]
    pub(crate) fn tool_header_params(
        &self,
        name: &str,
    ) -> Option<std::borrow::Cow<'_, [crate::schema::HeaderParam]>> {
        use std::borrow::Cow;
        let params = match self.tool(name)? {
            ToolRef::Static(tool) => Cow::Borrowed(tool.header_params.as_slice()),
            ToolRef::Runtime(tool) => Cow::Owned(tool.header_params.clone()),
        };
        Some(params).filter(|p| !p.is_empty())
    }

    /// The param an extension method's `Mcp-Name` header mirrors, if any.
    #[cfg_attr(
        not(feature = "http"),
        expect(dead_code, reason = "read by the HTTP transport (feature `http`)")
    )]
    pub(crate) fn named_by(&self, method: &str) -> Option<&'static str> {
        self.extensions.method(method)?.method.named_by
    }

    /// Every `Mcp-Param-*` header any tool's arguments are mirrored into
    /// (the `x-mcp-header` names), for the CORS preflight's allowed headers.
    #[cfg_attr(
        not(feature = "http"),
        expect(dead_code, reason = "used by the HTTP transport's CORS")
    )]
    pub(crate) fn header_param_names(&self) -> impl Iterator<Item = &str> {
        let tools = self.registry.tools().iter();
        tools.flat_map(|tool| tool.header_params.iter().map(|param| param.name.as_str()))
    }

    /// Whether this server offers `method` (list methods only exist when
    /// there is something to list).
    fn offers(&self, method: Method) -> bool {
        let registry = &self.registry;
        let runtime = &self.runtime;
        match method {
            Method::Discover => true,
            Method::ToolsList | Method::ToolsCall => !registry.tools().is_empty() || runtime.tools,
            Method::ResourcesList | Method::ResourcesTemplatesList | Method::ResourcesRead => {
                registry.has_resources() || runtime.resources
            }
            Method::PromptsList | Method::PromptsGet => {
                !registry.prompts().is_empty() || runtime.prompts
            }
            Method::CompletionComplete => registry.has_completers(),
            // Acknowledged with the subset honoured, even when that is
            // nothing (the subscriptions page: types the server does not
            // support are omitted from the acknowledgement).
            Method::SubscriptionsListen => true,
        }
    }
}

/// `-32601` for a method this server does not offer.
fn not_offered(method: Method) -> ErrorObject {
    match method.capability() {
        Some(capability) => ErrorObject::capability_not_offered(method.name(), capability),
        None => ErrorObject::method_not_found(method.name()),
    }
}

/// An answer triage found, framed for the request `id`.
fn answered(id: RequestId, answer: Result<Bytes, ErrorObject>) -> Answer {
    match answer {
        Ok(result) => Answer::Shared { id, result },
        Err(error) => Answer::Reply(Reply::error(Some(&id), &error)),
    }
}

/// Reads the request's `_meta`, requiring the fields every request must
/// carry. Moves it out of the request when the envelope already read it.
fn read_meta(request: &mut Request) -> Result<Arc<RequestMeta>, MetaError> {
    match request.take_meta() {
        Some(MetaMember::Read(meta::ReadMeta(meta))) => Ok(meta),
        Some(MetaMember::Raw(range)) => meta::parse_wire(&request.text()[range]),
        // No `_meta` found: the slow path says exactly what is wrong.
        None => meta::parse(request.params(), request.method.as_str()),
    }
}

fn request_span(request: &Request, meta: &RequestMeta) -> tracing::Span {
    let span = tracing::info_span!(
        "mcp.request",
        id = %request.id,
        method = request.method.as_str(),
        traceparent = tracing::field::Empty,
        tracestate = tracing::field::Empty,
    );
    if let Some(traceparent) = &meta.traceparent {
        span.record("traceparent", traceparent.as_str());
    }
    if let Some(tracestate) = &meta.tracestate {
        span.record("tracestate", tracestate.as_str());
    }
    span
}

/// Parses a method's parameters, reporting the first bad field as `-32602`.
fn params<'de, T: serde::Deserialize<'de>>(params: &'de str) -> Result<T, ErrorObject> {
    crate::protocol::json::parse_arguments(params)
        .map_err(|e| ErrorObject::invalid_params(format!("Invalid params: {e}")))
}

#[derive(serde::Deserialize)]
struct ListParams {
    #[serde(default)]
    cursor: Option<String>,
}

impl Dispatcher {
    /// Answers a paginated `*/list` request from its pages, or for a
    /// caller whose lists hide what it may not use, from its own page.
    fn list(
        &self,
        method: Method,
        request: &Request,
        filter: Option<&Principal>,
    ) -> Result<Bytes, ErrorObject> {
        // Only the lists read the whole of `params` here (their cursor).
        let cursor = match request.params() {
            Some(params) => self::params::<ListParams>(params)?.cursor,
            None => None,
        };
        let cursor = cursor.as_deref();
        // A kind with runtime items answers from the catalog's merged
        // list; the others (and every kind of a server without a catalog)
        // from the static pages.
        if let Some(page) = self
            .runtime
            .items
            .as_ref()
            .and_then(|r| r.list(method, cursor, filter))
        {
            return page;
        }
        if let Some(principal) = filter {
            return self.list_for(method, principal, cursor);
        }
        let info = self.server_info.as_deref();
        let registry = &self.registry;
        match method {
            Method::ToolsList => self.tool_pages.page(cursor, info, registry.tools()),
            Method::ResourcesList => self.resource_pages.page(cursor, info, registry.resources()),
            Method::ResourcesTemplatesList => {
                let templates = registry.templates_by_text();
                self.template_pages.page(cursor, info, templates)
            }
            Method::PromptsList => self.prompt_pages.page(cursor, info, registry.prompts()),
            other => Err(ErrorObject::method_not_found(other.name())),
        }
    }
}
