//! Tasks over both transports, one server serving stdio (in-memory pipes)
//! and Streamable HTTP (loopback, with authorization) at once: a task
//! outlives the connection that created it, expires after its TTL, is
//! refused past the store's limits, is invisible to other callers, is
//! cancelled while running or waiting and acknowledged once ended, waits
//! for `tasks/update`, fails on a panic while the server serves on, and is
//! announced on `subscriptions/listen`. HTTP also checks `Mcp-Name`. Every
//! message is validated against the spec's schema and the extension's.
#![cfg(feature = "http")]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_runtime::auth::{Authorization, TokenVerifier, VerifyError, VerifyFuture};
use mcp_runtime::security::Principal;
use mcp_runtime::tasks::{InMemoryTaskStore, TaskOptions};
use mcp_runtime::{
    ElicitForm, Elicitation, HttpOptions, Input, Server, ServerBuilder, StdioOptions, tool,
};
use mcp_test_support::http::{self, EventReader};
use mcp_test_support::{assert_valid_error, assert_valid_task, meta_with, parse};
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

// ---------------------------------------------------------------------------
// Handlers

#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Confirm {
    confirm: bool,
}

/// Waits `ms` milliseconds.
#[tool(task, annotations(read_only))]
async fn wait_for(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("waited {ms} ms")
}

/// Asks for approval, then answers.
#[tool(task)]
async fn approve(#[ctx] input: Input) -> String {
    match input.elicit::<Confirm>("Approve?").await {
        Elicitation::Accepted(Confirm { confirm: true }) => "approved".into(),
        _ => "not approved".into(),
    }
}

/// Panics after a moment.
#[tool(task, annotations(read_only))]
async fn explode() -> String {
    tokio::time::sleep(Duration::from_millis(20)).await;
    panic!("boom")
}

// ---------------------------------------------------------------------------
// The server and its clients

const TASKS: &str = "io.modelcontextprotocol/tasks";
const TTL_MS: u64 = 60_000;

/// Tokens are principals' names.
struct Names;

impl TokenVerifier for Names {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(async move {
            match token {
                "alice" | "bob" => Ok(Principal::new(token)),
                _ => Err(VerifyError::Signature),
            }
        })
    }
}

/// A server with a clock the test moves, and at most `quota` tasks per
/// caller.
struct Fixture {
    server: Server,
    clock: Arc<AtomicU64>,
}

impl Fixture {
    fn new(quota: usize) -> Fixture {
        let start = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis();
        let clock = Arc::new(AtomicU64::new(u64::try_from(start).unwrap()));
        let now = clock.clone();
        let server = ServerBuilder::new("tasks-transports", "1.0.0")
            .request_state(
                mcp_runtime::RequestStateOptions::new()
                    .clock(move || UNIX_EPOCH + Duration::from_millis(now.load(Ordering::SeqCst))),
            )
            .with(
                TaskOptions::new()
                    .ttl(Duration::from_millis(TTL_MS))
                    .store(InMemoryTaskStore::new().max_per_owner(quota)),
            )
            .build()
            .unwrap();
        Fixture { server, clock }
    }

    fn advance(&self, by: Duration) {
        let millis = u64::try_from(by.as_millis()).unwrap();
        self.clock.fetch_add(millis, Ordering::SeqCst);
    }

    /// Serves HTTP with authorization on a free port, in its own thread.
    fn http(&self) -> SocketAddr {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let options = HttpOptions::new().authorization(
            Authorization::new(format!("http://{address}/mcp"))
                .authorization_server("https://auth.example.com")
                .verifier(Names),
        );
        listener.set_nonblocking(true).unwrap();
        let server = self.server.clone();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let serving = server.serve_http(listener, options, std::future::pending());
                serving.await.unwrap();
            });
        });
        address
    }

    /// A new stdio connection, served in its own thread until its input
    /// ends.
    fn stdio(&self) -> Stdio {
        let (client, server_end) = tokio::io::duplex(1 << 16);
        let server = self.server.clone();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let (read, write) = tokio::io::split(server_end);
            runtime
                .block_on(server.serve_streams(StdioOptions::new(), read, write))
                .unwrap();
        });
        let (read, write) = tokio::io::split(client);
        Stdio {
            input: write,
            output: BufReader::new(read).lines(),
            next_id: 0,
        }
    }
}

/// One stdio connection.
struct Stdio {
    input: WriteHalf<DuplexStream>,
    output: Lines<BufReader<ReadHalf<DuplexStream>>>,
    next_id: i64,
}

impl Stdio {
    async fn send(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let message = message(self.next_id, method, params);
        self.input.write_all(message.as_bytes()).await.unwrap();
        self.input.write_all(b"\n").await.unwrap();
        self.next_id
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(5), self.output.next_line())
            .await
            .expect("a message within 5 s")
            .unwrap()
            .expect("the server still writes");
        parse(&line)
    }

    /// Sends a request and returns its response (skipping notifications).
    async fn rpc(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params).await;
        loop {
            let message = self.next().await;
            if message["id"] == id {
                return message;
            }
        }
    }

    /// Ends the connection (end of input).
    async fn close(mut self) {
        self.input.shutdown().await.unwrap();
    }
}

/// A request with the extension (and form elicitation) declared.
fn message(id: i64, method: &str, mut params: Value) -> String {
    if params.get("_meta").is_none() {
        params["_meta"] =
            meta_with(json!({"elicitation": {"form": {}}, "extensions": {TASKS: {}}}));
    }
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// Where a test's requests go.
enum Client<'a> {
    Stdio(&'a mut Stdio),
    Http {
        address: SocketAddr,
        token: &'static str,
    },
}

impl Client<'_> {
    async fn rpc(&mut self, method: &str, params: Value) -> Value {
        let response = match self {
            Client::Stdio(stdio) => stdio.rpc(method, params).await,
            Client::Http { address, token } => {
                let message = message(7, method, params);
                let mut headers = http::mcp_headers(&message);
                headers.push(("authorization".into(), format!("Bearer {token}")));
                let reply = http::request(*address, "POST", "/mcp", &headers, message).await;
                reply.json()
            }
        };
        if response.get("error").is_some() {
            assert_valid_error(&response);
        }
        response
    }

    async fn create(&mut self, tool: &str, arguments: Value) -> String {
        let response = self
            .rpc("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        assert_valid_task("CreateTaskResult", &response["result"]);
        response["result"]["taskId"].as_str().unwrap().to_owned()
    }

    async fn get(&mut self, id: &str) -> Value {
        let response = self.rpc("tasks/get", json!({"taskId": id})).await;
        if response.get("result").is_some() {
            assert_valid_task("GetTaskResult", &response["result"]);
        }
        response
    }

    async fn until(&mut self, id: &str, status: &str) -> Value {
        for _ in 0..500 {
            let task = self.get(id).await["result"].clone();
            let now = task["status"].as_str().unwrap_or_default().to_owned();
            if now == status || ["completed", "failed", "cancelled"].contains(&now.as_str()) {
                return task;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("task {id} never reached {status}");
    }
}

fn assert_not_found(response: &Value) {
    assert_eq!(response["error"]["code"], -32602, "{response}");
    assert_eq!(
        response["error"]["message"],
        "Failed to retrieve task: Task not found"
    );
}

// ---------------------------------------------------------------------------
// Scenarios, each run on both transports

/// Creates a task, cancels one running and one waiting for input (each
/// settles to cancelled), acknowledges a cancel of an ended task, answers
/// an ask with `tasks/update`, and survives a panicking task.
async fn lifecycle(client: &mut Client<'_>) {
    let running = client.create("wait_for", json!({"ms": 60_000})).await;
    let waiting = client.create("approve", json!({})).await;
    assert_eq!(
        client.until(&waiting, "input_required").await["status"],
        "input_required"
    );
    for id in [&running, &waiting] {
        let ack = client.rpc("tasks/cancel", json!({"taskId": id})).await;
        assert_eq!(ack["result"]["resultType"], "complete");
        assert_eq!(client.until(id, "cancelled").await["status"], "cancelled");
        let again = client.rpc("tasks/cancel", json!({"taskId": id})).await;
        assert_eq!(again["result"]["resultType"], "complete", "idempotent");
    }

    let asking = client.create("approve", json!({})).await;
    let task = client.until(&asking, "input_required").await;
    let key = task["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let answer = json!({key: {"action": "accept", "content": {"confirm": true}}});
    let ack = client
        .rpc(
            "tasks/update",
            json!({"taskId": asking, "inputResponses": answer}),
        )
        .await;
    assert_eq!(ack["result"]["resultType"], "complete");
    let done = client.until(&asking, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "approved");

    let exploding = client.create("explode", json!({})).await;
    let failed = client.until(&exploding, "failed").await;
    assert_eq!(failed["error"]["code"], -32603);
    let after = client.create("wait_for", json!({"ms": 1})).await;
    assert_eq!(
        client.until(&after, "completed").await["status"],
        "completed"
    );
}

/// A task is kept for its TTL, then forgotten; the store refuses a caller's
/// fourth running task, and room comes back as soon as one finishes
/// (finished tasks do not block new work).
async fn ttl_and_limits(fixture: &Fixture, client: &mut Client<'_>) {
    let ids = [
        client.create("wait_for", json!({"ms": 60_000})).await,
        client.create("wait_for", json!({"ms": 60_000})).await,
        client.create("wait_for", json!({"ms": 60_000})).await,
    ];
    let refused = client
        .rpc(
            "tools/call",
            json!({"name": "wait_for", "arguments": {"ms": 1}}),
        )
        .await;
    assert_eq!(refused["error"]["code"], -31000, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("this caller has 3 running tasks"),
        "{refused}"
    );
    client.rpc("tasks/cancel", json!({"taskId": ids[0]})).await;
    assert_eq!(
        client.until(&ids[0], "cancelled").await["status"],
        "cancelled"
    );
    let quick = client.create("wait_for", json!({"ms": 1})).await;
    assert_eq!(
        client.until(&quick, "completed").await["status"],
        "completed"
    );
    // Finished, it makes room at once.
    let again = client.create("wait_for", json!({"ms": 1})).await;
    fixture.advance(Duration::from_millis(TTL_MS - 1));
    assert_eq!(client.get(&quick).await["result"]["status"], "completed");
    fixture.advance(Duration::from_millis(1));
    assert_not_found(&client.get(&quick).await);
    assert_not_found(&client.get(&again).await);
    for id in &ids[1..] {
        client.rpc("tasks/cancel", json!({"taskId": id})).await;
    }
    fixture.advance(Duration::from_millis(TTL_MS));
}

#[tokio::test]
async fn stdio_runs_the_whole_lifecycle() {
    let fixture = Fixture::new(100);
    let mut stdio = fixture.stdio();
    lifecycle(&mut Client::Stdio(&mut stdio)).await;
    stdio.close().await;
}

#[tokio::test]
async fn http_runs_the_whole_lifecycle() {
    let fixture = Fixture::new(100);
    let address = fixture.http();
    lifecycle(&mut Client::Http {
        address,
        token: "alice",
    })
    .await;
}

#[tokio::test]
async fn stdio_tasks_expire_and_are_bounded() {
    let fixture = Fixture::new(3);
    let mut stdio = fixture.stdio();
    ttl_and_limits(&fixture, &mut Client::Stdio(&mut stdio)).await;
}

#[tokio::test]
async fn http_tasks_expire_and_are_bounded() {
    let fixture = Fixture::new(3);
    let address = fixture.http();
    ttl_and_limits(
        &fixture,
        &mut Client::Http {
            address,
            token: "alice",
        },
    )
    .await;
}

#[tokio::test]
async fn a_task_outlives_the_connection_that_created_it() {
    let fixture = Fixture::new(100);
    let mut first = fixture.stdio();
    let id = Client::Stdio(&mut first)
        .create("wait_for", json!({"ms": 300}))
        .await;
    first.close().await;
    let mut second = fixture.stdio();
    let done = Client::Stdio(&mut second).until(&id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "waited 300 ms");

    // Over HTTP every request may come on a new connection.
    let address = fixture.http();
    let id = Client::Http {
        address,
        token: "alice",
    }
    .create("wait_for", json!({"ms": 300}))
    .await;
    let done = Client::Http {
        address,
        token: "alice",
    }
    .until(&id, "completed")
    .await;
    assert_eq!(done["status"], "completed");
}

#[tokio::test]
async fn another_caller_cannot_see_or_steer_a_task() {
    let fixture = Fixture::new(100);
    let address = fixture.http();
    let mut stdio = fixture.stdio();
    let alice_task = Client::Http {
        address,
        token: "alice",
    }
    .create("approve", json!({}))
    .await;
    let stdio_task = Client::Stdio(&mut stdio).create("approve", json!({})).await;
    let answer = json!({"x": {"action": "accept", "content": {"confirm": true}}});
    for (mut client, id) in [
        (
            Client::Http {
                address,
                token: "bob",
            },
            alice_task.as_str(),
        ),
        (Client::Stdio(&mut stdio), alice_task.as_str()),
        (
            Client::Http {
                address,
                token: "bob",
            },
            stdio_task.as_str(),
        ),
    ] {
        assert_not_found(&client.get(id).await);
        let update = json!({"taskId": id, "inputResponses": answer});
        assert_not_found(&client.rpc("tasks/update", update).await);
        assert_not_found(&client.rpc("tasks/cancel", json!({"taskId": id})).await);
    }
    let mut alice = Client::Http {
        address,
        token: "alice",
    };
    assert_eq!(
        alice.until(&alice_task, "input_required").await["status"],
        "input_required"
    );
    alice
        .rpc("tasks/cancel", json!({"taskId": alice_task}))
        .await;
    let mut local = Client::Stdio(&mut stdio);
    assert_eq!(
        local.until(&stdio_task, "input_required").await["status"],
        "input_required"
    );
    local
        .rpc("tasks/cancel", json!({"taskId": stdio_task}))
        .await;
}

#[tokio::test]
async fn http_needs_mcp_name_to_carry_the_task_id() {
    let fixture = Fixture::new(100);
    let address = fixture.http();
    let id = Client::Http {
        address,
        token: "alice",
    }
    .create("wait_for", json!({"ms": 1}))
    .await;
    let message = message(3, "tasks/get", json!({"taskId": id}));
    for name in [Some("someone-else"), None] {
        let overrides = [("mcp-name", name), ("authorization", Some("Bearer alice"))];
        let reply = http::post_with(address, &message, &overrides).await;
        assert_eq!(reply.status, 400, "{}", reply.body);
        assert_eq!(reply.json()["error"]["code"], -32020);
    }
    let reply = http::post_with(
        address,
        &message,
        &[("authorization", Some("Bearer alice"))],
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

#[tokio::test]
async fn listeners_receive_their_tasks_status() {
    let fixture = Fixture::new(100);
    // stdio: the acknowledgement names the task, then its status as it is
    // now follows, then each change.
    let mut stdio = fixture.stdio();
    let id = Client::Stdio(&mut stdio).create("approve", json!({})).await;
    // Its worker has asked (else the status that follows the
    // acknowledgement is `working`, as it is for a moment under load).
    Client::Stdio(&mut stdio).until(&id, "input_required").await;
    let listen = json!({"notifications": {"taskIds": [id, "not-a-task"]}});
    stdio.send("subscriptions/listen", listen).await;
    let ack = stdio.next().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]));
    let status = stdio.next().await;
    assert_eq!(status["method"], "notifications/tasks", "{status}");
    assert_valid_task("TaskStatusNotification", &status);
    assert_eq!(status["params"]["taskId"], id.as_str());
    assert_eq!(status["params"]["status"], "input_required");
    assert!(status["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].is_number());
    let key = status["params"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let answer = json!({key: {"action": "accept", "content": {"confirm": true}}});
    let update = json!({"taskId": id, "inputResponses": answer});
    let mut statuses = Vec::new();
    stdio.send("tasks/update", update).await;
    while statuses.last().map(String::as_str) != Some("completed") {
        let message = stdio.next().await;
        if message["method"] == "notifications/tasks" {
            assert_valid_task("TaskStatusNotification", &message);
            statuses.push(message["params"]["status"].as_str().unwrap().to_owned());
        }
    }
    assert_eq!(statuses, ["working", "completed"]);

    // HTTP: the listen stream is an SSE response.
    let address = fixture.http();
    let id = Client::Http {
        address,
        token: "alice",
    }
    .create("wait_for", json!({"ms": 200}))
    .await;
    let message = message(
        9,
        "subscriptions/listen",
        json!({"notifications": {"taskIds": [id]}}),
    );
    let mut headers = http::mcp_headers(&message);
    headers.push(("authorization".into(), "Bearer alice".into()));
    let response = http::send(address, "POST", "/mcp", &headers, message).await;
    let mut events = EventReader::new(response);
    let ack = events.next().await.unwrap();
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]));
    let now = events.next().await.unwrap();
    assert_valid_task("TaskStatusNotification", &now);
    assert_eq!(now["params"]["status"], "working");
    let status = events.next().await.unwrap();
    assert_valid_task("TaskStatusNotification", &status);
    assert_eq!(status["params"]["status"], "completed");
    assert_eq!(
        status["params"]["result"]["content"][0]["text"],
        "waited 200 ms"
    );
}

#[tokio::test]
async fn listening_for_tasks_needs_the_extension() {
    let fixture = Fixture::new(100);
    let mut stdio = fixture.stdio();
    let params = json!({"notifications": {"taskIds": ["x"]}, "_meta": meta_with(json!({}))});
    let response = stdio.rpc("subscriptions/listen", params).await;
    assert_valid_error(&response);
    assert_eq!(response["error"]["code"], -32021);
    assert_eq!(
        response["error"]["data"]["requiredCapabilities"],
        json!({"extensions": {TASKS: {}}})
    );
}
