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

mod answer;
mod connection;
mod print;
mod task;
mod terminal;

use std::io::Write;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use self::answer::Answerer;
use self::connection::Connection;
use crate::client::oauth::{Authorize, OAuth};
use crate::client::{Client, ClientError, Outcome, Response};
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
    oauth: OAuthOptions,
    /// Print the raw JSON results instead of a readable summary.
    #[arg(long)]
    json: bool,
}

/// How --url authorizes when the server asks for OAuth (a 401).
#[derive(Args, Debug)]
pub(crate) struct OAuthOptions {
    /// A client ID registered with the authorization server beforehand
    /// (else a Client ID Metadata Document, else dynamic registration).
    #[arg(long, value_name = "ID", requires = "url")]
    client_id: Option<String>,
    /// The secret of --client-id, for a confidential client.
    #[arg(long, value_name = "SECRET", requires = "client_id")]
    client_secret: Option<String>,
    /// The issuer --client-id is registered with: used with no other.
    #[arg(long, value_name = "URL", requires = "client_id")]
    client_issuer: Option<String>,
    /// This client's Client ID Metadata Document (an https URL), its
    /// client_id where the authorization server supports such documents.
    #[arg(long, value_name = "URL", requires = "url")]
    client_metadata_url: Option<String>,
    /// How the authorization response comes back: `browser` (open the
    /// printed URL; it returns to a loopback port) or `fetch` (the
    /// inspector requests the URL itself, for servers that approve without
    /// a person).
    #[arg(long, value_enum, default_value = "browser", requires = "url")]
    authorize: AuthorizeBy,
    /// Keep tokens and registrations in this file (owner-only) between
    /// runs, with refresh tokens.
    #[arg(long, value_name = "FILE", requires = "url")]
    token_cache: Option<std::path::PathBuf>,
}

/// `--authorize`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AuthorizeBy {
    /// In a browser.
    Browser,
    /// By requesting the authorization URL directly.
    Fetch,
}

impl OAuthOptions {
    fn settings(&self) -> OAuth {
        let mut oauth = OAuth::new("mcp-runtime inspector").authorize(match self.authorize {
            AuthorizeBy::Browser => Authorize::Browser,
            AuthorizeBy::Fetch => Authorize::Fetch,
        });
        if let Some(id) = &self.client_id {
            oauth = oauth.client(id, self.client_secret.clone(), self.client_issuer.clone());
        }
        if let Some(url) = &self.client_metadata_url {
            oauth = oauth.client_metadata_url(url);
        }
        if let Some(path) = &self.token_cache {
            oauth = oauth.token_cache(path);
        }
        oauth
    }
}

/// How questions from the server (`input_required`) are answered.
#[derive(Args, Debug)]
pub(crate) struct AskOptions {
    /// Answer from this JSON file, mapping each `inputRequests` key to its
    /// response (for example `{"confirm": {"action": "accept", "content":
    /// {"ok": true}}}`). Without it, questions are asked on the terminal.
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
    runtime.block_on(async move {
        let mut out = std::io::stdout().lock();
        let done = execute(server, command, &mut out).await;
        match done.and_then(|code| Ok(out.flush().map(|()| code)?)) {
            Ok(code) => code,
            Err(Failure::Usage(problem)) => {
                eprintln!("error: {problem}");
                ExitCode::FAILURE
            }
            Err(Failure::Client(error)) => {
                print::error(&error);
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
            let first = client.call_tool(&name, arguments).await?;
            let Some(done) = rounds(&mut client, &mut answerer, first).await? else {
                return Ok(ExitCode::from(2));
            };
            Ok(print::tool_result(out, &done, target.json)?)
        }
        Command::Read { uri, ask, target } => {
            let mut client = target.connect(server, true)?;
            let mut answerer = Answerer::new(&ask)?;
            let first = client.read_resource(&uri).await?;
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
            let first = client.get_prompt(&name, arguments).await?;
            let Some(done) = rounds(&mut client, &mut answerer, first).await? else {
                return Ok(ExitCode::from(2));
            };
            print::prompt(out, &done, target.json)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Contract(target) => {
            let mut client = target.connect(server, false)?;
            let manifest = crate::contract::manifest_of(&mut client).await?;
            write!(out, "{}", crate::contract::render(&manifest))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Everything the server offers (or only `what`), by kind.
async fn list(
    client: &mut Client<Connection>,
    what: Option<Listing>,
) -> Result<Value, ClientError> {
    let offers = client.discover().await?.capabilities;
    let wanted = |listing| what.is_none_or(|w| w == listing);
    let mut listed = json!({});
    if wanted(Listing::Tools) && offers.tools.is_some() {
        listed["tools"] = json!(client.list_tools().await?);
    }
    if offers.resources.is_some() {
        if wanted(Listing::Resources) {
            listed["resources"] = json!(client.list_resources().await?);
        }
        if wanted(Listing::Templates) {
            listed["resourceTemplates"] = json!(client.list_resource_templates().await?);
        }
    }
    if wanted(Listing::Prompts) && offers.prompts.is_some() {
        listed["prompts"] = json!(client.list_prompts().await?);
    }
    Ok(listed)
}

/// Answers rounds until the request completes; `None` if a round could not
/// be answered (it was printed).
async fn rounds<R: DeserializeOwned>(
    client: &mut Client<Connection>,
    answerer: &mut Answerer,
    mut response: Response<R>,
) -> Result<Option<R>, ClientError> {
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
async fn followed<R: DeserializeOwned>(
    client: &mut Client<Connection>,
    answerer: &mut Answerer,
    started: crate::client::Task,
) -> Result<Option<R>, ClientError> {
    match task::follow(client, answerer, started).await? {
        task::Ended::Completed(result) => serde_json::from_value(result)
            .map(Some)
            .map_err(|error| ClientError::Malformed(format!("the task's result: {error}"))),
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
        let connection = Connection::open(
            server,
            self.url.as_deref(),
            self.stdio.as_deref(),
            &self.headers,
            self.oauth.settings(),
        )?;
        let mut client = Client::new(connection);
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
    use serde_json::json;

    use super::{Failure, prompt_arguments};

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
