//! Plugins: the one seam through which optional parts join a server.
//!
//! A [`Plugin`] is handed to [`ServerBuilder::with`](crate::ServerBuilder::with)
//! and installs itself at once through a [`Setup`]: it may add request
//! layers and item layers, request and notification observers, extensions
//! (methods and the capabilities `server/discover` declares), resource
//! providers, a shared backend ([`SharedParts`]: change bus, replay guard,
//! task store, rate limits, legacy sessions),
//! application states, and start-up and shutdown steps. Whatever it adds
//! takes its place among what the builder was given before and after it,
//! exactly as if the same calls had been made there: layers and observers
//! given first are outermost.
//!
//! The runtime's own optional parts are plugins: an
//! [`Extension`], the [Tasks engine's options](crate::tasks::TaskOptions),
//! and [Skills](crate::skills::Skills); OpenTelemetry export is the
//! `mcp-runtime-otel` crate's, shared state in Redis the
//! `mcp-runtime-redis` crate's. A closure
//! becomes one through [`from_fn`], for a one-off.
//!
//! A plugin that counts the tools called and answers how many on a method
//! of its own (the guide's chapter "Writing a plugin" runs it):
//!
//! ```rust,standalone_crate
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicU64, Ordering};
//!
//! use mcp_runtime::extension::{Extension, ExtensionMethod, MethodResult};
//! use mcp_runtime::middleware::{Finished, ObservedRequest, RequestObserver};
//! use mcp_runtime::plugin::{Plugin, PluginError, Setup};
//! use serde_json::json;
//!
//! /// Counts the tool calls the server answers.
//! #[derive(Clone, Debug, Default)]
//! struct CallCounter(Arc<AtomicU64>);
//!
//! impl RequestObserver for CallCounter {
//!     fn finished(&self, request: &ObservedRequest<'_>, _: Finished<'_>) {
//!         if request.method() == "tools/call" {
//!             self.0.fetch_add(1, Ordering::Relaxed);
//!         }
//!     }
//! }
//!
//! impl Plugin for CallCounter {
//!     fn install(self, server: &mut Setup<'_>) -> Result<(), PluginError> {
//!         let counted = self.0.clone();
//!         server.request_observer(self);
//!         server.extension(Extension::new("com.example/counter").method(ExtensionMethod::new(
//!             "com.example/calls",
//!             move |_: serde_json::Value, _: mcp_runtime::Context| {
//!                 let calls = counted.load(Ordering::Relaxed);
//!                 async move { Ok(MethodResult::complete(json!({"calls": calls}))) }
//!             },
//!         )));
//!         Ok(())
//!     }
//! }
//!
//! let server = mcp_runtime::ServerBuilder::new("counted", "1.0.0")
//!     .with(CallCounter::default())
//!     .build()
//!     .unwrap();
//! # let _ = server;
//! ```
//!
//! A plugin whose installation fails (a backend it cannot reach, settings
//! that do not fit) returns the error; [`build`](crate::ServerBuilder::build)
//! then stops with [`BuildError::Plugin`](crate::BuildError::Plugin),
//! naming the plugin.

mod builtins;

use std::future::Future;
use std::sync::Arc;

use crate::catalog::ResourceProvider;
use crate::changes::ChangeBus;
use crate::extension::Extension;
use crate::lifecycle::{HookError, Startup};
use crate::middleware::{
    BoxError, IntoItemLayer, Layer, Next, NotificationObserver, Request, RequestLayer,
    RequestObserver, Response, Service,
};
use crate::mrtr::ReplayGuard;
use crate::protocol::Implementation;
use crate::registry::Items;
use crate::server::ServerBuilder;
use crate::state::States;

pub use crate::shared_state::SharedParts;

impl ServerBuilder {
    /// Installs `plugin`: an optional part of the server (an
    /// [`Extension`], [`TaskOptions`](crate::tasks::TaskOptions),
    /// [`Skills`](crate::skills::Skills), OpenTelemetry export
    /// (`mcp-runtime-otel`), shared state in Redis (`mcp-runtime-redis`),
    /// or your own [`Plugin`]). What it adds
    /// takes its place among what the builder was given before and after it, as if the same calls were made here.
    /// A plugin that fails to install stops [`build`](Self::build) with
    /// an error naming it. See [`plugin`](self).
    pub fn with(mut self, plugin: impl Plugin) -> Self {
        let name = plugin.name();
        let mut setup = Setup {
            builder: &mut self,
            plugin: name.clone(),
        };
        if let Err(error) = plugin.install(&mut setup) {
            self.plugin_errors.push((name, error.to_string()));
        }
        self
    }
}

/// Why a plugin could not install itself.
pub type PluginError = Box<dyn std::error::Error + Send + Sync>;

/// An optional part of a server, installed with
/// [`ServerBuilder::with`](crate::ServerBuilder::with). See the
/// [module docs](self).
pub trait Plugin: Sized {
    /// Adds the plugin's parts to the server being configured.
    fn install(self, server: &mut Setup<'_>) -> Result<(), PluginError>;

    /// How errors and diagnostics name the plugin (default: its type).
    fn name(&self) -> String {
        std::any::type_name::<Self>().to_owned()
    }
}

/// A plugin made of a closure: `.with(plugin::from_fn(|server| { ... }))`,
/// for a one-off that cannot fail.
pub fn from_fn<F: FnOnce(&mut Setup<'_>)>(install: F) -> FromFn<F> {
    FromFn(install)
}

/// The plugin [`from_fn`] makes.
#[derive(Clone, Copy)]
pub struct FromFn<F>(F);

impl<F> std::fmt::Debug for FromFn<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FromFn")
    }
}

impl<F: FnOnce(&mut Setup<'_>)> Plugin for FromFn<F> {
    fn install(self, server: &mut Setup<'_>) -> Result<(), PluginError> {
        (self.0)(server);
        Ok(())
    }

    fn name(&self) -> String {
        "plugin::from_fn(..)".to_owned()
    }
}

/// What a plugin adds to the server being configured: handed to
/// [`Plugin::install`].
#[derive(Debug)]
pub struct Setup<'a> {
    pub(crate) builder: &'a mut ServerBuilder,
    /// The plugin being installed, as errors name it.
    pub(crate) plugin: String,
}

impl Setup<'_> {
    /// The server's identity, as configured so far.
    pub fn info(&self) -> &Implementation {
        &self.builder.settings.info
    }

    /// Wraps every request in `layer` (see
    /// [`ServerBuilder::request_layer`](crate::ServerBuilder::request_layer)).
    pub fn request_layer<L>(&mut self, layer: L) -> &mut Self
    where
        L: Layer<Next<Request>> + Send + Sync + 'static,
        L::Service: Service<Request, Response = Response> + Clone + Send + Sync + 'static,
        <L::Service as Service<Request>>::Error: Into<BoxError>,
        <L::Service as Service<Request>>::Future: 'static,
    {
        self.builder.request_layers.push(RequestLayer::new(layer));
        self
    }

    /// Wraps the invocations of `items` in `layer` (see
    /// [`ServerBuilder::layer_on`](crate::ServerBuilder::layer_on)).
    pub fn item_layer(&mut self, items: Items, layer: impl IntoItemLayer) -> &mut Self {
        self.builder.layers.push((items, layer.into_item_layer()));
        self
    }

    /// Tells `observer` when each request starts and how it ended (see
    /// [`RequestObserver`]). Observers added first see it first.
    pub fn request_observer(&mut self, observer: impl RequestObserver) -> &mut Self {
        self.builder.request_observers.push(Arc::new(observer));
        self
    }

    /// Shows every notification from the client to `observer`, on every
    /// transport, before the server acts on it (see
    /// [`NotificationObserver`]).
    pub fn notification_observer(&mut self, observer: impl NotificationObserver) -> &mut Self {
        self.builder.observers.push(Arc::new(observer));
        self
    }

    /// Offers `extension`: declared in `server/discover` under
    /// `capabilities.extensions`, its methods served beside the core's.
    pub fn extension(&mut self, extension: Extension) -> &mut Self {
        self.builder.extensions.push(extension);
        self
    }

    /// Serves the resources of `provider` beside the others, listed, read
    /// and announced with them: see [`ResourceProvider`]. It joins the
    /// server's [catalog](crate::catalog) when the server is built (one
    /// made for it when there is none). A URI taken twice stops the build.
    pub fn resource_provider<P: ResourceProvider + Clone>(
        &mut self,
        name: impl Into<String>,
        provider: P,
    ) -> &mut Self {
        self.builder.add_resource_provider(name.into(), provider);
        self
    }

    /// Fans changes out through `bus` instead of this process, so that a
    /// change on one instance reaches subscriptions on every other. A bus
    /// the application set itself stays.
    pub fn change_bus(&mut self, bus: impl ChangeBus) -> &mut Self {
        self.builder.bus = Some(Arc::new(bus));
        self
    }

    /// Remembers used single-use `requestState`s in `guard` instead of this
    /// process's memory, so that a state used on one instance is refused on
    /// every other.
    pub fn replay_guard(&mut self, guard: impl ReplayGuard) -> &mut Self {
        self.builder.state.replay = Some(Arc::new(guard));
        self
    }

    /// Shares state between the server's instances through a backend they
    /// all reach: `connect` makes the [`SharedParts`] of each server built
    /// from this builder (a connection, a thread of its own: they live as
    /// long as that server), counting the backend's failures into the
    /// server's [`Metrics`](crate::metrics::Metrics). An error from it
    /// stops [`build`](crate::ServerBuilder::build) with
    /// [`BuildError::SharedState`](crate::BuildError::SharedState). What
    /// the application set itself (a change bus, a replay guard, a task
    /// store, its own rate limiter) stays as set. A second backend
    /// replaces the first.
    pub fn shared_state<F>(&mut self, connect: F) -> &mut Self
    where
        F: Fn(&crate::metrics::Metrics) -> Result<SharedParts, PluginError> + Send + Sync + 'static,
    {
        self.builder.shared = Some(Arc::new(connect));
        self
    }

    /// Hands `reader` the [`Metrics`](crate::metrics::Metrics) of each
    /// server built from this builder, as it is built: what an exporter
    /// reads when it collects (keep a
    /// [`downgrade`](crate::metrics::Metrics::downgrade) of it, so that a
    /// server gone drops out).
    pub fn metrics_reader(
        &mut self,
        reader: impl Fn(&crate::metrics::Metrics) + Send + Sync + 'static,
    ) -> &mut Self {
        self.builder.metrics_readers.push(Arc::new(reader));
        self
    }

    /// A `tracing` layer (an exporter's: spans to a collector) for the
    /// subscriber [`run`](crate::ServerBuilder::run) installs, made by
    /// `make` when `run()` starts. A server served otherwise
    /// (`serve_http`, `http_service`, under a subscriber of your own)
    /// needs the layer added to that subscriber by hand.
    pub fn tracing_layer<L>(&mut self, make: impl Fn() -> L + Send + Sync + 'static) -> &mut Self
    where
        L: tracing_subscriber::Layer<tracing_subscriber::Registry> + Send + Sync + 'static,
    {
        self.builder
            .tracing_layers
            .push(Arc::new(move || Box::new(make())));
        self
    }

    /// Traces the requests of the clients made for this server
    /// (`testing::TestClient` and the inspector, with the `client`
    /// feature) with `tracer`; other clients take one with
    /// `Client::set_tracer`.
    pub fn client_tracer(&mut self, tracer: crate::diagnostics::SharedTracer) -> &mut Self {
        self.builder.client_tracer = Some(tracer);
        self
    }

    /// Adds `value` to the application's states (handlers take it as
    /// `#[ctx] State<T>`).
    pub fn state<T: Send + Sync + 'static>(&mut self, value: T) -> &mut Self {
        self.builder.states.insert(value);
        self
    }

    /// Runs `step` before the server serves, after the steps added before
    /// it, under the same deadline (see
    /// [`ServerBuilder::on_startup`](crate::ServerBuilder::on_startup)).
    pub fn on_startup<F, Fut, E>(&mut self, step: F) -> &mut Self
    where
        F: Fn(Startup) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Startup, E>> + 'static,
        E: Into<HookError>,
    {
        let label = crate::lifecycle::Label::Plugin(self.plugin.clone());
        self.builder.hooks.add_startup(label, step);
        self
    }

    /// Runs `step` once the server has stopped, before the steps added
    /// before it (see [`ServerBuilder::on_shutdown`](crate::ServerBuilder::on_shutdown)).
    pub fn on_shutdown<F, Fut>(&mut self, step: F) -> &mut Self
    where
        F: Fn(States) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        self.builder.hooks.add_shutdown(step);
        self
    }
}

/// A plugin that tells `observer` when each request starts and how it
/// ended: `.with(plugin::request_observer(my_observer))`. See
/// [`RequestObserver`].
pub fn request_observer(observer: impl RequestObserver) -> impl Plugin {
    from_fn(move |server| {
        server.request_observer(observer);
    })
}

/// A plugin that shows every notification from the client to `observer`
/// (a [`NotificationObserver`], or a closure taking a
/// [`&ClientNotification`](crate::middleware::ClientNotification)), on
/// every transport, before the server acts on it:
/// `.with(plugin::notification_observer(|n: &ClientNotification<'_>| ...))`.
/// Notifications pass through no layer (nothing answers them): this is
/// where they are traced or counted.
pub fn notification_observer(observer: impl NotificationObserver) -> impl Plugin {
    from_fn(move |server| {
        server.notification_observer(observer);
    })
}

/// An optional plugin: `.with(RedisConfig::from_env())` installs the
/// plugin when there is one, and nothing otherwise.
impl<P: Plugin> Plugin for Option<P> {
    fn install(self, server: &mut Setup<'_>) -> Result<(), PluginError> {
        match self {
            Some(plugin) => plugin.install(server),
            None => Ok(()),
        }
    }

    fn name(&self) -> String {
        match self {
            Some(plugin) => plugin.name(),
            None => "no plugin (None)".to_owned(),
        }
    }
}

/// An extension is a plugin that offers itself.
impl Plugin for Extension {
    fn install(self, server: &mut Setup<'_>) -> Result<(), PluginError> {
        server.extension(self);
        Ok(())
    }

    fn name(&self) -> String {
        format!("the extension {}", self.id)
    }
}
