//! The command line every server binary understands (feature `cli`):
//! `--stdio` (the default), `--http ADDR`, `--rate-limit`, and the
//! inspector's subcommands.

use std::process::ExitCode;

use clap::{CommandFactory as _, FromArgMatches as _, Parser};

use crate::HttpOptions;
use crate::registry::Items;
use crate::server::ServerBuilder;
use crate::transport::stdio::StdioOptions;

/// What the command line leaves `run()` to do: exit, or start this server
/// (its start-up hook first) and serve it one way.
pub(crate) enum Launch {
    /// Done (inspected another server, or failed): exit with this.
    Exit(ExitCode),
    Stdio(Box<ServerBuilder>, StdioOptions),
    Http(Box<ServerBuilder>, Box<HttpOptions>),
    /// The inspector, on this server in process.
    Inspect(Box<ServerBuilder>, Box<crate::inspect::Command>),
}

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
    /// With --http: also serve web pages from this origin
    /// (`scheme://host[:port]`; repeat for more), with CORS. Loopback
    /// origins are always allowed.
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    allow_origin: Vec<String>,
    /// Inspect instead of serving.
    #[command(subcommand)]
    inspect: Option<crate::inspect::Command>,
}

/// `run()` with the command line: inspect, serve HTTP, or leave stdio to
/// the caller.
pub(crate) fn launch(builder: ServerBuilder, args: Vec<std::ffi::OsString>) -> Launch {
    let cli = parse(&builder, args);
    let http = cli
        .http
        .map(|address| http_options(&builder, address, cli.rate_limit, &cli.allow_origin));
    if let Some(command) = cli.inspect {
        if command.inspects_another_server() {
            return Launch::Exit(inspect_another(builder, command));
        }
        return Launch::Inspect(Box::new(builder.single_instance()), Box::new(command));
    }
    match http {
        Some(options) => Launch::Http(Box::new(builder), Box::new(options)),
        None => {
            let stdio = builder.stdio.clone();
            Launch::Stdio(Box::new(builder), stdio)
        }
    }
}

/// The inspector aimed at another server (`--url`, `--stdio`): this one's
/// items, states and hooks play no part (its database need not answer),
/// so it is built with none of them.
fn inspect_another(builder: ServerBuilder, command: crate::inspect::Command) -> ExitCode {
    let mut bare = builder.single_instance().items(Items::none());
    bare.hooks = crate::lifecycle::Hooks::default();
    match bare.build() {
        Ok(server) => crate::inspect::run(server, command),
        Err(error) => fail(&error),
    }
}

fn fail(error: &crate::BuildError) -> ExitCode {
    eprintln!("error: {error}");
    ExitCode::FAILURE
}

/// The flags, with the program's name, version and description.
fn parse(builder: &ServerBuilder, args: Vec<std::ffi::OsString>) -> Cli {
    let info = &builder.settings.info;
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
    match Cli::from_arg_matches(&command.get_matches_from(args)) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    }
}

/// The server's HTTP options, bound to `address`, with the rate limit and
/// the origins the flags set.
fn http_options(
    builder: &ServerBuilder,
    address: std::net::SocketAddr,
    rate_limit: Option<u32>,
    origins: &[String],
) -> HttpOptions {
    let mut options = builder.http.clone().bind(address);
    for origin in origins {
        options = options.allow_origin(origin);
    }
    match rate_limit {
        None => options,
        Some(0) => options.without_rate_limit(),
        Some(per_second) => options.rate_limit(f64::from(per_second), per_second.saturating_mul(2)),
    }
}
