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

use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use self::answer::Answerer;
use self::connection::Connection;
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
    /// Extra HTTP header for --url, as "Name: value" (repeatable).
    #[arg(long = "header", value_name = "HEADER", requires = "url")]
    headers: Vec<String>,
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
        match execute(server, command).await {
            Ok(code) => code,
            Err(error) => {
                print::error(&error);
                ExitCode::FAILURE
            }
        }
    })
}

async fn execute(server: Server, command: Command) -> Result<ExitCode, ClientError> {
    match command {
        Command::Discover(target) => {
            let mut client = target.connect(server, false)?;
            let (result, _) = client.request("server/discover", json!({})).await?;
            let discovery = client.discover().await?;
            print::discovery(&discovery, &result, target.json);
            Ok(ExitCode::SUCCESS)
        }
        Command::List { what, target } => list(server, what, &target).await,
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
            Ok(print::tool_result(&done, target.json))
        }
        Command::Read { uri, ask, target } => {
            let mut client = target.connect(server, true)?;
            let mut answerer = Answerer::new(&ask)?;
            let first = client.read_resource(&uri).await?;
            let Some(done) = rounds(&mut client, &mut answerer, first).await? else {
                return Ok(ExitCode::from(2));
            };
            print::resource(&done, target.json);
            Ok(ExitCode::SUCCESS)
        }
        Command::Prompt {
            name,
            arguments,
            ask,
            target,
        } => {
            let arguments = parse_arguments(arguments.as_deref())?;
            let mut client = target.connect(server, true)?;
            let mut answerer = Answerer::new(&ask)?;
            let first = client.get_prompt(&name, arguments).await?;
            let Some(done) = rounds(&mut client, &mut answerer, first).await? else {
                return Ok(ExitCode::from(2));
            };
            print::prompt(&done, target.json);
            Ok(ExitCode::SUCCESS)
        }
        Command::Contract(target) => {
            let mut client = target.connect(server, false)?;
            let manifest = crate::contract::manifest_of(&mut client).await?;
            print!("{}", crate::contract::render(&manifest));
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `list`: everything the server offers, or one kind.
async fn list(
    server: Server,
    what: Option<Listing>,
    target: &Target,
) -> Result<ExitCode, ClientError> {
    let mut client = target.connect(server, false)?;
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
    print::listing(&listed, target.json);
    Ok(ExitCode::SUCCESS)
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

fn parse_arguments(text: Option<&str>) -> Result<Value, ClientError> {
    let Some(text) = text else {
        return Ok(json!({}));
    };
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(ClientError::Malformed(
            "the arguments must be a JSON object, like '{\"a\": 1}'".into(),
        )),
        Err(error) => Err(ClientError::Malformed(format!(
            "the arguments are not JSON: {error}"
        ))),
    }
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
