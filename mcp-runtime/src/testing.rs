//! Testing a server from its own test suite: [`TestClient`] drives the
//! registered tools, resources and prompts through the real dispatcher, in
//! process, and reads like the test it is in.
//!
//! ```rust,standalone_crate
//! use mcp_runtime::testing::TestClient;
//! use serde_json::json;
//!
//! /// Adds two numbers.
//! #[mcp_runtime::tool]
//! fn add(a: i64, b: i64) -> String {
//!     (a + b).to_string()
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let mut client = TestClient::new();
//! client.call_tool("add", json!({"a": 2, "b": 40})).await.assert_text("42");
//! # }
//! ```
//!
//! Requests that ask for input can be answered round by round (asserting
//! each round's questions), or by callbacks registered with
//! [`on_elicit`](TestClient::on_elicit), [`on_sample`](TestClient::on_sample)
//! and [`on_roots`](TestClient::on_roots).
//!
//! Every method panics with a readable message when the server answers
//! something else than the test expects: that is the failure report.

use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::client::{
    Answers, AuthorizationError, Client, ClientError, Discovery, ElicitationRequest, InProcess,
    InputRequest, InputRequired, Notifications, Outcome, Response, SamplingAsk, Task, Transport,
};
use crate::protocol::{
    CallToolResult, Completion, Content, ErrorObject, GetPromptResult, LogLevel, Prompt,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Tool,
};
use crate::security::Principal;
use crate::server::{Server, ServerBuilder};

/// What an elicitation callback answers.
#[derive(Clone, Debug, PartialEq)]
pub enum Elicited {
    /// Submit the form with these fields (an empty object for URL mode).
    Accept(Value),
    /// Decline.
    Decline,
    /// Dismiss.
    Cancel,
}

type ElicitFn = Box<dyn FnMut(&ElicitationRequest) -> Elicited>;
type SampleFn = Box<dyn FnMut(&SamplingAsk) -> String>;

/// A client for tests. See the [module docs](self). In process by
/// default; with the `http` feature, `HttpTestServer::client` gives one
/// over real HTTP.
pub struct TestClient<T = InProcess> {
    client: Client<T>,
    on_elicit: Option<ElicitFn>,
    on_sample: Option<SampleFn>,
    roots: Option<Vec<(String, Option<String>)>>,
}

impl<T: Debug> Debug for TestClient<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestClient")
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

impl Default for TestClient {
    fn default() -> Self {
        TestClient::new()
    }
}

impl TestClient {
    /// A client for a server of every handler linked into the test binary,
    /// with default settings.
    ///
    /// # Panics
    ///
    /// If the registry does not build (for example, two tools share a name).
    pub fn new() -> Self {
        let server = ServerBuilder::new("test-server", "0.0.0")
            .build()
            .unwrap_or_else(|error| panic!("the server does not build: {error}"));
        TestClient::with_server(server)
    }

    /// A client for `server`.
    pub fn with_server(server: Server) -> Self {
        let tracer = server.client_tracer().cloned();
        let mut client = TestClient::with_transport(InProcess::new(server));
        if let Some(tracer) = tracer {
            client.client.set_tracer(tracer);
        }
        client
    }

    /// The server under test.
    pub fn server(&self) -> &Server {
        self.client.transport().server()
    }

    /// Sends every request on behalf of `principal`, as if the server's
    /// authorization had verified a token for it: scoped tools, resources
    /// and prompts check its scopes (a missing one is the JSON-RPC error
    /// `-31003` `insufficient_scope`, naming every scope needed in
    /// `data.requiredScopes`), and handlers read it from their context.
    /// In process there is no token and no HTTP status: for the `401` and
    /// `403` with their `WWW-Authenticate` challenges, test over HTTP with
    /// `testing::serve_http` (feature `http`). Scopes implied by others
    /// ([`scope_implies`](crate::auth::Authorization::scope_implies)) are
    /// expanded by the HTTP gate, so give the principal every scope it
    /// would be granted.
    #[must_use]
    pub fn as_principal(self, principal: Principal) -> Self {
        let server = self.server().clone();
        let client = Client::new(InProcess::new(server).as_principal(principal));
        TestClient { client, ..self }
    }
}

impl<T: Transport> TestClient<T> {
    /// A client speaking through `transport`.
    pub fn with_transport(transport: T) -> Self {
        TestClient {
            client: Client::new(transport),
            on_elicit: None,
            on_sample: None,
            roots: None,
        }
    }

    /// The underlying protocol client.
    pub fn client(&mut self) -> &mut Client<T> {
        &mut self.client
    }

    /// Declares form elicitation support.
    #[must_use]
    pub fn elicitation(self) -> Self {
        self.capability("elicitation", json!({"form": {}}))
    }

    /// Declares form and URL elicitation support.
    #[must_use]
    pub fn elicitation_with_url(self) -> Self {
        self.capability("elicitation", json!({"form": {}, "url": {}}))
    }

    /// Declares sampling support.
    #[must_use]
    pub fn sampling(self) -> Self {
        self.capability("sampling", json!({}))
    }

    /// Declares roots support.
    #[must_use]
    pub fn roots(self) -> Self {
        self.capability("roots", json!({}))
    }

    /// Declares any client capability.
    #[must_use]
    pub fn capability(mut self, name: &str, settings: Value) -> Self {
        self.client.set_capability(name, settings);
        self
    }

    /// Sends `clientInfo`.
    #[must_use]
    pub fn client_info(mut self, name: &str, version: &str) -> Self {
        self.client.set_client_info(name, version);
        self
    }

    /// Asks for log messages at `level` and above.
    #[must_use]
    pub fn log_level(mut self, level: LogLevel) -> Self {
        self.client.set_log_level(Some(level));
        self
    }

    /// Sends a progress token with each request.
    #[must_use]
    pub fn progress(mut self) -> Self {
        self.client.set_progress(true);
        self
    }

    /// Answers elicitations with `answer` in
    /// [`call_tool_answering`](Self::call_tool_answering) and friends, and
    /// declares elicitation support.
    #[must_use]
    pub fn on_elicit(
        mut self,
        answer: impl FnMut(&ElicitationRequest) -> Elicited + 'static,
    ) -> Self {
        self.on_elicit = Some(Box::new(answer));
        self.elicitation_with_url()
    }

    /// Answers sampling requests with the text `answer` returns, and
    /// declares sampling support.
    #[must_use]
    pub fn on_sample(mut self, answer: impl FnMut(&SamplingAsk) -> String + 'static) -> Self {
        self.on_sample = Some(Box::new(answer));
        self.sampling()
    }

    /// Answers roots requests with `(uri, name)` pairs, and declares roots
    /// support.
    #[must_use]
    pub fn on_roots<'a>(
        mut self,
        roots: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
    ) -> Self {
        let roots = roots
            .into_iter()
            .map(|(uri, name)| (uri.to_owned(), name.map(str::to_owned)))
            .collect();
        self.roots = Some(roots);
        self.roots()
    }

    /// `server/discover`.
    pub async fn discover(&mut self) -> Discovery {
        expect(self.client.discover().await, "server/discover")
    }

    /// Every tool, across pages.
    pub async fn list_tools(&mut self) -> Vec<Tool> {
        expect(self.client.list_tools().await, "tools/list")
    }

    /// Every resource, across pages.
    pub async fn list_resources(&mut self) -> Vec<Resource> {
        expect(self.client.list_resources().await, "resources/list")
    }

    /// Every resource template, across pages.
    pub async fn list_resource_templates(&mut self) -> Vec<ResourceTemplate> {
        expect(
            self.client.list_resource_templates().await,
            "resources/templates/list",
        )
    }

    /// Every prompt, across pages.
    pub async fn list_prompts(&mut self) -> Vec<Prompt> {
        expect(self.client.list_prompts().await, "prompts/list")
    }

    /// `tools/call`: one round.
    pub async fn call_tool(&mut self, name: &str, arguments: Value) -> Called<CallToolResult> {
        Called::new(
            format!("tools/call {name}"),
            self.client.call_tool(name, arguments).await,
        )
    }

    /// `resources/read`: one round.
    pub async fn read_resource(&mut self, uri: &str) -> Called<ReadResourceResult> {
        Called::new(
            format!("resources/read {uri}"),
            self.client.read_resource(uri).await,
        )
    }

    /// `prompts/get`: one round. `arguments` is an object of strings.
    pub async fn get_prompt(&mut self, name: &str, arguments: Value) -> Called<GetPromptResult> {
        Called::new(
            format!("prompts/get {name}"),
            self.client.get_prompt(name, arguments).await,
        )
    }

    /// `completion/complete` of a prompt argument.
    pub async fn complete_prompt_argument(
        &mut self,
        prompt: &str,
        argument: &str,
        value: &str,
    ) -> Completion {
        let reference = json!({"type": "ref/prompt", "name": prompt});
        expect(
            self.client
                .complete(reference, argument, value, json!({}))
                .await,
            "completion/complete",
        )
    }

    /// `completion/complete` of a resource template variable.
    pub async fn complete_template_variable(
        &mut self,
        template: &str,
        variable: &str,
        value: &str,
    ) -> Completion {
        let reference = json!({"type": "ref/resource", "uri": template});
        expect(
            self.client
                .complete(reference, variable, value, json!({}))
                .await,
            "completion/complete",
        )
    }

    /// The next round of a request that returned `input_required`.
    pub async fn answer<R: DeserializeOwned + Debug>(
        &mut self,
        round: &InputRequired<R>,
        answers: Answers,
    ) -> Called<R> {
        let what = format!("{} (retry)", round.method);
        Called::new(what, self.client.retry(round, answers).await)
    }

    /// `tools/call`, answering every round with the registered callbacks
    /// until the call completes or fails.
    ///
    /// # Panics
    ///
    /// If a round asks something no callback answers, or the flow takes
    /// more than 32 rounds.
    pub async fn call_tool_answering(
        &mut self,
        name: &str,
        arguments: Value,
    ) -> Called<CallToolResult> {
        let first = self.call_tool(name, arguments).await;
        self.answer_rounds(first).await
    }

    /// `resources/read`, answering every round with the callbacks.
    pub async fn read_resource_answering(&mut self, uri: &str) -> Called<ReadResourceResult> {
        let first = self.read_resource(uri).await;
        self.answer_rounds(first).await
    }

    /// `prompts/get`, answering every round with the callbacks.
    pub async fn get_prompt_answering(
        &mut self,
        name: &str,
        arguments: Value,
    ) -> Called<GetPromptResult> {
        let first = self.get_prompt(name, arguments).await;
        self.answer_rounds(first).await
    }

    async fn answer_rounds<R: DeserializeOwned + Debug>(
        &mut self,
        mut called: Called<R>,
    ) -> Called<R> {
        for round in 1..=32 {
            let Ok(Response {
                outcome: Outcome::InputRequired(required),
                ..
            }) = &called.result
            else {
                called.rounds = round;
                return called;
            };
            let answers = self.answers_for(required);
            let required = required.clone();
            called = self.answer(&required, answers).await;
        }
        panic!("{}: still asking for input after 32 rounds", called.what)
    }

    fn answers_for<R>(&mut self, round: &InputRequired<R>) -> Answers {
        self.answers_to(&round.requests)
    }

    fn answers_to(&mut self, requests: &[(String, InputRequest)]) -> Answers {
        let mut answers = Answers::new();
        for (key, request) in requests {
            answers = match request {
                InputRequest::Elicitation(elicitation) => {
                    let answer = self.on_elicit.as_mut().unwrap_or_else(|| {
                        panic!("the server asks `{key}` by elicitation ({:?}), but no `on_elicit` callback is set", elicitation.message)
                    });
                    match answer(elicitation) {
                        Elicited::Accept(_) if elicitation.mode == "url" => answers.accept_url(key),
                        Elicited::Accept(content) => answers.accept(key, content),
                        Elicited::Decline => answers.decline(key),
                        Elicited::Cancel => answers.cancel(key),
                    }
                }
                InputRequest::Sampling(sampling) => {
                    let answer = self.on_sample.as_mut().unwrap_or_else(|| {
                        panic!("the server asks `{key}` by sampling ({:?}), but no `on_sample` callback is set", sampling.prompt())
                    });
                    let text = answer(sampling);
                    answers.sample(key, "test-model", &text)
                }
                InputRequest::Roots => {
                    let roots = self.roots.as_ref().unwrap_or_else(|| {
                        panic!("the server asks `{key}` for roots, but no `on_roots` answer is set")
                    });
                    answers.roots(
                        key,
                        roots
                            .iter()
                            .map(|(uri, name)| (uri.as_str(), name.as_deref())),
                    )
                }
            };
        }
        answers
    }
}

/// Tasks (the Tasks extension): following what `tools/call` created.
impl<T: Transport> TestClient<T> {
    /// Declares the Tasks extension: task tools answer `tools/call` with a
    /// task ([`Called::task`]).
    #[must_use]
    pub fn tasks(mut self) -> Self {
        self.client.declare_tasks();
        self
    }

    /// `tasks/get`.
    ///
    /// # Panics
    ///
    /// If the server answers with an error.
    pub async fn get_task(&mut self, id: &str) -> Task {
        expect(self.client.get_task(id).await, "tasks/get")
    }

    /// `tasks/update`: answers to the task's questions.
    ///
    /// # Panics
    ///
    /// If the server answers with an error.
    pub async fn answer_task(&mut self, id: &str, answers: Answers) {
        expect(self.client.update_task(id, answers).await, "tasks/update");
    }

    /// `tasks/cancel`.
    ///
    /// # Panics
    ///
    /// If the server answers with an error.
    pub async fn cancel_task(&mut self, id: &str) {
        expect(self.client.cancel_task(id).await, "tasks/cancel");
    }

    /// Polls the task until it ends or waits for input, and returns it.
    ///
    /// # Panics
    ///
    /// If it does neither within 30 seconds.
    pub async fn wait_for_task(&mut self, id: &str) -> Task {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let task = self.get_task(id).await;
            if task.is_terminal() || !task.input_requests.is_empty() {
                return task;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "task {id} still {:?} after 30 s",
                task.status
            );
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    /// Follows the task to its end, answering its questions with the
    /// registered callbacks: the result as a completed call (a `completed`
    /// task) or a JSON-RPC error (a `failed` one).
    ///
    /// # Panics
    ///
    /// If it is cancelled, or asks what no callback answers.
    pub async fn finish_task(&mut self, id: &str) -> Called<CallToolResult> {
        let what = format!("task {id}");
        loop {
            let task = self.wait_for_task(id).await;
            if !task.is_terminal() {
                let answers = self.answers_to(&task.input_requests);
                self.answer_task(id, answers).await;
                continue;
            }
            let result = match (task.result, task.error) {
                (Some(result), _) => serde_json::from_value(result)
                    .map(|result| Response {
                        outcome: Outcome::Complete(result),
                        notifications: Notifications::default(),
                    })
                    .map_err(|e| ClientError::Malformed(e.to_string())),
                (None, Some(error)) => Err(ClientError::Rpc(error)),
                (None, None) => panic!(
                    "{what}: expected it to complete or fail, it was {:?}",
                    task.status
                ),
            };
            return Called::new(what, result);
        }
    }
}

/// Why a server in a test may have nothing to serve.
const NOT_LINKED: &str = "is anything registered? Handlers defined in a library crate are only linked into the test if the test names that crate, for example `use my_server as _;`";

fn expect<T>(result: Result<T, ClientError>, what: &str) -> T {
    result.unwrap_or_else(|error| match error {
        ClientError::Rpc(error) if error.code == crate::protocol::error_code::METHOD_NOT_FOUND => {
            panic!("{what} failed: {} ({NOT_LINKED})", error.message)
        }
        error => panic!("{what} failed: {error}"),
    })
}

/// The answer to one request that can ask for input, with assertions.
#[derive(Debug)]
#[must_use = "a call's result should be checked"]
pub struct Called<R> {
    what: String,
    result: Result<Response<R>, ClientError>,
    rounds: usize,
}

impl<R: Debug> Called<R> {
    fn new(what: String, result: Result<Response<R>, ClientError>) -> Self {
        Called {
            what,
            result,
            rounds: 1,
        }
    }

    fn describe(&self) -> String {
        match &self.result {
            Ok(Response {
                outcome: Outcome::Complete(result),
                ..
            }) => format!("a complete result: {result:?}"),
            Ok(Response {
                outcome: Outcome::InputRequired(round),
                ..
            }) => format!("input_required asking {:?}", round.keys()),
            Ok(Response {
                outcome: Outcome::Task(task),
                ..
            }) => format!("a task ({}, {:?})", task.id, task.status),
            Err(ClientError::Rpc(error))
                if error.code == crate::protocol::error_code::METHOD_NOT_FOUND =>
            {
                format!("an error: {} ({NOT_LINKED})", error.message)
            }
            Err(error) => format!("an error: {error}"),
        }
    }

    /// The completed result.
    ///
    /// # Panics
    ///
    /// If the request failed or asks for input.
    #[track_caller]
    pub fn complete(self) -> R {
        match self.result {
            Ok(Response {
                outcome: Outcome::Complete(result),
                ..
            }) => result,
            _ => panic!(
                "{}: expected a complete result, got {}",
                self.what,
                self.describe()
            ),
        }
    }

    /// The round of questions.
    ///
    /// # Panics
    ///
    /// If the request did not return `input_required`.
    #[track_caller]
    pub fn input_required(self) -> InputRequired<R> {
        match self.result {
            Ok(Response {
                outcome: Outcome::InputRequired(round),
                ..
            }) => round,
            _ => panic!(
                "{}: expected input_required, got {}",
                self.what,
                self.describe()
            ),
        }
    }

    /// The task the server created (a client that declared the Tasks
    /// extension, calling a task tool).
    ///
    /// # Panics
    ///
    /// If the request did not create a task.
    #[track_caller]
    pub fn task(self) -> Task {
        match self.result {
            Ok(Response {
                outcome: Outcome::Task(task),
                ..
            }) => task,
            _ => panic!("{}: expected a task, got {}", self.what, self.describe()),
        }
    }

    /// The JSON-RPC error.
    ///
    /// # Panics
    ///
    /// If the request did not fail with a JSON-RPC error.
    #[track_caller]
    pub fn error(self) -> ErrorObject {
        match self.result {
            Err(ClientError::Rpc(error)) => error,
            _ => panic!(
                "{}: expected a JSON-RPC error, got {}",
                self.what,
                self.describe()
            ),
        }
    }

    /// The server's refusal to authorize the request: over HTTP, a `401`
    /// or `403` with its `WWW-Authenticate` challenge, which answers
    /// before any JSON-RPC response.
    ///
    /// # Panics
    ///
    /// If the request was not refused authorization.
    #[track_caller]
    pub fn refusal(self) -> AuthorizationError {
        match self.result {
            Err(ClientError::Authorization(refusal)) => refusal,
            _ => panic!(
                "{}: expected a refusal to authorize (HTTP 401 or 403), got {}",
                self.what,
                self.describe()
            ),
        }
    }

    /// Asserts a JSON-RPC error with `code`, returning its message.
    #[track_caller]
    pub fn assert_error_code(self, code: i32) -> String {
        let error = self.error();
        assert_eq!(error.code, code, "unexpected error: {}", error.message);
        error.message.into_owned()
    }

    /// Progress and log notifications sent with the final response.
    pub fn notifications(&self) -> Notifications {
        match &self.result {
            Ok(response) => response.notifications.clone(),
            Err(_) => Notifications::default(),
        }
    }

    /// How many requests it took (1 without `input_required`).
    pub fn rounds(&self) -> usize {
        self.rounds
    }
}

impl Called<CallToolResult> {
    /// The text of the result's text blocks, joined; panics on anything but
    /// a complete result.
    #[track_caller]
    pub fn text(self) -> String {
        self.complete().text()
    }

    /// Asserts a successful result whose text is `expected`.
    #[track_caller]
    pub fn assert_text(self, expected: &str) {
        let what = self.what.clone();
        let result = self.complete();
        assert!(
            !result.is_error,
            "{what}: expected success, got a tool error: {}",
            result.text()
        );
        assert_eq!(result.text(), expected, "{what}: unexpected text");
    }

    /// Asserts a tool execution error (`isError: true`) whose text contains
    /// `expected`.
    #[track_caller]
    pub fn assert_tool_error(self, expected: &str) {
        let what = self.what.clone();
        let result = self.complete();
        assert!(
            result.is_error,
            "{what}: expected a tool error, got success: {}",
            result.text()
        );
        let text = result.text();
        assert!(
            text.contains(expected),
            "{what}: tool error {text:?} does not contain {expected:?}"
        );
    }

    /// The `structuredContent`, typed.
    ///
    /// # Panics
    ///
    /// If there is none, or it does not deserialize as `T`.
    #[track_caller]
    pub fn structured<T: DeserializeOwned>(self) -> T {
        // `let ... else` and `match` rather than `unwrap_or_else`: a panic
        // in a closure would be reported in this file, not at the caller.
        let what = self.what.clone();
        let Some(value) = self.complete().structured_content else {
            panic!("{what}: the result has no structuredContent");
        };
        match serde_json::from_value(value) {
            Ok(value) => value,
            Err(e) => panic!("{what}: structuredContent does not fit: {e}"),
        }
    }

    /// The content blocks.
    #[track_caller]
    pub fn content(self) -> Vec<Content> {
        self.complete().content
    }
}

impl Called<ReadResourceResult> {
    /// The text of the first text contents; panics if there is none.
    #[track_caller]
    pub fn text(self) -> String {
        let what = self.what.clone();
        let text = self
            .complete()
            .contents
            .into_iter()
            .find_map(|contents| match contents {
                ResourceContents::Text(text) => Some(text.text),
                _ => None,
            });
        let Some(text) = text else {
            panic!("{what}: no text contents");
        };
        text
    }
}

impl Called<GetPromptResult> {
    /// The text of every text message, in order.
    #[track_caller]
    pub fn texts(self) -> Vec<String> {
        self.complete()
            .messages
            .into_iter()
            .filter_map(|message| match message.content {
                Content::Text(text) => Some(text.text),
                _ => None,
            })
            .collect()
    }
}

impl<R> InputRequired<R> {
    /// The elicitation under `key`.
    ///
    /// # Panics
    ///
    /// If there is no such request or it is not an elicitation.
    #[track_caller]
    pub fn elicitation(&self, key: &str) -> &ElicitationRequest {
        match self.request(key) {
            Some(InputRequest::Elicitation(elicitation)) => elicitation,
            other => panic!(
                "expected an elicitation under `{key}`, found {other:?} (keys: {:?})",
                self.keys()
            ),
        }
    }

    /// The sampling request under `key`.
    ///
    /// # Panics
    ///
    /// If there is no such request or it is not a sampling request.
    #[track_caller]
    pub fn sampling(&self, key: &str) -> &SamplingAsk {
        match self.request(key) {
            Some(InputRequest::Sampling(sampling)) => sampling,
            other => panic!(
                "expected a sampling request under `{key}`, found {other:?} (keys: {:?})",
                self.keys()
            ),
        }
    }
}

#[cfg(feature = "http")]
#[path = "testing_http.rs"]
mod http;
#[cfg(feature = "http")]
pub use self::http::{HttpTestServer, serve_http};
