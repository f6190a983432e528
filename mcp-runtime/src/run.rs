//! The standard entry point (`run()`: logging to stderr, a runtime, the
//! chosen transport), and the one place the transports are wired to the
//! server with the hooks the enabled eras plug into them (the legacy
//! adapter's).

use std::process::ExitCode;
use std::rc::Rc;
use std::sync::Arc;

use crate::dispatch::Dispatcher;
use crate::lifecycle::Launched;
use crate::server::{Server, ServerBuilder};
use crate::transport;
#[cfg(feature = "http")]
use crate::transport::http::endpoint::{Endpoint, HttpHook};
use crate::transport::process_stdio::ProcessStdio;
use crate::transport::signals::ShutdownSignals;
use crate::transport::stdio::{Frames, StdioHook, StdioOptions};
#[cfg(feature = "http")]
use crate::{HttpOptions, McpService};

impl ServerBuilder {
    /// Runs the server as a command-line program: parses the flags (with
    /// the `cli` feature: `--http ADDR`, `--rate-limit`, the inspector's
    /// subcommands), logs to stderr (what `RUST_LOG`'s `EnvFilter`
    /// directives enable, `info,my_server=debug`; default `warn`), builds
    /// the registry and serves until the transport ends;
    /// stdio unless the flags say otherwise.
    ///
    /// Startup problems, such as two tools with the same name, are printed
    /// with both definition sites and make the process exit with status 1.
    pub fn run(self) -> ExitCode {
        self.run_with_args(std::env::args_os())
    }

    /// [`run`](Self::run) with the command line `args` (the program's
    /// name first) instead of the process's: for a program with arguments
    /// of its own, which it takes out before handing the rest over (as
    /// `examples/files` takes its directory).
    pub fn run_with_args<I, T>(self, args: I) -> ExitCode
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString>,
    {
        // Held until the server is done: dropping it writes out the log.
        let exported = self.tracing_layers.iter().map(|make| make()).collect();
        let _logging = crate::diagnostics::init(exported);
        let builder = self;
        let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
        #[cfg(feature = "cli")]
        let (builder, how) = match crate::cli::launch(builder, args.clone()) {
            crate::cli::Launch::Exit(code) => return code,
            crate::cli::Launch::Stdio(builder, options) => (*builder, Serve::Stdio(options)),
            crate::cli::Launch::Http(builder, options) => (*builder, Serve::Http(options)),
            crate::cli::Launch::Inspect(builder, command) => (*builder, Serve::Inspect(command)),
        };
        #[cfg(not(feature = "cli"))]
        let (builder, how) = {
            let stdio = builder.stdio.clone();
            (builder, Serve::Stdio(stdio))
        };
        serve(builder, how, args)
    }
}

/// How `run()` serves, once the command line is read.
enum Serve {
    Stdio(StdioOptions),
    #[cfg(feature = "cli")]
    Http(Box<HttpOptions>),
    #[cfg(feature = "cli")]
    Inspect(Box<crate::inspect::Command>),
}

impl Serve {
    fn launched(&self) -> Launched {
        match self {
            Serve::Stdio(_) => Launched::Stdio,
            #[cfg(feature = "cli")]
            Serve::Http(options) => Launched::Http(options.bind),
            #[cfg(feature = "cli")]
            Serve::Inspect(_) => Launched::Inspector,
        }
    }
}

/// Runs the start-up hook, builds the server, serves it as `how` says,
/// then runs the shutdown hook: all on one runtime, this thread's, so
/// that what the hook built (a pool, with its maintenance tasks) lives as
/// long as the server and is closed on the runtime that made it.
fn serve(builder: ServerBuilder, how: Serve, args: Vec<std::ffi::OsString>) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let built = runtime.block_on(builder.started(how.launched(), args));
    let server = match built.and_then(ServerBuilder::build) {
        Ok(server) => server,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    let code = match how {
        Serve::Stdio(options) => serve_stdio_until_done(&runtime, &server, options),
        #[cfg(feature = "cli")]
        Serve::Http(options) => match server.run_http_announced(&runtime, *options) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("error: cannot serve HTTP: {error}");
                ExitCode::FAILURE
            }
        },
        #[cfg(feature = "cli")]
        Serve::Inspect(command) => crate::inspect::run_on(&runtime, server.clone(), *command),
    };
    runtime.block_on(server.stop());
    code
}

/// Serves stdio on `runtime` until stdin ends.
fn serve_stdio_until_done(
    runtime: &tokio::runtime::Runtime,
    server: &Server,
    options: StdioOptions,
) -> ExitCode {
    match runtime.block_on(server.serve_process_stdio(options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {
            tracing::debug!("the client closed stdout");
            ExitCode::SUCCESS
        }
        Err(error) => {
            tracing::error!(%error, "stdio transport failed");
            ExitCode::FAILURE
        }
    }
}

/// The transports, wired to the server: each one with the hooks the
/// enabled eras plug into it (the legacy adapter's). The one place that
/// knows both.
impl Server {
    /// Serves MCP over this process's stdin and stdout until stdin ends and
    /// every request in flight has been answered.
    pub async fn serve_stdio(&self, options: StdioOptions) -> std::io::Result<()> {
        tracing::info!(server = %self.info().name, "serving MCP on stdio");
        self.serve_streams(options, tokio::io::stdin(), tokio::io::stdout())
            .await
    }

    /// [`serve_stdio`](Self::serve_stdio) for `run()`'s own runtime, whose
    /// IO driver polls stdin and stdout when they are pipes or sockets
    /// (see `transport::process_stdio`), instead of tokio's blocking pool.
    /// SIGTERM and SIGINT stop it as end of input does, with the requests
    /// in flight given the shutdown grace: `run()` then runs the shutdown
    /// hooks and flushes telemetry, as over HTTP.
    async fn serve_process_stdio(&self, options: StdioOptions) -> std::io::Result<()> {
        tracing::info!(server = %self.info().name, "serving MCP on stdio");
        let signals = ShutdownSignals::install()?;
        let stop = signals.received("no more input read, draining requests in flight");
        let stdio = ProcessStdio::take();
        let served = self
            .serve_until(options, (stdio.input, stdio.output), stop)
            .await;
        stdio.restore.blocking();
        served
    }

    /// Serves MCP over any byte streams with stdio framing (a Unix socket,
    /// a TCP connection, an in-memory pipe in tests).
    pub async fn serve_streams<R, W>(
        &self,
        options: StdioOptions,
        input: R,
        output: W,
    ) -> std::io::Result<()>
    where
        R: tokio::io::AsyncRead + Unpin,
        W: tokio::io::AsyncWrite + Unpin,
    {
        self.serve_until(options, (input, output), std::future::pending())
            .await
    }

    /// Serves stdio framing until input ends or `stop` completes.
    async fn serve_until<R, W>(
        &self,
        options: StdioOptions,
        streams: (R, W),
        stop: impl Future<Output = ()>,
    ) -> std::io::Result<()>
    where
        R: tokio::io::AsyncRead + Unpin,
        W: tokio::io::AsyncWrite + Unpin,
    {
        let dispatcher = self.dispatcher.clone();
        let hook = |frames: &Frames| stdio_hook(&dispatcher, frames);
        transport::stdio::serve(self.dispatcher.clone(), &options, hook, streams, stop).await
    }
}

#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
impl Server {
    /// Serves Streamable HTTP on `options`' address until SIGINT or SIGTERM,
    /// then stops accepting, closes subscriptions and lets requests in
    /// flight finish (up to the shutdown grace period). Blocks the calling
    /// thread; runs its own runtimes (one per available core, on worker
    /// threads; with a single core, on the calling thread).
    pub fn run_http(&self, options: HttpOptions) -> std::io::Result<()> {
        transport::http::server::run(self.endpoint(options)?, |_, _| {})
    }

    /// [`run_http`](Self::run_http) for `run()`'s `--http`: says on stderr
    /// where it serves, once it does.
    #[cfg(feature = "cli")]
    pub(crate) fn run_http_announced(
        &self,
        runtime: &tokio::runtime::Runtime,
        options: HttpOptions,
    ) -> std::io::Result<()> {
        let name = self.info().name.clone();
        let endpoint = self.endpoint(options)?;
        transport::http::server::run_on(runtime, endpoint, move |address, path| {
            eprintln!("{}", listening_line(&name, address, path));
        })
    }

    /// Serves Streamable HTTP on `listener` from the current thread until
    /// `shutdown` completes, then drains like [`run_http`](Self::run_http).
    /// For embedding in your own runtime and for tests.
    pub async fn serve_http(
        &self,
        listener: tokio::net::TcpListener,
        options: HttpOptions,
        shutdown: impl Future<Output = ()>,
    ) -> std::io::Result<()> {
        transport::http::server::serve_on(listener, self.endpoint(options)?, shutdown).await
    }

    /// The MCP endpoint as a tower service, to mount in an axum `Router`
    /// (or any tower stack), served by `options.workers` threads (default:
    /// one per core) that live as long as the service.
    pub fn http_service(&self, options: HttpOptions) -> std::io::Result<McpService> {
        McpService::new(self.endpoint(options)?)
    }

    pub(crate) fn endpoint(&self, options: HttpOptions) -> std::io::Result<Endpoint> {
        let hook = http_hook(self, &options);
        Endpoint::new(self.dispatcher.clone(), options, hook)
    }
}

/// The legacy adapter's part of a stdio connection.
#[cfg(feature = "legacy")]
fn stdio_hook(dispatcher: &Arc<Dispatcher>, frames: &Frames) -> Option<Rc<dyn StdioHook>> {
    Some(Rc::new(crate::legacy::stdio::Connection::new(
        dispatcher, frames,
    )))
}

#[cfg(not(feature = "legacy"))]
fn stdio_hook(_: &Arc<Dispatcher>, _: &Frames) -> Option<Rc<dyn StdioHook>> {
    None
}

/// The legacy adapter's part of an HTTP endpoint.
#[cfg(all(feature = "http", feature = "legacy"))]
fn http_hook(server: &Server, options: &HttpOptions) -> Option<Arc<dyn HttpHook>> {
    Some(Arc::new(crate::legacy::http::LegacyHttp::new(
        &server.dispatcher,
        server.sessions.clone(),
        options.max_legacy_sessions,
    )))
}

#[cfg(all(feature = "http", not(feature = "legacy")))]
fn http_hook(_: &Server, _: &HttpOptions) -> Option<Arc<dyn HttpHook>> {
    None
}

/// The line `run()` prints when it serves HTTP: the address it is bound to
/// and the URL clients use (an unspecified address is reached locally on
/// loopback).
#[cfg(feature = "cli")]
pub(crate) fn listening_line(name: &str, address: std::net::SocketAddr, path: &str) -> String {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
    let reach = match address.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    let url = SocketAddr::new(reach, address.port());
    format!("{name}: serving MCP over Streamable HTTP on {address}, endpoint http://{url}{path}")
}

#[cfg(all(test, feature = "cli"))]
mod tests {
    use super::listening_line;

    #[test]
    fn the_listening_line_names_the_address_and_the_endpoint() {
        let line = |address: &str| listening_line("weather", address.parse().unwrap(), "/mcp");
        assert_eq!(
            line("127.0.0.1:8080"),
            "weather: serving MCP over Streamable HTTP on 127.0.0.1:8080, endpoint http://127.0.0.1:8080/mcp"
        );
        assert_eq!(
            line("0.0.0.0:9000"),
            "weather: serving MCP over Streamable HTTP on 0.0.0.0:9000, endpoint http://127.0.0.1:9000/mcp"
        );
        assert_eq!(
            line("[::]:9000"),
            "weather: serving MCP over Streamable HTTP on [::]:9000, endpoint http://[::1]:9000/mcp"
        );
    }
}
