//! The standard entry point: command-line flags, logging to stderr, a
//! runtime, and the chosen transport.

use std::io::IsTerminal as _;
use std::process::ExitCode;

use clap::{CommandFactory as _, FromArgMatches as _, Parser};

use crate::server::{Server, ServerBuilder};

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
        match runtime.block_on(server.serve_stdio()) {
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

impl Server {
    /// Serves MCP over this process's stdin and stdout until stdin ends and
    /// every request in flight has been answered.
    pub async fn serve_stdio(&self) -> std::io::Result<()> {
        tracing::info!(server = %self.info().name, "serving MCP on stdio");
        crate::transport::stdio::serve(self, tokio::io::stdin(), tokio::io::stdout()).await
    }

    /// Serves MCP over any byte streams with stdio framing (a Unix socket,
    /// a TCP connection, an in-memory pipe in tests).
    pub async fn serve_streams<R, W>(&self, input: R, output: W) -> std::io::Result<()>
    where
        R: tokio::io::AsyncRead + Unpin,
        W: tokio::io::AsyncWrite + Unpin,
    {
        crate::transport::stdio::serve(self, input, output).await
    }
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
