//! Configuring and starting a server.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio_util::sync::CancellationToken;

use crate::catalog::{Attached, Catalog, CatalogError, Kind, ResourceProvider};
use crate::changes::{ChangeBus, Changes, InProcessBus};
use crate::context::Outbox;
use crate::dispatch::envelope::{self, Incoming};
use crate::dispatch::{Dispatched, Dispatcher, LiveCatalog, Reply, Settings, Tasks, Unconditional};
use crate::extension::Extension;
use crate::lifecycle::{Hooks, Launched, Shutdown, Startup};
use crate::mrtr::state::StateSealer;
use crate::mrtr::{InMemoryReplayGuard, ReplayGuard};
use crate::protocol::{CacheHint, CacheHints, CacheScope, Icon, Implementation};
use crate::registry::{BuildError, Items, Registry};
use crate::security::{KeyRing, Principal};
use crate::source::{RequestSource, TransportKind};
use crate::state::{App, States};
use crate::transport::stdio::StdioOptions;

/// Builds a [`ServerBuilder`] named after the calling crate: the server
/// reports the package name and version from its `Cargo.toml`.
///
/// It also links the package's library, when there is one, into the
/// binary (or example, test or benchmark) that calls it, so the `#[tool]`s,
/// `#[resource]`s and `#[prompt]`s of `src/lib.rs` are served by a
/// `main.rs` that only says:
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     mcp_runtime::server!().run()
/// }
/// ```
///
/// Handlers in other crates are linked when the binary names the crate
/// (`use other_crate as _;`). [`ServerBuilder::new`] links nothing.
#[macro_export]
macro_rules! server {
    () => {{
        $crate::__private::link_package_library!();
        $crate::ServerBuilder::new(
            ::core::env!("CARGO_PKG_NAME"),
            ::core::env!("CARGO_PKG_VERSION"),
        )
    }};
}

/// Configures a server before it starts. Every `#[tool]` linked into the
/// binary is served; nothing needs to be registered by hand.
///
/// Start from [`server!`](crate::server!) (named after the calling crate)
/// or [`ServerBuilder::new`], chain the settings, then either
/// [`run`](Self::run) it as a command-line program (stdio, or `--http`
/// with the `cli` feature) or [`build`](Self::build) a [`Server`] to serve
/// yourself, on a transport or in process:
///
/// ```rust,standalone_crate
/// use mcp_runtime::{ServerBuilder, State, tool};
///
/// /// What the handlers share: given once, to the builder.
/// #[derive(Clone)]
/// struct Greeting(&'static str);
///
/// /// Greets someone.
/// #[tool]
/// fn greet(name: String, #[ctx] greeting: State<Greeting>) -> String {
///     format!("{}, {name}!", greeting.0.0)
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mcp_runtime::BuildError> {
/// let server = ServerBuilder::new("greeter", "1.0.0")
///     .title("Greeter")
///     .instructions("Greet people by name.")
///     .page_size(50)
///     .state(Greeting("Hello"))
///     .build()?;
/// assert_eq!(server.info().name, "greeter");
///
/// // One JSON-RPC message through the dispatcher, without a transport.
/// let call = serde_json::json!({
///     "jsonrpc": "2.0",
///     "id": 1,
///     "method": "tools/call",
///     "params": {
///         "name": "greet",
///         "arguments": {"name": "Ada"},
///         "_meta": {
///             "io.modelcontextprotocol/protocolVersion": mcp_runtime::protocol::PROTOCOL_VERSION,
///             "io.modelcontextprotocol/clientCapabilities": {},
///         },
///     },
/// });
/// let exchange = server.exchange(call.to_string()).await;
/// assert!(exchange.response.is_some_and(|response| response.contains("Hello, Ada!")));
/// # Ok(())
/// # }
/// ```
///
/// A binary usually ends with `mcp_runtime::server!().state(...).run()`
/// in its `main`, which returns the process's
/// [`ExitCode`](std::process::ExitCode).
#[derive(Clone)]
#[must_use]
pub struct ServerBuilder {
    pub(crate) settings: Settings,
    /// The transports' options [`run`](Self::run) serves with.
    pub(crate) stdio: StdioOptions,
    #[cfg(feature = "http")]
    pub(crate) http: crate::HttpOptions,
    /// The change bus; `None`: in this process (or the shared one, with
    /// shared state).
    pub(crate) bus: Option<Arc<dyn ChangeBus>>,
    pub(crate) state: StateSettings,
    /// Makes what instances behind a load balancer share (a shared
    /// backend's plugin: Redis).
    pub(crate) shared: Option<crate::shared_state::ConnectShared>,
    pub(crate) extensions: Vec<Extension>,
    /// How tasks run, with the Tasks engine; `None` until set (a server
    /// with task tools then uses the defaults and their engine).
    pub(crate) tasks: Option<(crate::tasks::TaskOptions, &'static crate::tasks::TaskEngine)>,
    /// Attaches the catalog given to [`catalog`](Self::catalog). A
    /// function made there, so that a server without a catalog links none
    /// of the catalog's code.
    catalog: Option<Arc<AttachCatalog>>,
    /// Providers given to [`resource_provider`](Self::resource_provider):
    /// each adds itself to the catalog when the server is built.
    providers: Vec<Arc<AddProvider>>,
    /// Which linked items it serves (default: all).
    items: Items,
    /// Item layers, outermost first, with the items each wraps.
    pub(crate) layers: Vec<crate::dispatch::layers::GivenLayer>,
    /// Request layers, outermost first.
    pub(crate) request_layers: Vec<crate::middleware::RequestLayer>,
    pub(crate) observers: Vec<Arc<dyn crate::middleware::NotificationObserver>>,
    pub(crate) request_observers: Vec<Arc<dyn crate::middleware::RequestObserver>>,
    /// Plugins' readers of each built server's counters (an exporter's).
    pub(crate) metrics_readers: Vec<crate::metrics::MetricsReader>,
    /// Plugins' `tracing` layers, which `run()` adds to its subscriber.
    pub(crate) tracing_layers: Vec<crate::diagnostics::MakeExported>,
    /// The tracer of the clients made for the server (`TestClient`, the
    /// inspector).
    pub(crate) client_tracer: Option<crate::diagnostics::SharedTracer>,
    /// The application's states, for handlers' `State<T>` parameters.
    pub(crate) states: States,
    pub(crate) hooks: Hooks,
    /// Plugins that could not install themselves, by name: reported by
    /// [`build`](Self::build).
    pub(crate) plugin_errors: Vec<(String, String)>,
}

/// Gives a catalog the server's static items and settings: the
/// dispatcher's view of it.
type AttachCatalog = dyn Fn(&Registry, &Settings, &Changes, &[Arc<AddProvider>]) -> Result<LiveCatalog, String>
    + Send
    + Sync;

/// Adds a provider to the server's catalog.
type AddProvider = dyn Fn(&Catalog) -> Result<(), CatalogError> + Send + Sync;

/// How `requestState` is sealed.
#[derive(Clone)]
pub(crate) struct StateSettings {
    options: crate::mrtr::RequestStateOptions,
    /// Where used single-use states are kept; `None`: this process's
    /// memory (or the shared store, with shared state).
    pub(crate) replay: Option<Arc<dyn ReplayGuard>>,
}

/// What instances share (a shared backend's plugin), each part `None`
/// without shared state.
struct Shared {
    parts: crate::shared_state::SharedParts,
    /// The server's counters: made here, with what it shares, so that its
    /// backend counts its errors into them. Each build makes its own, so
    /// that two servers built from one builder count apart.
    metrics: crate::metrics::Metrics,
}

impl fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("settings", &self.settings)
            .field("stdio", &self.stdio)
            .field("extensions", &self.extensions)
            .finish_non_exhaustive()
    }
}

impl ServerBuilder {
    /// A server that identifies itself as `name` `version`. See also
    /// [`server!`](crate::server!), which takes both from `Cargo.toml`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ServerBuilder {
            settings: Settings {
                info: Implementation::new(name, version),
                instructions: None,
                page_size: 100,
                list_cache: CacheHint::new(0, CacheScope::Private),
                discover_cache: CacheHint::new(0, CacheScope::Private),
                read_cache: CacheHint::new(0, CacheScope::Private),
                max_resource_bytes: 16 * 1024 * 1024,
                server_info_in_results: true,
                list_changed: false,
                resource_subscriptions: false,
                audit_arguments: false,
                shared_limits: None,
                shared_ready: None,
            },
            stdio: StdioOptions::default(),
            #[cfg(feature = "http")]
            http: crate::HttpOptions::default(),
            bus: None,
            state: StateSettings {
                options: crate::mrtr::RequestStateOptions::new(),
                replay: None,
            },
            extensions: Vec::new(),
            tasks: None,
            catalog: None,
            providers: Vec::new(),
            items: Items::all(),
            layers: Vec::new(),
            request_layers: Vec::new(),
            observers: Vec::new(),
            request_observers: Vec::new(),
            metrics_readers: Vec::new(),
            tracing_layers: Vec::new(),
            client_tracer: None,
            states: States::new(),
            hooks: Hooks::default(),
            plugin_errors: Vec::new(),
            shared: None,
        }
    }

    /// Adds `value` to the application's states: handlers take it as a
    /// `#[ctx]` parameter, `#[ctx] db: State<PgPool>`, and code that has
    /// only a [`Context`](crate::Context) as `ctx.state::<PgPool>()`. One
    /// value per type (a second replaces the first); as many types as you
    /// like. Values built asynchronously (a pool that connects) are built
    /// in the start-up hook instead, [`on_startup`](Self::on_startup).
    ///
    /// A handler that takes a state the server was not given stops
    /// [`build`](Self::build) with an error naming the handler and the
    /// type.
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.states.insert(value);
        self
    }

    /// Serves only `items` of the linked `#[tool]`s, `#[resource]`s and
    /// `#[prompt]`s (all of them by default): groups, modules or names,
    /// so that two servers in one process can serve different items.
    pub fn items(mut self, items: Items) -> Self {
        self.items = items;
        self
    }

    /// Wraps every item's invocation (tools, resources, prompts, extension
    /// methods, runtime catalog items) in `layer`: any tower layer over
    /// [`Next<Invocation>`](crate::middleware::Next) whose service answers
    /// an [`Invocation`](crate::middleware::Invocation) with an
    /// [`Output`](crate::middleware::Output), such as
    /// `tower::timeout::TimeoutLayer`,
    /// `tower::limit::ConcurrencyLimitLayer`, or an async function through
    /// [`middleware::from_fn`](crate::middleware::from_fn). Layers given
    /// first are outermost; an item's own (`#[tool(layer = ...)]`) is
    /// inside them. See [`middleware`](crate::middleware).
    pub fn layer(self, layer: impl crate::middleware::IntoItemLayer) -> Self {
        self.layer_on(Items::all(), layer)
    }

    /// Wraps the invocations of `items` in `layer`: a group
    /// (`Items::group("db")`), a module, named items, extension methods
    /// (`Items::method("tasks/get")`), or any union or difference of them.
    /// A selection that names nothing the server serves stops
    /// [`build`](Self::build) with an error naming it.
    pub fn layer_on(mut self, items: Items, layer: impl crate::middleware::IntoItemLayer) -> Self {
        self.layers.push((items, layer.into_item_layer()));
        self
    }

    /// Wraps every request of the dispatcher in `layer`, whatever its
    /// method and transport: a tower layer over
    /// [`Next<Request>`](crate::middleware::Next) whose service answers a
    /// [`middleware::Request`](crate::middleware::Request) with a
    /// [`middleware::Response`](crate::middleware::Response) (the result's
    /// JSON), or an async function through
    /// [`middleware::from_fn`](crate::middleware::from_fn). It sees the
    /// method, id, params, `_meta`, the caller and the states, and may
    /// answer with a JSON-RPC error itself. Requests whose envelope or
    /// `_meta` is invalid are answered before it, and
    /// `subscriptions/listen` does not pass through it. Layers given first
    /// are outermost.
    pub fn request_layer<L>(mut self, layer: L) -> Self
    where
        L: crate::middleware::Layer<crate::middleware::Next<crate::middleware::Request>>
            + Send
            + Sync
            + 'static,
        L::Service: crate::middleware::Service<
                crate::middleware::Request,
                Response = crate::middleware::Response,
            > + Clone
            + Send
            + Sync
            + 'static,
        <L::Service as crate::middleware::Service<crate::middleware::Request>>::Error:
            Into<crate::middleware::BoxError>,
        <L::Service as crate::middleware::Service<crate::middleware::Request>>::Future: 'static,
    {
        let layer = crate::middleware::RequestLayer::new(layer);
        self.request_layers.push(layer);
        self
    }

    /// Runs `hook` before the server serves, inside the runtime it serves
    /// from, to build the states that need it (a pool that connects, a
    /// configuration read from disk). It is given a [`Startup`]: how the
    /// server was launched and its command line, and where it leaves the
    /// states it built. An error stops the server before it serves (`run()`
    /// prints it and exits with status 1), and so does a hook still running
    /// after the [start-up timeout](Self::startup_timeout) (30 s by
    /// default). Hooks given more than once, and plugins' start-up steps,
    /// run in the order given, each seeing the states the ones before built.
    ///
    /// ```no_run
    /// # #[derive(Clone)] struct Pool;
    /// # impl Pool { async fn connect(_: &str) -> Result<Pool, std::io::Error> { Ok(Pool) } }
    /// mcp_runtime::server!()
    ///     .on_startup(|startup| async move {
    ///         let url = std::env::var("DATABASE_URL")?;
    ///         Ok::<_, mcp_runtime::HookError>(startup.state(Pool::connect(&url).await?))
    ///     })
    ///     .run();
    /// ```
    ///
    /// `run()` runs it only when this server serves (stdio, `--http`, or
    /// the inspector in process), never for the inspector aimed at another
    /// server (`--url`, `--stdio`). A server embedded in your own runtime
    /// runs it with [`start`](Self::start).
    #[track_caller]
    pub fn on_startup<F, Fut, E>(mut self, hook: F) -> Self
    where
        F: Fn(Startup) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Startup, E>> + 'static,
        E: Into<crate::lifecycle::HookError>,
    {
        let label = crate::lifecycle::Label::Hook(std::panic::Location::caller());
        self.hooks.add_startup(label, hook);
        self
    }

    /// How long each start-up hook (and plugin's start-up step) may run
    /// (default 30 s). Past it the server does not start: `run()` prints
    /// which hook did not finish and exits with status 1, so that an
    /// orchestrator sees a failure rather than a process that never gets
    /// ready. The hooks run on tokio's runtime with its time driver (as
    /// `run()`'s and `#[tokio::main]`'s are).
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.hooks.startup_timeout = timeout;
        self
    }

    /// Runs `hook` once the server has stopped and its requests have
    /// drained (or the grace period ran out), with the server's states: to
    /// close pools, flush what is buffered. `run()` runs it before it
    /// exits; an embedded server runs it with [`Server::stop`].
    pub fn on_shutdown<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(States) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        self.hooks.add_shutdown(hook);
        self
    }

    /// Runs the start-up hook, if there is one, on the current runtime,
    /// then [`build`](Self::build)s: the way to build a server embedded in
    /// your own runtime (`#[tokio::main]`, a test).
    pub async fn start(self) -> Result<Server, BuildError> {
        self.started(Launched::Embedded, Vec::new()).await?.build()
    }

    /// The builder with what its start-up hook built among its states, and
    /// no hook left to run.
    pub(crate) async fn started(
        mut self,
        launched: Launched,
        args: Vec<std::ffi::OsString>,
    ) -> Result<ServerBuilder, BuildError> {
        if self.hooks.startup.is_empty() {
            return Ok(self);
        }
        tracing::debug!(?launched, "running the start-up hooks");
        let states = (self.hooks.start(launched, args).await).map_err(BuildError::Startup)?;
        self.states.extend(states);
        Ok(self)
    }

    /// A human-readable server name for display.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.settings.info.title = Some(title.into());
        self
    }

    /// What the server does.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.settings.info.description = Some(description.into());
        self
    }

    /// The project's website.
    pub fn website_url(mut self, url: impl Into<String>) -> Self {
        self.settings.info.website_url = Some(url.into());
        self
    }

    /// Adds an icon to the server's identity.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.settings.info.icons.push(icon);
        self
    }

    /// Guidance for the model on using this server, sent by `server/discover`.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.settings.instructions = Some(instructions.into());
        self
    }

    /// How many items each page of a `*/list` result holds (default 100).
    pub fn page_size(mut self, items: usize) -> Self {
        self.settings.page_size = items.max(1);
        self
    }

    /// The caching hints results carry (`ttlMs`, `cacheScope`): for list
    /// results, `server/discover` and `resources/read` (see
    /// [`CacheHints`]; by default `ttlMs` 0, `private`, for all three). A
    /// resource can override the read hint with
    /// `#[resource(..., ttl_ms = ..., cache = public)]`.
    pub fn cache_hints(mut self, hints: CacheHints) -> Self {
        self.settings.list_cache = hints.list;
        self.settings.discover_cache = hints.discover;
        self.settings.read_cache = hints.read;
        self
    }

    /// The largest total size of one `resources/read` result, in bytes of
    /// text or base64 (default 16 MiB). Larger contents are refused with an
    /// error instead of being sent.
    pub fn max_resource_size(mut self, bytes: usize) -> Self {
        self.settings.max_resource_bytes = bytes;
        self
    }

    /// Stops adding `io.modelcontextprotocol/serverInfo` to result `_meta`
    /// (it is on by default, as the spec recommends).
    pub fn without_server_info_in_results(mut self) -> Self {
        self.settings.server_info_in_results = false;
        self
    }

    /// Serves the items of `catalog` beside the static ones: tools,
    /// prompts and resources added and removed while the server runs (see
    /// [`catalog`](crate::catalog)). The server advertises the kinds the
    /// catalog serves, with `listChanged`, and announces every change.
    /// One catalog serves one server.
    pub fn catalog(mut self, catalog: &Catalog) -> Self {
        self.catalog = Some(attach(catalog.clone()));
        self
    }

    /// Adds `provider` to the providers that join the catalog when the
    /// server is built (see [`Setup::resource_provider`]).
    pub(crate) fn add_resource_provider<P: ResourceProvider + Clone>(
        &mut self,
        name: String,
        provider: P,
    ) {
        self.providers.push(Arc::new(move |catalog: &Catalog| {
            let scopes: [&str; 0] = [];
            catalog
                .add_provider(name.clone(), provider.clone(), scopes)
                .map(drop)
        }));
        if self.catalog.is_none() {
            self.catalog = Some(attach(Catalog::of([Kind::Resources])));
        }
    }

    /// Settings for the stdio transport, used by [`run`](Self::run).
    pub fn stdio(mut self, options: StdioOptions) -> Self {
        self.stdio = options;
        self
    }

    /// Announces list changes: advertises `listChanged` for tools, prompts
    /// and resources, and delivers `notifications/*/list_changed` to
    /// `subscriptions/listen` streams when [`Changes`] reports them.
    pub fn list_changed(mut self) -> Self {
        self.settings.list_changed = true;
        self
    }

    /// Announces resource updates: advertises `resources.subscribe` and
    /// delivers `notifications/resources/updated` for subscribed URIs.
    pub fn resource_subscriptions(mut self) -> Self {
        self.settings.resource_subscriptions = true;
        self
    }

    /// Makes audit events (the `mcp::audit` target: one per tool call,
    /// resource read and prompt get) show the arguments themselves, cut to
    /// 1 KiB, beside their digest. Off by default: arguments hold whatever
    /// a user or model wrote, secrets included, and logs travel further
    /// than requests.
    pub fn audit_arguments(mut self) -> Self {
        self.settings.audit_arguments = true;
        self
    }

    /// Settings for the HTTP transport, used by [`run`](Self::run) with
    /// `--http`.
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    pub fn http(mut self, options: crate::HttpOptions) -> Self {
        self.http = options;
        self
    }

    /// How `requestState` is sealed and checked: its keys (by default from
    /// `MCP_STATE_KEY`, else a random per-process key that only works with
    /// a single instance), lifetime, rounds and single use (see
    /// [`RequestStateOptions`](crate::RequestStateOptions)).
    pub fn request_state(mut self, options: crate::mrtr::RequestStateOptions) -> Self {
        self.state.options = options;
        self
    }

    /// The builder for a one-off process such as the inspector: without
    /// configured keys, a random key that warns about nothing.
    #[cfg_attr(
        not(feature = "cli"),
        expect(dead_code, reason = "used by the inspector (feature `cli`)")
    )]
    pub(crate) fn single_instance(mut self) -> Self {
        if self.state.options.keys.is_none() && KeyRing::from_env().is_none() {
            self.state.options.keys = Some(KeyRing::single_instance());
        }
        self
    }

    fn sealer(&self, shared: Option<Arc<dyn ReplayGuard>>) -> Result<StateSealer, BuildError> {
        let keys = match (&self.state.options.keys, KeyRing::from_env()) {
            (Some(keys), _) => keys.clone(),
            (None, Some(Ok(keys))) => keys,
            (None, Some(Err(error))) => return Err(BuildError::StateKeys(error.to_string())),
            (None, None) => KeyRing::random(),
        };
        Ok(StateSealer {
            keys,
            ttl: self.state.options.ttl,
            max_rounds: self.state.options.max_rounds,
            replay: (self.state.replay.clone())
                .or(shared)
                .unwrap_or_else(|| Arc::new(InMemoryReplayGuard::default())),
            single_use_everywhere: self.state.options.single_use_everywhere,
            clock: self.state.options.clock.clone(),
        })
    }

    /// The dispatcher serving `registry` with these settings: its
    /// precomputed answers, extensions, change announcements and
    /// `requestState` keys.
    #[cfg(feature = "bench-internals")]
    pub(crate) fn dispatcher(&self, registry: Registry) -> Result<Dispatcher, BuildError> {
        self.dispatcher_sharing(registry, self.shared()?)
    }

    /// [`dispatcher`](Self::dispatcher), with what the instances share.
    fn dispatcher_sharing(
        &self,
        registry: Registry,
        shared: Shared,
    ) -> Result<Dispatcher, BuildError> {
        let bus = (self.bus.clone())
            .or(shared.parts.bus)
            .unwrap_or_else(|| Arc::new(InProcessBus::default()));
        let changes = Changes::new(bus);
        for reader in &self.metrics_readers {
            reader(&shared.metrics);
        }
        let app = App::new(changes.clone(), self.states.clone(), shared.metrics);
        // The engine comes from a task tool or from `tasks`: without
        // either, nothing of it is linked.
        let task_engine = crate::tasks::TASK_ENGINES.first().copied();
        let clock = self.state.options.clock.clone();
        let store = shared.parts.tasks;
        let tasks = match (&self.tasks, task_engine) {
            (Some((options, engine)), _) => {
                Some(Tasks::new(engine, Some(options.clone()), store, clock))
            }
            (None, Some(engine)) => Some(Tasks::new(engine, None, store, clock)),
            (None, None) => None,
        };
        let mut settings = self.settings.clone();
        settings.shared_limits = shared.parts.limits;
        settings.shared_ready = shared.parts.ready;
        let runtime = match &self.catalog {
            Some(attach) => attach(&registry, &self.settings, &changes, &self.providers)
                .map_err(BuildError::Catalog)?,
            None => LiveCatalog::default(),
        };
        let parts = crate::dispatch::Parts {
            extensions: self.extensions.clone(),
            app,
            sealer: self.sealer(shared.parts.replay)?,
            tasks,
            runtime,
            layers: self.layers.clone(),
            request_layers: self.request_layers.clone(),
            observers: self.observers.iter().cloned().collect(),
            request_observers: self.request_observers.iter().cloned().collect(),
        };
        Dispatcher::new(registry, &settings, parts)
    }

    /// The shared state's parts: a shared backend's, or none.
    fn shared(&self) -> Result<Shared, BuildError> {
        let metrics = crate::metrics::Metrics::default();
        let parts = match &self.shared {
            Some(connect) => {
                connect(&metrics).map_err(|error| BuildError::SharedState(error.to_string()))?
            }
            None => {
                warn_if_sharing_expected();
                crate::shared_state::SharedParts::default()
            }
        };
        Ok(Shared { parts, metrics })
    }

    /// Collects the registered handlers, checks them (duplicate names,
    /// schema rules, extensions) and precomputes the static answers.
    ///
    /// A server with a start-up hook ([`on_startup`](Self::on_startup)) is
    /// built by `run()` or [`start`](Self::start), which run the hook
    /// first; `build` refuses it rather than serve without the hook's
    /// states.
    pub fn build(self) -> Result<Server, BuildError> {
        if let Some((plugin, error)) = self.plugin_errors.first().cloned() {
            return Err(BuildError::Plugin { plugin, error });
        }
        if !self.hooks.startup.is_empty() {
            return Err(BuildError::Startup(
                "this server has a start-up hook (`on_startup`): serve it with `run()`, or build it \
                 with `start().await`, which runs the hook first"
                    .to_owned(),
            ));
        }
        let started = std::time::Instant::now();
        let registry = Registry::build(&self.items, &self.states)?;
        let (tools, prompts) = (registry.tools().len(), registry.prompts().len());
        let resources = registry.resources().len() + registry.templates().len();
        // A server told to serve no items (the inspector aimed at another
        // server builds one) has nothing missing to warn about.
        let chose_none = self.items == Items::none();
        if tools + prompts + resources == 0 && self.extensions.is_empty() && !chose_none {
            warn_nothing_linked();
        }
        #[cfg_attr(
            not(all(feature = "http", feature = "legacy")),
            expect(unused_mut, reason = "only legacy HTTP takes a part out")
        )]
        let mut shared = self.shared()?;
        #[cfg(all(feature = "http", feature = "legacy"))]
        let sessions = shared.parts.sessions.take();
        let dispatcher = self.dispatcher_sharing(registry, shared)?;
        let shutdown = Arc::new(Shutdown::new(&self.hooks, &self.states));
        tracing::debug!(
            tools,
            resources,
            prompts,
            elapsed = ?started.elapsed(),
            "registry and precomputed answers built"
        );
        Ok(Server {
            dispatcher: Arc::new(dispatcher),
            shutdown,
            #[cfg(all(feature = "http", feature = "legacy"))]
            sessions,
            client_tracer: self.client_tracer.clone(),
        })
    }
}

/// A deployment that sets `MCP_REDIS_URL` expects its instances to share
/// state: a binary that installs no shared backend says so, loudly, rather
/// than let each instance keep its own.
fn warn_if_sharing_expected() {
    if std::env::var_os("MCP_REDIS_URL").is_some() {
        tracing::error!(
            "MCP_REDIS_URL is set, but this server installs no shared state \
             (`.with(mcp_runtime_redis::RedisConfig::from_env())`): changes, single-use states, \
             rate limits and tasks stay in this instance"
        );
    }
}

/// The warning for a server with nothing to serve, which is almost always
/// a library its binary does not link.
fn warn_nothing_linked() {
    tracing::warn!(
        "this server has no tools, resources or prompts: no #[tool], #[resource] or #[prompt] \
         is linked into this binary. `server!()` links its own package's library; handlers in \
         another crate are linked when the binary names it: `use that_crate as _;`"
    );
}

/// A built server: the dispatcher with its registry and precomputed
/// answers, and the server's identity. Cheap to clone; serve it with a
/// transport ([`serve_stdio`](Self::serve_stdio), or with the `http`
/// feature `run_http`, `serve_http`, `http_service`).
#[derive(Clone)]
pub struct Server {
    pub(crate) dispatcher: Arc<Dispatcher>,
    /// The shutdown hook, run once.
    shutdown: Arc<Shutdown>,
    /// What instances share of legacy HTTP sessions (with Redis).
    #[cfg(all(feature = "http", feature = "legacy"))]
    pub(crate) sessions: Option<Arc<dyn crate::legacy::SessionShare>>,
    /// The tracer of the clients made for it (see
    /// [`Setup::client_tracer`](crate::plugin::Setup::client_tracer)).
    client_tracer: Option<crate::diagnostics::SharedTracer>,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("info", self.info())
            .finish_non_exhaustive()
    }
}

/// What one message produced: the notifications sent while handling it, in
/// order, then the response (none for a notification).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Exchange {
    /// Notification frames, in the order they were sent.
    pub notifications: Vec<String>,
    /// The response frame, if the message was a request.
    pub response: Option<String>,
}

impl Server {
    /// Whether the server answers `method`: a core method it offers (a
    /// server with no prompts does not serve `prompts/list`), or one of an
    /// extension's. What a gateway or an adapter in front of the server
    /// passes on (the legacy adapter passes on only these).
    pub fn serves(&self, method: &str) -> bool {
        let method = crate::protocol::method::MethodName::parse(method);
        self.dispatcher.serves(&method)
    }

    /// The `server/discover` result this server answers with, as the JSON
    /// it sends: written once, when the server was built (an older
    /// client's `initialize` is answered from it too).
    pub fn discover_json(&self) -> &[u8] {
        self.dispatcher.discover_result()
    }

    /// The tracer its plugins gave the clients made for it (`TestClient`,
    /// the inspector): see [`Setup::client_tracer`](crate::plugin::Setup::client_tracer).
    pub fn client_tracer(&self) -> Option<&crate::diagnostics::SharedTracer> {
        self.client_tracer.as_ref()
    }

    /// The server's identity.
    pub fn info(&self) -> &Implementation {
        self.dispatcher.info()
    }

    /// Runs the shutdown hook ([`ServerBuilder::on_shutdown`]), once: call
    /// it after the transports have stopped. `run()` calls it itself.
    pub async fn stop(&self) {
        self.shutdown.run().await;
    }

    /// This server's counters: refusals, tasks running, subscriptions
    /// open, Redis errors (see [`metrics`](crate::metrics)). Another server
    /// in the same process counts its own.
    pub fn metrics(&self) -> &crate::metrics::Metrics {
        self.dispatcher.metrics()
    }

    /// The handle for announcing changes to clients listening with
    /// `subscriptions/listen`.
    pub fn changes(&self) -> Changes {
        self.dispatcher.changes().clone()
    }

    /// Handles one JSON-RPC message without a transport, through the same
    /// dispatcher the transports use. Useful for tests and custom
    /// transports. Modern messages only: the legacy era needs a connection
    /// or session, so a legacy `initialize` is refused here as a
    /// modern-only server would.
    pub async fn exchange(&self, message: impl Into<String>) -> Exchange {
        self.exchange_as(message, None).await
    }

    /// [`exchange`](Self::exchange) on behalf of `principal`, as if a
    /// transport had authenticated it: the items' scope checks see it,
    /// and handlers read it from their context.
    pub async fn exchange_as(
        &self,
        message: impl Into<String>,
        principal: Option<Principal>,
    ) -> Exchange {
        let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
        let response = match envelope::parse(message.into()) {
            Err(rejection) => Some(Reply::from(rejection)),
            Ok(Incoming::Notification(_)) => None,
            Ok(Incoming::Request(request)) => {
                let source = RequestSource::new(TransportKind::InProcess).with_principal(principal);
                let never = CancellationToken::new();
                let outbox = Outbox::channel(sender);
                let mut admission = Unconditional(&outbox, None);
                Some(
                    match self
                        .dispatcher
                        .dispatch(request, source, &never, &mut admission)
                    {
                        Dispatched::Answered(answer) => answer.into_reply(),
                        Dispatched::Running { future, .. } => future.await,
                        Dispatched::Layered { future, .. } => future.await,
                        Dispatched::Refused(never) => match never {},
                    },
                )
            }
        };
        let mut notifications = Vec::new();
        while let Ok(frame) = receiver.try_recv() {
            notifications.push(frame_text(&frame));
        }
        Exchange {
            notifications,
            response: response.map(|r| frame_text(&r.frame)),
        }
    }
}

fn frame_text(frame: &Bytes) -> String {
    String::from_utf8_lossy(frame).into_owned()
}

/// What attaches `catalog` to the server being built: the providers given
/// to the builder join it, then it learns the server's static items. Made
/// only where a catalog is given, so that a server without one links none
/// of the catalog's code.
fn attach(catalog: Catalog) -> Arc<AttachCatalog> {
    Arc::new(move |registry, settings, changes, providers| {
        for add in providers {
            add(&catalog).map_err(|error| error.to_string())?;
        }
        let attached = Attached {
            tools: registry.tools().to_vec(),
            resources: registry.resources().to_vec(),
            prompts: registry.prompts().to_vec(),
            page_size: settings.page_size,
            list_cache: settings.list_cache,
            server_info: settings.server_info(),
            changes: changes.clone(),
        };
        let serves = |kind| catalog.kinds().any(|k| k == kind);
        Ok(LiveCatalog {
            tools: serves(Kind::Tools),
            prompts: serves(Kind::Prompts),
            resources: serves(Kind::Resources),
            items: Some(catalog.attach(attached)?),
        })
    })
}
