//! A client for revision 2026-07-28, over any [`Transport`]: the engine of
//! the [test client](crate::testing) and of the inspector built into every
//! server binary. It builds each request's `_meta`, follows list cursors,
//! and carries multi round-trip requests from round to round.
//!
//! A [`Client`] speaks to a server through a [`Transport`]: [`InProcess`]
//! (a [`Server`](crate::Server) of this process, through the dispatcher
//! the transports use), [`ChildProcess`] (a server binary on its stdio),
//! or, with the `http` feature, [`Remote`] (a Streamable HTTP endpoint).
//! Requests that can ask for input or become a task come back as a
//! [`Response`] whose [`Outcome`] says which.
//!
//! ```rust,standalone_crate
//! use mcp_runtime::ServerBuilder;
//! use mcp_runtime::client::{Client, InProcess, Outcome};
//! use serde_json::json;
//!
//! /// Adds two numbers.
//! #[mcp_runtime::tool]
//! fn add(a: i64, b: i64) -> String {
//!     (a + b).to_string()
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = ServerBuilder::new("calculator", "1.0.0").build()?;
//! let mut client = Client::new(InProcess::new(server));
//! client.set_client_info("example-client", "0.1.0");
//!
//! let discovery = client.discover().await?;
//! assert!(discovery.server_info.is_some_and(|info| info.name == "calculator"));
//!
//! let tools = client.list_tools().await?;
//! assert!(tools.iter().any(|tool| tool.name == "add"));
//!
//! let response = client.call_tool("add", json!({"a": 2, "b": 40})).await?;
//! match response.outcome {
//!     Outcome::Complete(result) => assert_eq!(result.text(), "42"),
//!     Outcome::InputRequired(_) | Outcome::Task(_) => unreachable!("`add` asks nothing"),
//! }
//! # Ok(())
//! # }
//! ```
//!
//! A server elsewhere is reached the same way: `Client::new(Remote::new(
//! "http://127.0.0.1:8080/mcp")?)`, or
//! `Client::new(ChildProcess::spawn_command_line("my-server")?)`.

mod authorization;
#[cfg(feature = "http")]
mod card;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "oauth-client")]
#[cfg_attr(docsrs, doc(cfg(feature = "oauth-client")))]
pub mod oauth;
mod outcome;
mod stdio;
mod task;
mod transport;
#[cfg(feature = "http")]
mod web;

use serde::Deserialize as _;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

pub use self::authorization::{AuthorizationError, BearerChallenge};
#[cfg(feature = "http")]
pub use self::card::fetch_server_card;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use self::http::Remote;
pub use self::outcome::{
    Answers, ElicitationRequest, InputRequest, InputRequired, LogEntry, Notifications, Outcome,
    ProgressUpdate, Response, SampledMessage, SamplingAsk,
};
pub use self::stdio::ChildProcess;
pub use self::task::Task;
pub use self::transport::{InProcess, Reply, Transport, TransportError};
pub use crate::diagnostics::{ClientTracer, SharedTracer, TracedRequest};
use crate::protocol::{
    CallToolResult, Completion, ErrorObject, GetPromptResult, Implementation, LogLevel,
    PROTOCOL_VERSION, Prompt, ReadResourceResult, Resource, ResourceTemplate, ServerCapabilities,
    Tool,
};

/// Why a request failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// The request never got a response.
    Transport(TransportError),
    /// The server answered with a JSON-RPC error.
    Rpc(ErrorObject),
    /// The server's answer does not have the shape the spec gives it.
    Malformed(String),
    /// The server refused to authorize the request (HTTP `401` or `403`),
    /// saying why in its `WWW-Authenticate` challenge: no token, a token it
    /// does not accept, or one without the scopes the request needs.
    Authorization(AuthorizationError),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Transport(error) => write!(f, "{error}"),
            ClientError::Rpc(error) => write!(f, "error {}: {}", error.code, error.message),
            ClientError::Malformed(problem) => write!(f, "malformed response: {problem}"),
            ClientError::Authorization(refusal) => write!(f, "{refusal}"),
        }
    }
}

impl std::error::Error for ClientError {}

impl From<TransportError> for ClientError {
    fn from(mut error: TransportError) -> Self {
        match error.refusal.take() {
            Some(refusal) => ClientError::Authorization(*refusal),
            None => ClientError::Transport(error),
        }
    }
}

/// What `server/discover` says about a server.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Discovery {
    /// Protocol revisions it speaks.
    pub supported_versions: Vec<String>,
    /// What it offers.
    pub capabilities: ServerCapabilities,
    /// How to use it, for the model.
    #[serde(default)]
    pub instructions: Option<String>,
    /// Who it is (`_meta` `io.modelcontextprotocol/serverInfo`).
    #[serde(skip)]
    pub server_info: Option<Implementation>,
}

/// A client for one server.
#[derive(Debug)]
pub struct Client<T> {
    transport: T,
    capabilities: Map<String, Value>,
    client_info: Option<Value>,
    log_level: Option<LogLevel>,
    progress: bool,
    next_id: u64,
    tracer: Option<Traced>,
}

/// The tracer a client was given (a newtype: a tracer need not be `Debug`).
#[derive(Clone)]
struct Traced(SharedTracer);

impl std::fmt::Debug for Traced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tracer")
    }
}

impl<T: Transport> Client<T> {
    /// A client that declares no capabilities.
    pub fn new(transport: T) -> Self {
        Client {
            transport,
            capabilities: Map::new(),
            client_info: None,
            log_level: None,
            progress: false,
            next_id: 1,
            tracer: None,
        }
    }

    /// Traces every request with `tracer` (see [`ClientTracer`]).
    pub fn set_tracer(&mut self, tracer: SharedTracer) {
        self.tracer = Some(Traced(tracer));
    }

    /// The tracer given to [`set_tracer`](Self::set_tracer), if any.
    pub fn tracer(&self) -> Option<&SharedTracer> {
        self.tracer.as_ref().map(|traced| &traced.0)
    }

    /// The transport.
    pub fn transport(&self) -> &T {
        &self.transport
    }

    /// Declares a client capability (`elicitation`, `sampling`, `roots`,
    /// ...) with its settings object.
    pub fn set_capability(&mut self, name: &str, settings: Value) {
        self.capabilities.insert(name.to_owned(), settings);
    }

    /// Stops declaring a capability.
    pub fn remove_capability(&mut self, name: &str) {
        self.capabilities.remove(name);
    }

    /// Sends `clientInfo` with every request.
    pub fn set_client_info(&mut self, name: &str, version: &str) {
        self.client_info = Some(json!({"name": name, "version": version}));
    }

    /// Asks for `notifications/message` at `level` and above.
    pub fn set_log_level(&mut self, level: Option<LogLevel>) {
        self.log_level = level;
    }

    /// Sends a progress token with every request.
    pub fn set_progress(&mut self, progress: bool) {
        self.progress = progress;
    }

    fn meta(&self, id: u64) -> Value {
        let mut meta = json!({
            "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
            "io.modelcontextprotocol/clientCapabilities": self.capabilities,
        });
        if let Some(info) = &self.client_info {
            meta["io.modelcontextprotocol/clientInfo"] = info.clone();
        }
        if let Some(level) = self.log_level {
            meta["io.modelcontextprotocol/logLevel"] = json!(level);
        }
        if self.progress {
            meta["progressToken"] = json!(format!("progress-{id}"));
        }
        meta
    }

    /// Sends one request; `params` gets this client's `_meta`. Returns the
    /// result object, or the JSON-RPC error as [`ClientError::Rpc`].
    ///
    /// A request refused with `-32022` (unsupported protocol version) by a
    /// server that lists this client's version as supported is sent once
    /// more, as a new request: behind a load balancer, an instance of an
    /// older release may have answered.
    pub async fn request(
        &mut self,
        method: &str,
        params: Value,
    ) -> Result<(Value, Notifications), ClientError> {
        match self.send_once(method, params.clone()).await {
            Err(ClientError::Rpc(error)) if speaks_our_version(&error) => {
                self.send_once(method, params).await
            }
            other => other,
        }
    }

    async fn send_once(
        &mut self,
        method: &str,
        params: Value,
    ) -> Result<(Value, Notifications), ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let mut params = match params {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(ClientError::Malformed(format!(
                    "params must be an object, not {other}"
                )));
            }
        };
        let traced = (self.tracer.as_ref()).map(|tracer| tracer.0.start(method, &params, id));
        let mut meta = self.meta(id);
        if let (Some(traced), Some(meta)) = (&traced, meta.as_object_mut()) {
            traced.inject(meta);
        }
        params.insert("_meta".into(), meta);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let sent = self.transport.send(id, message.to_string());
        // In the request's span only when traced: an untraced client's
        // future stays as it was.
        let reply = match &traced {
            Some(traced) => tracing::Instrument::instrument(sent, traced.span().clone()).await?,
            None => sent.await?,
        };
        let notifications = Notifications {
            all: reply.notifications,
        };
        let mut response = reply.response;
        let error = match response.get_mut("error") {
            Some(error) => Some(ErrorObject::deserialize_from(error.take())?),
            None => None,
        };
        if let Some(traced) = traced {
            traced.finish(error.as_ref());
        }
        if let Some(error) = error {
            return Err(ClientError::Rpc(error));
        }
        match response.get_mut("result") {
            Some(result) => Ok((result.take(), notifications)),
            None => Err(ClientError::Malformed(
                "a response with neither result nor error".into(),
            )),
        }
    }

    /// `server/discover`.
    pub async fn discover(&mut self) -> Result<Discovery, ClientError> {
        let (result, _) = self.request("server/discover", json!({})).await?;
        let mut discovery: Discovery = parse(&result)?;
        discovery.server_info = result
            .pointer("/_meta/io.modelcontextprotocol~1serverInfo")
            .and_then(|info| Implementation::deserialize(info).ok());
        Ok(discovery)
    }

    /// Every item of one kind, every page, as JSON: the paging is not
    /// generic over the item type, so that code listing every kind (the
    /// inspector, the contract) holds one copy of it. Over HTTP, tools
    /// whose `x-mcp-header` annotations break the spec's rules are left
    /// out, with a warning (the spec: "clients MUST reject tool definitions
    /// where any `x-mcp-header` value violates these constraints").
    pub(crate) async fn list_json(&mut self, kind: ListKind) -> Result<Vec<Value>, ClientError> {
        let (method, field) = kind.method_and_field();
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        // A server that keeps returning cursors is cut off rather than
        // followed forever.
        for _ in 0..10_000 {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let (mut result, _) = self.request(method, params).await?;
            match result[field].take() {
                Value::Array(page) => items.extend(page),
                other => {
                    return Err(ClientError::Malformed(format!(
                        "{method}: `{field}` is not an array: {other}"
                    )));
                }
            }
            if let Some(next) = result.get("nextCursor").and_then(Value::as_str) {
                cursor = Some(next.to_owned());
                continue;
            }
            if kind == ListKind::Tools && self.transport.mirrors_tool_headers() {
                items.retain(valid_tool);
            }
            return Ok(items);
        }
        Err(ClientError::Malformed(format!(
            "{method} never stopped paginating"
        )))
    }

    /// `tools/list`, every page. Over HTTP, tools whose `x-mcp-header`
    /// annotations break the spec's rules are left out, with a warning
    /// (the spec: "clients MUST reject tool definitions where any
    /// `x-mcp-header` value violates these constraints").
    pub async fn list_tools(&mut self) -> Result<Vec<Tool>, ClientError> {
        parse(&Value::Array(self.list_json(ListKind::Tools).await?))
    }

    /// `resources/list`, every page.
    pub async fn list_resources(&mut self) -> Result<Vec<Resource>, ClientError> {
        parse(&Value::Array(self.list_json(ListKind::Resources).await?))
    }

    /// `resources/templates/list`, every page.
    pub async fn list_resource_templates(&mut self) -> Result<Vec<ResourceTemplate>, ClientError> {
        parse(&Value::Array(self.list_json(ListKind::Templates).await?))
    }

    /// `prompts/list`, every page.
    pub async fn list_prompts(&mut self) -> Result<Vec<Prompt>, ClientError> {
        parse(&Value::Array(self.list_json(ListKind::Prompts).await?))
    }

    /// `tools/call`.
    pub async fn call_tool(
        &mut self,
        name: &str,
        arguments: Value,
    ) -> Result<Response<CallToolResult>, ClientError> {
        self.ask("tools/call", json!({"name": name, "arguments": arguments}))
            .await
    }

    /// `resources/read`.
    pub async fn read_resource(
        &mut self,
        uri: &str,
    ) -> Result<Response<ReadResourceResult>, ClientError> {
        self.ask("resources/read", json!({"uri": uri})).await
    }

    /// `prompts/get`; `arguments` is an object of strings.
    pub async fn get_prompt(
        &mut self,
        name: &str,
        arguments: Value,
    ) -> Result<Response<GetPromptResult>, ClientError> {
        self.ask("prompts/get", json!({"name": name, "arguments": arguments}))
            .await
    }

    /// A request that may ask questions or become a task (`tools/call`,
    /// `resources/read`, `prompts/get`), its result left as JSON: for code
    /// that handles all three alike (the inspector), one copy of it.
    #[cfg(feature = "cli")]
    pub(crate) async fn ask_json(
        &mut self,
        method: &'static str,
        params: Value,
    ) -> Result<Response<Value>, ClientError> {
        self.ask(method, params).await
    }

    /// `completion/complete` for a prompt argument (`ref/prompt`) or a
    /// template variable (`ref/resource`, `reference` is the template).
    pub async fn complete(
        &mut self,
        reference: Value,
        argument: &str,
        value: &str,
        resolved: Value,
    ) -> Result<Completion, ClientError> {
        let mut params = json!({"ref": reference, "argument": {"name": argument, "value": value}});
        if resolved.as_object().is_some_and(|r| !r.is_empty()) {
            params["context"] = json!({"arguments": resolved});
        }
        let (result, _) = self.request("completion/complete", params).await?;
        parse(&result["completion"])
    }

    /// Retries a request that returned `input_required`, with `answers`
    /// and the state it was given.
    pub async fn retry<R: DeserializeOwned>(
        &mut self,
        round: &InputRequired<R>,
        answers: Answers,
    ) -> Result<Response<R>, ClientError> {
        let mut params = round.params.clone();
        if !answers.is_empty() {
            params["inputResponses"] = Value::Object(answers.responses);
        }
        if let Some(state) = &round.state {
            params["requestState"] = json!(state);
        }
        self.send_ask(round.method, round.params.clone(), params)
            .await
    }

    async fn ask<R: DeserializeOwned>(
        &mut self,
        method: &'static str,
        params: Value,
    ) -> Result<Response<R>, ClientError> {
        self.send_ask(method, params.clone(), params).await
    }

    async fn send_ask<R: DeserializeOwned>(
        &mut self,
        method: &'static str,
        original: Value,
        params: Value,
    ) -> Result<Response<R>, ClientError> {
        let (result, notifications) = self.request(method, params).await?;
        let outcome = match result["resultType"].as_str() {
            Some("input_required") => Outcome::InputRequired(
                InputRequired::read(method, original, &result).map_err(ClientError::Malformed)?,
            ),
            Some("task") => Outcome::Task(Task::read(&result).map_err(ClientError::Malformed)?),
            _ => Outcome::Complete(parse(&result)?),
        };
        Ok(Response {
            outcome,
            notifications,
        })
    }
}

/// What a list method lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ListKind {
    Tools,
    Resources,
    Templates,
    Prompts,
    /// `skills/list` (the Skills extension), for the contract and the
    /// skills client.
    Skills,
}

impl ListKind {
    /// The method, and the result's member holding the items.
    fn method_and_field(self) -> (&'static str, &'static str) {
        match self {
            ListKind::Tools => ("tools/list", "tools"),
            ListKind::Resources => ("resources/list", "resources"),
            ListKind::Templates => ("resources/templates/list", "resourceTemplates"),
            ListKind::Prompts => ("prompts/list", "prompts"),
            ListKind::Skills => ("skills/list", "skills"),
        }
    }
}

/// Whether a listed tool's `x-mcp-header` annotations keep the spec's
/// rules (a tool without an object `inputSchema` is left for the typed
/// reader to refuse).
fn valid_tool(tool: &Value) -> bool {
    let Some(schema) = tool.get("inputSchema").and_then(Value::as_object) else {
        return true;
    };
    match crate::schema::header_params(schema) {
        Ok(_) => true,
        Err(error) => {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
            tracing::warn!(tool = ?name, %error, "left out of tools/list: the tool's definition is invalid");
            false
        }
    }
}

/// A `-32022` whose `data.supported` lists the version this client speaks.
fn speaks_our_version(error: &ErrorObject) -> bool {
    error.code == crate::protocol::error_code::UNSUPPORTED_PROTOCOL_VERSION
        && error
            .data
            .as_ref()
            .and_then(|data| data["supported"].as_array())
            .is_some_and(|supported| supported.iter().any(|v| v == PROTOCOL_VERSION))
}

fn parse<T: DeserializeOwned>(value: &Value) -> Result<T, ClientError> {
    T::deserialize(value).map_err(|e| ClientError::Malformed(e.to_string()))
}

impl ErrorObject {
    fn deserialize_from(value: Value) -> Result<ErrorObject, ClientError> {
        ErrorObject::deserialize(&value)
            .map_err(|e| ClientError::Malformed(format!("not an error object: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{Client, Reply, Transport, TransportError};

    /// A server that answers from a script, recording what it was sent.
    struct Scripted {
        answers: Vec<Value>,
        sent: Vec<Value>,
        over_http: bool,
    }

    impl Transport for Scripted {
        async fn send(&mut self, _id: u64, message: String) -> Result<Reply, TransportError> {
            self.sent.push(serde_json::from_str(&message).unwrap());
            Ok(Reply {
                response: self.answers.remove(0),
                notifications: Vec::new(),
            })
        }

        fn mirrors_tool_headers(&self) -> bool {
            self.over_http
        }
    }

    fn tool(name: &str, region: Value) -> Value {
        json!({"name": name, "inputSchema": {"type": "object", "properties": {"region": region}}})
    }

    fn block_on<F: Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn over_http_tools_with_invalid_header_annotations_are_left_out() {
        let tools = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
            tool("valid", json!({"type": "string", "x-mcp-header": "Region"})),
            tool("empty", json!({"type": "string", "x-mcp-header": ""})),
            tool("number", json!({"type": "number", "x-mcp-header": "Region"})),
            tool("spaced", json!({"type": "string", "x-mcp-header": "My Region"})),
            {"name": "nested", "inputSchema": {"type": "object", "properties": {
                "list": {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}}
            }}},
        ]}});
        for (over_http, expected) in [
            (true, vec!["valid"]),
            (false, vec!["valid", "empty", "number", "spaced", "nested"]),
        ] {
            let mut client = Client::new(Scripted {
                answers: vec![tools.clone()],
                sent: Vec::new(),
                over_http,
            });
            let listed = block_on(client.list_tools()).unwrap();
            let names: Vec<&str> = listed.iter().map(|t| t.name.as_str()).collect();
            assert_eq!(names, expected);
        }
    }

    #[test]
    fn a_version_refusal_that_lists_our_version_is_retried_once_as_a_new_request() {
        let refusal = |id| {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32022, "message": "Unsupported protocol version",
                "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"}}})
        };
        let mut client = Client::new(Scripted {
            answers: vec![
                refusal(1),
                json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}),
            ],
            sent: Vec::new(),
            over_http: false,
        });
        assert!(block_on(client.list_tools()).unwrap().is_empty());
        let ids: Vec<&Value> = client.transport.sent.iter().map(|m| &m["id"]).collect();
        assert_eq!(ids, [&json!(1), &json!(2)]);

        // Refused twice, or by a server that does not speak our version:
        // the error is the caller's.
        let mut client = Client::new(Scripted {
            answers: vec![refusal(1), refusal(2)],
            sent: Vec::new(),
            over_http: false,
        });
        let error = block_on(client.list_tools()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "error -32022: Unsupported protocol version"
        );
        assert_eq!(client.transport.sent.len(), 2);
        let other = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "no",
            "data": {"supported": ["2030-01-01"]}}});
        let mut client = Client::new(Scripted {
            answers: vec![other],
            sent: Vec::new(),
            over_http: false,
        });
        assert!(block_on(client.list_tools()).is_err());
        assert_eq!(client.transport.sent.len(), 1);
    }
}
