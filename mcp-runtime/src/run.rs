//! The standard entry point: command-line flags, logging to stderr, a
//! runtime, and the chosen transport.

use std::io::IsTerminal as _;
use std::process::ExitCode;

use std::rc::Rc;
use std::sync::Arc;

use clap::{CommandFactory as _, FromArgMatches as _, Parser};

use crate::dispatch::Dispatcher;
use crate::server::{Server, ServerBuilder};
use crate::transport;
use crate::transport::http::endpoint::Endpoint;
use crate::transport::http::endpoint::HttpHook;
use crate::transport::stdio::{Frames, StdioHook, StdioOptions};
use crate::{HttpOptions, McpService};

// Flags every server binary understands. (A comment, not a doc comment:
// clap would show a doc comment as the program's description.)
#[derive(Parser, Debug)]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
    /// Serve MCP over stdin/stdout (the default).
    #[arg(long, conflicts_with = "http")]
    stdio: bool,
    /// Serve MCP over Streamable HTTP on this address, e.g. 127.0.0.1:8080
    /// (the endpoint is /mcp).
    #[arg(long, value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,
    /// With --http: tool calls allowed per second from each client address,
    /// with bursts of twice that (default: the server's setting, 50 unless
    /// configured); 0 turns rate limiting off, for example behind a gateway
    /// that limits, or to benchmark.
    #[arg(long, value_name = "PER_SECOND", requires = "http")]
    rate_limit: Option<u32>,
    /// Inspect instead of serving.
    #[command(subcommand)]
    inspect: Option<crate::inspect::Command>,
}

impl ServerBuilder {
    /// Runs the server as a command-line program: parses the flags, logs to
    /// stderr (level from `RUST_LOG`, default `warn`), builds the registry
    /// and serves until the transport ends.
    ///
    /// Startup problems, such as two tools with the same name, are printed
    /// with both definition sites and make the process exit with status 1.
    pub fn run(self) -> ExitCode {
        init_tracing();
        let info = &self.settings.info;
        let command = Cli::command()
            .name(info.name.clone())
            .version(info.version.clone())
            .about(match info.description.clone() {
                Some(description) => clap::builder::Resettable::Value(description.into()),
                None => clap::builder::Resettable::Reset,
            })
            .after_help(
                "Without a subcommand the server serves MCP over stdio (or --http). \
                 The subcommands inspect it: they run requests through the same dispatcher and print the answers.",
            );
        let stdio = self.stdio.clone();
        let cli = match Cli::from_arg_matches(&command.get_matches()) {
            Ok(cli) => cli,
            Err(error) => error.exit(),
        };
        let http = cli.http.map(|address| {
            let options = self.http.clone().bind(address);
            match cli.rate_limit {
                None => options,
                Some(0) => options.without_rate_limit(),
                Some(per_second) => {
                    options.rate_limit(f64::from(per_second), per_second.saturating_mul(2))
                }
            }
        });
        if let Some(command) = cli.inspect {
            return match self.single_instance().build() {
                Ok(server) => crate::inspect::run(server, command),
                Err(error) => {
                    eprintln!("error: {error}");
                    ExitCode::FAILURE
                }
            };
        }
        let server = match self.build() {
            Ok(server) => server,
            Err(error) => {
                eprintln!("error: {error}");
                return ExitCode::FAILURE;
            }
        };
        if let Some(options) = http {
            return match server.run_http(options) {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("error: cannot serve HTTP: {error}");
                    ExitCode::FAILURE
                }
            };
        }
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
        match runtime.block_on(server.serve_stdio(stdio)) {
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
        let dispatcher = self.dispatcher.clone();
        let hook = |frames: &Frames| stdio_hook(&dispatcher, frames);
        transport::stdio::serve(self.dispatcher.clone(), &options, hook, input, output).await
    }

    /// Serves Streamable HTTP on `options`' address until SIGINT or SIGTERM,
    /// then stops accepting, closes subscriptions and lets requests in
    /// flight finish (up to the shutdown grace period). Blocks the calling
    /// thread; runs its own runtimes (one per available core, on worker
    /// threads; with a single core, on the calling thread).
    pub fn run_http(&self, options: HttpOptions) -> std::io::Result<()> {
        transport::http::server::run(self.endpoint(options)?)
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

    fn endpoint(&self, options: HttpOptions) -> std::io::Result<Endpoint> {
        Endpoint::new(
            self.dispatcher.clone(),
            options,
            http_hook(&self.dispatcher),
        )
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
#[cfg(feature = "legacy")]
fn http_hook(dispatcher: &Dispatcher) -> Option<Arc<dyn HttpHook>> {
    Some(Arc::new(crate::legacy::http::LegacyHttp::new(dispatcher)))
}

#[cfg(not(feature = "legacy"))]
fn http_hook(_: &Dispatcher) -> Option<Arc<dyn HttpHook>> {
    None
}

/// Diagnostics go to stderr only: stdout belongs to the protocol.
fn init_tracing() {
    let level = std::env::var("RUST_LOG")
        .ok()
        .and_then(|spec| {
            spec.split(',')
                .filter(|d| !d.contains('='))
                .filter_map(|d| d.trim().parse::<tracing::Level>().ok())
                .next_back()
        })
        .unwrap_or(tracing::Level::WARN);
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_max_level(level)
        .try_init();
}
