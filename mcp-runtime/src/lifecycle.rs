//! Start-up and shutdown hooks: application state built inside the
//! runtime the server runs on, and closed after the last request.

use std::error::Error;
use std::ffi::OsString;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::state::States;

/// What a start-up hook is told, and where it leaves the states it built
/// (see [`ServerBuilder::on_startup`](crate::ServerBuilder::on_startup)).
#[derive(Debug)]
pub struct Startup {
    pub(crate) states: States,
    transport: Launched,
    args: Vec<OsString>,
}

/// How the server is about to serve.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Launched {
    /// Over stdin and stdout.
    Stdio,
    /// Over Streamable HTTP on this address (`--http`).
    Http(std::net::SocketAddr),
    /// Through the built-in inspector, in this process (`my-server list`).
    Inspector,
    /// Embedded: built with [`ServerBuilder::start`](crate::ServerBuilder::start),
    /// served however the application serves it.
    Embedded,
}

impl Startup {
    pub(crate) fn new(transport: Launched, args: Vec<OsString>) -> Startup {
        Startup {
            states: States::new(),
            transport,
            args,
        }
    }

    /// Adds `value` to the server's states, which handlers take as
    /// `#[ctx] State<T>` (a value of the same type given to the builder is
    /// replaced).
    #[must_use]
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Startup {
        self.states.insert(value);
        self
    }

    /// How the server is about to serve.
    pub fn transport(&self) -> &Launched {
        &self.transport
    }

    /// The command line `run()` was given, the program's name first (empty
    /// for [`ServerBuilder::start`](crate::ServerBuilder::start)). The
    /// flags `run()` understands are parsed already; this is for your own.
    pub fn args(&self) -> &[OsString] {
        &self.args
    }
}

/// Why a start-up hook failed, as it said.
pub type HookError = Box<dyn Error + Send + Sync>;

type StartupFuture = Pin<Box<dyn Future<Output = Result<Startup, HookError>>>>;
type ShutdownFuture = Pin<Box<dyn Future<Output = ()>>>;
type StartupHook = Arc<dyn Fn(Startup) -> StartupFuture + Send + Sync>;
type ShutdownHook = Arc<dyn Fn(States) -> ShutdownFuture + Send + Sync>;

/// What names a start-up step in errors.
#[derive(Clone, Debug)]
pub(crate) enum Label {
    /// The application's hook, where `on_startup` was called: its own
    /// errors speak for themselves; a timeout names the call.
    Hook(&'static std::panic::Location<'static>),
    /// A plugin's step: its errors are prefixed with the plugin's name.
    Plugin(String),
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Label::Hook(at) => write!(f, "the start-up hook at {}:{}", at.file(), at.line()),
            Label::Plugin(name) => write!(f, "the start-up step of the plugin {name}"),
        }
    }
}

/// The hooks a builder was given, and its plugins' steps, in the order
/// they were added. Cheap to clone (builders are).
#[derive(Clone)]
pub(crate) struct Hooks {
    /// Each start-up step with what names it in errors.
    pub(crate) startup: Vec<(Label, StartupHook)>,
    shutdown: Vec<ShutdownHook>,
    /// How long each start-up step may take.
    pub(crate) startup_timeout: Duration,
}

impl Default for Hooks {
    fn default() -> Self {
        Hooks {
            startup: Vec::new(),
            shutdown: Vec::new(),
            startup_timeout: Duration::from_secs(30),
        }
    }
}

impl fmt::Debug for Hooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hooks")
            .field("startup", &self.startup.len())
            .field("shutdown", &self.shutdown.len())
            .finish()
    }
}

impl Hooks {
    /// Adds a start-up step, named `label` in errors.
    pub(crate) fn add_startup<F, Fut, E>(&mut self, label: Label, hook: F)
    where
        F: Fn(Startup) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Startup, E>> + 'static,
        E: Into<HookError>,
    {
        let hook: StartupHook = Arc::new(move |startup| {
            let running = hook(startup);
            Box::pin(async move { running.await.map_err(Into::into) })
        });
        self.startup.push((label, hook));
    }

    pub(crate) fn add_shutdown<F, Fut>(&mut self, hook: F)
    where
        F: Fn(States) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        self.shutdown
            .push(Arc::new(move |states| Box::pin(hook(states))));
    }

    /// Runs the start-up steps in order, each given what the ones before
    /// it built, each under the start-up timeout: the states they all
    /// built, or why one failed, naming it. A step that never ends (a
    /// database that accepts connections and never answers) fails at the
    /// deadline instead of holding the process silently.
    pub(crate) async fn start(
        &mut self,
        launched: Launched,
        args: Vec<OsString>,
    ) -> Result<States, String> {
        let mut startup = Startup::new(launched, args);
        let deadline = self.startup_timeout;
        for (label, hook) in std::mem::take(&mut self.startup) {
            startup = match tokio::time::timeout(deadline, hook(startup)).await {
                Ok(Ok(startup)) => startup,
                Ok(Err(error)) => {
                    return Err(match label {
                        Label::Hook(_) => error.to_string(),
                        Label::Plugin(name) => format!("the plugin {name}: {error}"),
                    });
                }
                Err(_) => {
                    return Err(format!(
                        "{label} did not finish within {} s (a backend that never answers?); \
                         the server does not serve without it. Raise the limit with \
                         `ServerBuilder::startup_timeout`",
                        deadline.as_secs_f64()
                    ));
                }
            };
        }
        Ok(startup.states)
    }
}

/// A built server's shutdown steps, run once by whichever copy of the
/// server stops first, the last added first.
#[derive(Default)]
pub(crate) struct Shutdown(Mutex<Option<(Vec<ShutdownHook>, States)>>);

impl fmt::Debug for Shutdown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Shutdown")
    }
}

impl Shutdown {
    pub(crate) fn new(hooks: &Hooks, states: &States) -> Shutdown {
        Shutdown(Mutex::new(Some((hooks.shutdown.clone(), states.clone()))))
    }

    /// Runs the steps, the first time only.
    pub(crate) async fn run(&self) {
        let taken = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some((hooks, states)) = taken {
            for hook in hooks.iter().rev() {
                tracing::debug!("running a shutdown step");
                hook(states.clone()).await;
            }
        }
    }
}
