//! The inspector built into every server binary: subcommands that run
//! requests through the same dispatcher the transports use (or against
//! another server, with `--url` or `--stdio`) and print what comes back.
//!
//! ```text
//! my-server list
//! my-server call add '{"a": 2, "b": 40}'
//! my-server read memo://notes/1
//! my-server prompt review '{"topic": "the plan"}'
//! my-server call deploy '{"service": "api"}' --answers answers.json
//! my-server discover --url http://127.0.0.1:8080/mcp
//! ```
//!
//! # Answers files
//!
//! `--answers FILE` answers the server's questions (`input_required`)
//! without a terminal, for scripts and CI. The file holds one JSON object:
//! each member is an `inputRequests` key and the response to send under
//! that key in `inputResponses`, shaped as the spec shapes the response to
//! the question's method:
//!
//! ```json
//! {
//!   "answer": {"action": "accept", "content": {"confirm": true}},
//!   "close": {"action": "decline"},
//!   "login": {"action": "accept"},
//!   "summary": {"role": "assistant", "content": {"type": "text", "text": "Short."},
//!               "model": "by-hand", "stopReason": "endTurn"}
//! }
//! ```
//!
//! - `elicitation/create`, a form: `{"action": "accept", "content": {..}}`
//!   with the form's fields, or `{"action": "decline"}`, `{"action":
//!   "cancel"}`.
//! - `elicitation/create`, a URL: `{"action": "accept"}` once the user is
//!   done there (or decline, cancel).
//! - `sampling/createMessage`: a `CreateMessageResult` (`role`, `content`,
//!   `model`, `stopReason`).
//! - `roots/list` is never read from the file: the roots are the `--root`
//!   flags (default: the current directory).
//!
//! The keys are the parameter names of declared asks (`#[elicit]`,
//! `#[elicit_url]`, `#[sample]`, `#[roots]`), the keys handlers give inline
//! asks (`input.elicit_as("close", ..)`, `sample_as`, ...), and for inline
//! asks without one, generated keys (`elicitation_1`, `sampling_2`, ...)
//! that change when the handler's asks change order: name those asks to
//! keep a file valid. Every round reads the same file, so one file answers
//! a whole flow; members whose keys are not asked are not sent, and a
//! question whose key the file lacks stops the command with an error
//! naming the key.

mod answer;
mod connection;
mod oauth;
mod print;
#[cfg(feature = "skills")]
mod skills;
mod task;
mod terminal;

use std::io::Write;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use serde_json::{Value, json};
use tracing::Instrument as _;

use self::answer::Answerer;
use self::connection::Connection;
use crate::client::{Client, ClientError, ListKind, Outcome, Response};
use crate::server::Server;

/// Inspector subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Shows what the server offers (`server/discover`).
    Discover(Target),
    /// Lists tools, resources, resource templates and prompts.
    List {
        /// Only this kind of item.
        #[arg(value_enum)]
        what: Option<Listing>,
        #[command(flatten)]
        target: Target,
    },
    /// Calls a tool: `call NAME '{"arg": "value"}'`.
    Call {
        /// The tool.
        name: String,
        /// The arguments, as a JSON object (default `{}`).
        arguments: Option<String>,
        #[command(flatten)]
        ask: AskOptions,
        #[command(flatten)]
        target: Target,
    },
    /// Reads a resource: `read URI`.
    Read {
        /// The resource's URI.
        uri: String,
        #[command(flatten)]
        ask: AskOptions,
        #[command(flatten)]
        target: Target,
    },
    /// Gets a prompt: `prompt NAME '{"arg": "value"}'`.
    Prompt {
        /// The prompt.
        name: String,
        /// The arguments, as a JSON object of strings (default `{}`).
        arguments: Option<String>,
        #[command(flatten)]
        ask: AskOptions,
        #[command(flatten)]
        target: Target,
    },
    /// Prints the contract manifest (what `assert_contract!` locks).
    Contract(Target),
    /// Prints the Server Card at URL (experimental: SEP-2127 is a draft),
    /// e.g. http://127.0.0.1:8080/mcp/server-card.
    ServerCard {
        /// The card's URL.
        url: String,
    },
    /// Skills (the `io.modelcontextprotocol/skills` extension): list them,
    /// show an entry, load one verified.
    #[cfg(feature = "skills")]
    #[command(subcommand)]
    Skills(self::skills::SkillsCommand),
}

impl Command {
    /// The server it talks to over MCP (`None`: a document by URL).
    fn target(&self) -> Option<&Target> {
        match self {
            Command::Discover(target) | Command::Contract(target) => Some(target),
            Command::List { target, .. }
            | Command::Call { target, .. }
            | Command::Read { target, .. }
            | Command::Prompt { target, .. } => Some(target),
            #[cfg(feature = "skills")]
            Command::Skills(command) => Some(command.target()),
            Command::ServerCard { .. } => None,
        }
    }

    /// The subcommand's name, for its span (`inspect call`).
    fn verb(&self) -> &'static str {
        match self {
            Command::Discover(_) => "discover",
            Command::List { .. } => "list",
            Command::Call { .. } => "call",
            Command::Read { .. } => "read",
            Command::Prompt { .. } => "prompt",
            Command::Contract(_) => "contract",
            Command::ServerCard { .. } => "server-card",
            #[cfg(feature = "skills")]
            Command::Skills(_) => "skills",
        }
    }

    /// Whether the command inspects a server other than this binary's
    /// (`--url`, `--stdio`): this one's start-up hook then never runs.
    pub(crate) fn inspects_another_server(&self) -> bool {
        (self.target()).is_none_or(|target| target.url.is_some() || target.stdio.is_some())
    }
}

/// Which server to inspect, and how to print.
#[derive(Args, Debug)]
pub(crate) struct Target {
    /// Inspect the server at this Streamable HTTP endpoint instead of this
    /// binary's own handlers, e.g. http://127.0.0.1:8080/mcp.
    #[arg(long, value_name = "URL", conflicts_with = "stdio")]
    url: Option<String>,
    /// Inspect a server spawned with this command line, over its stdio,
    /// e.g. "my-other-server --stdio".
    #[arg(long, value_name = "COMMAND")]
    stdio: Option<String>,
    /// Extra HTTP header for --url, as "Name: value" (repeatable). An
    /// Authorization header replaces the OAuth flow.
    #[arg(long = "header", value_name = "HEADER", requires = "url")]
    headers: Vec<String>,
    #[command(flatten)]
    oauth: self::oauth::OAuthOptions,
    /// Print the raw JSON results instead of a readable summary.
    #[arg(long)]
    json: bool,
}

/// How questions from the server (`input_required`) are answered.
#[derive(Args, Debug)]
pub(crate) struct AskOptions {
    /// Answer from this JSON file, mapping each `inputRequests` key to its
    /// response (for example `{"confirm": {"action": "accept", "content":
    /// {"ok": true}}}`). Without it, questions are asked on the terminal.
    ///
    /// Keys are the names of declared asks' parameters, the keys given to
    /// inline asks (`elicit_as`, ...), or generated ones (`elicitation_1`,
    /// ...) for inline asks without one. A response is what the spec
    /// answers the question's method with: `{"action": "accept", "content":
    /// {...}}`, `{"action": "decline"}` or `{"action": "cancel"}` for an
    /// elicitation, a CreateMessageResult (`role`, `content`, `model`,
    /// `stopReason`) for sampling; roots come from --root. A question whose
    /// key the file lacks stops the command, naming the key.
    #[arg(long, value_name = "FILE")]
    answers: Option<std::path::PathBuf>,
    /// A root to offer when asked for roots (repeatable; default: the
    /// current directory).
    #[arg(long = "root", value_name = "PATH")]
    roots: Vec<std::path::PathBuf>,
}

/// Kinds of listed items.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Listing {
    /// Tools.
    Tools,
    /// Resources.
    Resources,
    /// Resource templates.
    Templates,
    /// Prompts.
    Prompts,
}

/// Runs `command` against `server` (this binary's handlers) or the server
/// its target names.
pub(crate) fn run(server: Server, command: Command) -> ExitCode {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => run_on(&runtime, server, command),
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            ExitCode::FAILURE
        }
    }
}

/// [`run`] on `runtime` (the one `run()` ran the start-up hook on).
pub(crate) fn run_on(
    runtime: &tokio::runtime::Runtime,
    server: Server,
    command: Command,
) -> ExitCode {
    // One span around the whole command: its requests (each round of a
    // multi-round-trip call, a task's polls) share its trace.
    let span = tracing::info_span!(
        target: crate::diagnostics::INSPECT_TARGET,
        "mcp.inspect",
        otel.name = format!("inspect {}", command.verb()),
    );
    let tracer = server.client_tracer().cloned();
    runtime.block_on(async move {
        let mut out = std::io::stdout().lock();
        let done = execute(server, command, &mut out)
            .instrument(span.clone())
            .await;
        print_trace(tracer.as_deref(), &span);
        match done.and_then(|code| Ok(out.flush().map(|()| code)?)) {
            Ok(code) => code,
            Err(Failure::Usage(problem)) => {
                eprintln!("error: {problem}");
                ExitCode::FAILURE
            }
            Err(Failure::Client(error)) => {
                // Nothing to do if stderr cannot be written.
                let _ = print::error(&mut std::io::stderr().lock(), &error);
                ExitCode::FAILURE
            }
            // The reader went away (`list | head -1`): like any Unix tool,
            // stop quietly.
            Err(Failure::Output(error)) if error.kind() == std::io::ErrorKind::BrokenPipe => {
                ExitCode::SUCCESS
            }
            Err(Failure::Output(error)) => {
                eprintln!("error: cannot write the output: {error}");
                ExitCode::FAILURE
            }
        }
    })
}

/// The command's trace id on stderr, when a tracer records it
/// (OpenTelemetry export through `mcp-runtime-otel`): what to look the
/// command up by in a trace viewer.
fn print_trace(tracer: Option<&dyn crate::diagnostics::ClientTracer>, span: &tracing::Span) {
    if let Some(trace) = tracer.and_then(|tracer| tracer.trace_id(span)) {
        eprintln!("trace {trace}");
    }
}

/// Why a command stopped.
#[derive(Debug)]
enum Failure {
    /// The command line asks for something that cannot be sent.
    Usage(String),
    /// The request failed.
    Client(ClientError),
    /// Stdout could not be written.
    Output(std::io::Error),
}

impl From<ClientError> for Failure {
    fn from(error: ClientError) -> Self {
        Failure::Client(error)
    }
}

impl From<std::io::Error> for Failure {
    fn from(error: std::io::Error) -> Self {
        Failure::Output(error)
    }
}

async fn execute(
    server: Server,
    command: Command,
    out: &mut dyn Write,
) -> Result<ExitCode, Failure> {
    match command {
        Command::Discover(target) => {
            let mut client = target.connect(server, false)?;
            let (result, _) = client.request("server/discover", json!({})).await?;
            let discovery = client.discover().await?;
            print::discovery(out, &discovery, &result, target.json)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::List { what, target } => {
            let mut client = target.connect(server, false)?;
            let listed = list(&mut client, what).await?;
            print::listing(out, &listed, target.json)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Call {
            name,
            arguments,
            ask,
            target,
        } => {
            let arguments = parse_arguments(arguments.as_deref())?;
            let mut client = target.connect(server, true)?;
            // Task tools run as tasks, followed until they end.
            client.declare_tasks();
            let mut answerer = Answerer::new(&ask)?;
            let params = json!({"name": name, "arguments": arguments});
            let first = client.ask_json("tools/call", params).await?;
            let Some(done) = rounds(&mut client, &mut answerer, first).await? else {
                return Ok(ExitCode::from(2));
            };
            Ok(print::tool_result(out, &done, target.json)?)
        }
        Command::Read { uri, ask, target } => {
            let mut client = target.connect(server, true)?;
            let mut answerer = Answerer::new(&ask)?;
            let first = client
                .ask_json("resources/read", json!({"uri": uri}))
                .await?;
            let Some(done) = rounds(&mut client, &mut answerer, first).await? else {
                return Ok(ExitCode::from(2));
            };
            print::resource(out, &done, target.json)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Prompt {
            name,
            arguments,
            ask,
            target,
        } => {
            let arguments = prompt_arguments(parse_arguments(arguments.as_deref())?)?;
            let mut client = target.connect(server, true)?;
            let mut answerer = Answerer::new(&ask)?;
            let params = json!({"name": name, "arguments": arguments});
            let first = client.ask_json("prompts/get", params).await?;
            let Some(done) = rounds(&mut client, &mut answerer, first).await? else {
                return Ok(ExitCode::from(2));
            };
            print::prompt(out, &done, target.json)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Contract(target) => contract(server, &target, out).await,
        #[cfg(feature = "skills")]
        Command::Skills(command) => self::skills::execute(server, command, out).await,
        Command::ServerCard { url } => server_card(&url, out).await,
    }
}

/// `contract`: the manifest `assert_contract!` locks.
async fn contract(
    server: Server,
    target: &Target,
    out: &mut dyn Write,
) -> Result<ExitCode, Failure> {
    let mut client = target.connect(server, false)?;
    let manifest = crate::contract::manifest_of(&mut client).await?;
    write!(out, "{}", crate::contract::render(&manifest))?;
    Ok(ExitCode::SUCCESS)
}

/// `server-card URL`: the card, as the server wrote it.
async fn server_card(url: &str, out: &mut dyn Write) -> Result<ExitCode, Failure> {
    let card = crate::client::fetch_server_card(url).await?;
    writeln!(
        out,
        "{}",
        serde_json::to_string_pretty(&card).unwrap_or_default()
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Everything the server offers (or only `what`), by kind.
async fn list(
    client: &mut Client<Connection>,
    what: Option<Listing>,
) -> Result<Value, ClientError> {
    let offers = client.discover().await?.capabilities;
    let kinds = [
        (
            Listing::Tools,
            ListKind::Tools,
            offers.tools.is_some(),
            "tools",
        ),
        (
            Listing::Resources,
            ListKind::Resources,
            offers.resources.is_some(),
            "resources",
        ),
        (
            Listing::Templates,
            ListKind::Templates,
            offers.resources.is_some(),
            "resourceTemplates",
        ),
        (
            Listing::Prompts,
            ListKind::Prompts,
            offers.prompts.is_some(),
            "prompts",
        ),
    ];
    let mut listed = serde_json::Map::new();
    for (listing, kind, offered, member) in kinds {
        if offered && what.is_none_or(|w| w == listing) {
            let items = client.list_json(kind).await?;
            listed.insert(member.to_owned(), Value::Array(items));
        }
    }
    Ok(Value::Object(listed))
}

/// Answers rounds until the request completes; `None` if a round could not
/// be answered (it was printed). Results stay JSON until the end, so that
/// calls, reads and prompts share one copy of this loop.
async fn rounds(
    client: &mut Client<Connection>,
    answerer: &mut Answerer,
    mut response: Response<Value>,
) -> Result<Option<Value>, ClientError> {
    loop {
        print::notifications(&response.notifications);
        let round = match response.outcome {
            Outcome::Complete(result) => return Ok(Some(result)),
            Outcome::InputRequired(round) => round,
            Outcome::Task(started) => return followed(client, answerer, started).await,
        };
        let Some(answers) = answerer.answer(&round)? else {
            print::unanswered(&round);
            return Ok(None);
        };
        response = client.retry(&round, answers).await?;
    }
}

/// Follows a task to its end; its result, or `None` if it was cancelled
/// or asked what nobody here can answer (both printed).
async fn followed(
    client: &mut Client<Connection>,
    answerer: &mut Answerer,
    started: crate::client::Task,
) -> Result<Option<Value>, ClientError> {
    match task::follow(client, answerer, started).await? {
        task::Ended::Completed(result) => Ok(Some(result)),
        task::Ended::Cancelled => {
            eprintln!("the task was cancelled");
            Ok(None)
        }
        task::Ended::Unanswered => Ok(None),
    }
}

fn parse_arguments(text: Option<&str>) -> Result<Value, Failure> {
    let Some(text) = text else {
        return Ok(json!({}));
    };
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(Failure::Usage(
            "the arguments must be a JSON object, like '{\"a\": 1}'".into(),
        )),
        Err(error) => Err(Failure::Usage(format!(
            "the arguments are not JSON: {error}"
        ))),
    }
}

/// Prompt arguments are strings on the wire: numbers and booleans typed
/// on the command line (`{"days": 4}`) are sent as their text (`"4"`).
fn prompt_arguments(arguments: Value) -> Result<Value, Failure> {
    let Value::Object(map) = arguments else {
        return Ok(arguments);
    };
    let mut strings = serde_json::Map::new();
    for (name, value) in map {
        let text = match value {
            Value::String(text) => text,
            Value::Number(number) => number.to_string(),
            Value::Bool(flag) => flag.to_string(),
            other => {
                return Err(Failure::Usage(format!(
                    "prompt arguments are strings, and `{name}` is {other}: did you mean {}?",
                    Value::String(other.to_string())
                )));
            }
        };
        strings.insert(name, Value::String(text));
    }
    Ok(Value::Object(strings))
}

impl Target {
    /// A client for the target; `asks` declares the capabilities needed to
    /// answer questions.
    fn connect(&self, server: Server, asks: bool) -> Result<Client<Connection>, ClientError> {
        let tracer = server.client_tracer().cloned();
        let connection = Connection::open(
            server,
            self.url.as_deref(),
            self.stdio.as_deref(),
            &self.headers,
            |remote| self.oauth.apply(remote),
        )?;
        let mut client = Client::new(connection);
        if let Some(tracer) = tracer {
            client.set_tracer(tracer);
        }
        client.set_client_info("mcp-runtime-inspector", env!("CARGO_PKG_VERSION"));
        if asks {
            client.set_capability("elicitation", json!({"form": {}, "url": {}}));
            client.set_capability("sampling", json!({}));
            client.set_capability("roots", json!({}));
        }
        client.set_progress(true);
        client.set_log_level(Some(crate::protocol::LogLevel::Info));
        Ok(client)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use serde_json::json;

    use super::{Command, Failure, execute, print, prompt_arguments};
    use crate::auth::{Authorization, TokenVerifier, VerifyError, VerifyFuture};
    use crate::{HttpOptions, ServerBuilder};

    /// The inspector's command line, as a server binary parses it.
    #[derive(Parser)]
    struct Cli {
        #[command(subcommand)]
        command: Command,
    }

    /// Accepts no token.
    struct Nobody;

    impl TokenVerifier for Nobody {
        fn verify<'a>(&'a self, _token: &'a str) -> VerifyFuture<'a> {
            Box::pin(async { Err(VerifyError::Signature) })
        }
    }

    /// What the inspector prints on stderr for `args` against a server
    /// behind authorization, over real HTTP on a loopback port.
    async fn printed_error(args: &[&str]) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let server = ServerBuilder::new("protected", "1.0.0").build().unwrap();
        let authorization = Authorization::new(url.clone())
            .authorization_server("https://auth.example.com")
            .verifier(Nobody);
        let serving = server.clone();
        // The HTTP server runs on a thread of its own (its tasks are local).
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let options = HttpOptions::new().authorization(authorization);
                let served = serving.serve_http(listener, options, std::future::pending());
                served.await.unwrap();
            });
        });
        let mut line = vec!["inspector"];
        line.extend(args);
        line.extend(["--url", &url]);
        let command = Cli::try_parse_from(line).unwrap().command;
        let Err(Failure::Client(error)) = execute(server, command, &mut Vec::new()).await else {
            panic!("the request was not refused");
        };
        let mut printed = Vec::new();
        print::error(&mut printed, &error).unwrap();
        String::from_utf8(printed)
            .unwrap()
            .replace(&url.replace("/mcp", ""), "http://SERVER")
    }

    #[tokio::test]
    async fn a_refusal_is_printed_with_its_challenge() {
        // With `oauth-client` (which the workspace's conformance fixture
        // turns on), a request without a token starts the OAuth flow
        // instead: its own tests cover that. A token of one's own turns
        // the flow off, so the second case holds either way.
        #[cfg(not(feature = "oauth-client"))]
        assert_eq!(
            printed_error(&["discover"]).await,
            "error: the server refused the request: HTTP 401: a bearer token is needed; \
             resource metadata at http://SERVER/.well-known/oauth-protected-resource/mcp\n  \
             hint: send a token with --header \"Authorization: Bearer TOKEN\"\n"
        );
        assert_eq!(
            printed_error(&["list", "--header", "Authorization: Bearer forged"]).await,
            "error: the server refused the request: HTTP 401 invalid_token: the token's signature is invalid; \
             resource metadata at http://SERVER/.well-known/oauth-protected-resource/mcp\n"
        );
    }

    #[test]
    fn prompt_arguments_are_sent_as_strings() {
        let sent =
            prompt_arguments(json!({"days": 4, "metric": true, "city": "Oslo", "ratio": 0.5}));
        assert_eq!(
            sent.unwrap(),
            json!({"days": "4", "metric": "true", "city": "Oslo", "ratio": "0.5"})
        );
        let Err(Failure::Usage(refused)) = prompt_arguments(json!({"days": [1, 2]})) else {
            panic!("an array is not a prompt argument");
        };
        assert_eq!(
            refused,
            r#"prompt arguments are strings, and `days` is [1,2]: did you mean "[1,2]"?"#
        );
    }
}
