//! `blocking` handlers run on tokio's blocking pool: a body that blocks its
//! thread for seconds leaves the server's one worker free, so that other
//! requests (an async tool, `tools/list`) are answered at once; the
//! request's timeout still answers a blocking call that outlives it; the
//! context moves to the pool with the body; a panic there is reported as
//! any handler's panic; a synchronous handler without `blocking` that
//! holds its thread past 100 ms is logged in debug builds. Over real sockets on a current-thread runtime (one
//! worker: the test's thread), every body validated against the spec.
#![cfg(feature = "http")]

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use mcp_runtime::{
    Context, HttpOptions, Server, ServerBuilder, State, prompt, resource, run_blocking, tool,
};
use mcp_test_support::http::{self, Reply};
use mcp_test_support::{LogCapture, assert_valid, assert_valid_error, call_tool, parse, request};
use serde_json::{Value, json};

/// The thread that serves requests (the test's): a blocking body must run
/// on another.
static WORKER: OnceLock<ThreadId> = OnceLock::new();

fn off_the_worker() -> bool {
    WORKER
        .get()
        .is_some_and(|worker| *worker != std::thread::current().id())
}

/// Holds its thread for `seconds`, then answers.
#[tool(blocking)]
fn hold(seconds: u64, #[ctx] context: &Context) -> String {
    std::thread::sleep(Duration::from_secs(seconds));
    format!(
        "held {seconds} s for {}, off the worker: {}",
        context.method(),
        off_the_worker()
    )
}

/// Answers at once.
#[tool]
async fn ping() -> &'static str {
    "pong"
}

/// Holds the request thread for 150 ms: a debug build says so.
#[tool]
fn dawdle() -> &'static str {
    std::thread::sleep(Duration::from_millis(150));
    "done"
}

/// Panics on the blocking pool.
#[tool(blocking)]
fn explode_blocking() -> String {
    panic!("boom")
}

/// Panics on the worker.
#[tool]
fn explode() -> String {
    panic!("boom")
}

/// The greeting, read from the state on the blocking pool.
#[resource("blocking://greeting", mime_type = "text/plain", blocking)]
fn greeting(#[ctx] greeting: State<Greeting>) -> String {
    format!("{}, off the worker: {}", greeting.0.0, off_the_worker())
}

/// A prompt rendered on the blocking pool.
#[prompt(blocking)]
fn welcome(name: String, #[ctx] context: Context) -> String {
    format!(
        "Welcome, {name} ({}), off the worker: {}",
        context.method(),
        off_the_worker()
    )
}

#[derive(Clone)]
struct Greeting(&'static str);

fn server() -> Server {
    ServerBuilder::new("blocking-test", "1.0.0")
        .state(Greeting("hello"))
        .build()
        .unwrap()
}

/// Runs `client` against the server on a fresh loopback port, on this
/// thread's runtime, then shuts it down. Blocking bodies still running are
/// not waited for: the runtime's end waits for them.
async fn with_http<F, Fut>(options: HttpOptions, client: F)
where
    F: FnOnce(SocketAddr) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    WORKER.get_or_init(|| std::thread::current().id());
    let server = server();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serve = server.serve_http(listener, options, async {
        let _ = stopped.await;
    });
    let (served, ()) = tokio::join!(
        async { tokio::time::timeout(Duration::from_secs(20), serve).await },
        async {
            client(address).await;
            let _ = stop.send(());
        }
    );
    served
        .expect("the server drains and stops")
        .expect("no server error");
}

fn text(reply: &Reply) -> String {
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.body);
    let body = reply.json();
    assert_valid("CallToolResultResponse", &body);
    body["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// `future`'s output, which must come within `limit`.
async fn within<T>(limit: Duration, what: &str, future: impl std::future::Future<Output = T>) -> T {
    let started = Instant::now();
    let output = tokio::time::timeout(limit, future)
        .await
        .unwrap_or_else(|_| panic!("{what} did not answer within {limit:?}"));
    assert!(started.elapsed() < limit, "{what}");
    output
}

#[tokio::test]
async fn blocking_calls_leave_the_worker_free() {
    with_http(HttpOptions::new(), |address| async move {
        let holds: Vec<_> = (0..4)
            .map(|id| {
                let message = call_tool(id, "hold", json!({"seconds": 3}));
                tokio::spawn(async move { http::post(address, &message).await })
            })
            .collect();
        // The four calls are in flight, each holding a pool thread.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let limit = Duration::from_millis(500);
        let pong = within(
            limit,
            "ping",
            http::post(address, &call_tool(10, "ping", json!({}))),
        )
        .await;
        assert_eq!(text(&pong), "pong");
        let listed = within(
            limit,
            "tools/list",
            http::post(address, &request(11, "tools/list", json!({}))),
        )
        .await;
        assert_valid("ListToolsResultResponse", &listed.json());
        assert_eq!(
            listed.json()["result"]["tools"].as_array().unwrap().len(),
            5
        );
        // Both answered while the four calls were still in flight (a
        // worker held by them would have answered after them).
        assert!(holds.iter().all(|hold| !hold.is_finished()));
        for hold in holds {
            let reply = hold.await.unwrap();
            assert_eq!(
                text(&reply),
                "held 3 s for tools/call, off the worker: true"
            );
        }
    })
    .await;
}

#[tokio::test]
async fn a_blocking_call_past_the_request_timeout_is_answered_at_once() {
    let options = HttpOptions::new().request_timeout(Duration::from_millis(300));
    with_http(options, |address| async move {
        let reply = within(
            Duration::from_millis(1500),
            "the timed-out call",
            http::post(address, &call_tool(1, "hold", json!({"seconds": 3}))),
        )
        .await;
        assert_eq!(reply.status.as_u16(), 504, "{}", reply.body);
        let body = reply.json();
        assert_valid_error(&body);
        assert_eq!(
            body,
            json!({
                "jsonrpc": "2.0",
                "id": 1,
                "error": {"code": -31002, "message": "The request did not finish within 300 ms"},
            })
        );
        // The body runs on in the background; the server answers meanwhile.
        let pong = http::post(address, &call_tool(2, "ping", json!({}))).await;
        assert_eq!(text(&pong), "pong");
    })
    .await;
}

#[tokio::test]
async fn resources_and_prompts_run_on_the_pool_with_their_context() {
    WORKER.get_or_init(|| std::thread::current().id());
    let server = server();
    let read = server
        .exchange(request(
            1,
            "resources/read",
            json!({"uri": "blocking://greeting"}),
        ))
        .await;
    let read = parse(&read.response.unwrap());
    assert_valid("ReadResourceResultResponse", &read);
    assert_eq!(
        read["result"]["contents"],
        json!([{"uri": "blocking://greeting", "mimeType": "text/plain", "text": "hello, off the worker: true"}])
    );
    let got = server
        .exchange(request(
            2,
            "prompts/get",
            json!({"name": "welcome", "arguments": {"name": "Ada"}}),
        ))
        .await;
    let got = parse(&got.response.unwrap());
    assert_valid("GetPromptResultResponse", &got);
    assert_eq!(
        got["result"]["messages"][0]["content"]["text"],
        "Welcome, Ada (prompts/get), off the worker: true"
    );
}

#[tokio::test]
async fn a_panic_on_the_pool_is_reported_as_on_the_worker() {
    let server = server();
    let answer = |id: u64, name: &str| {
        let server = server.clone();
        let message = call_tool(id, name, json!({}));
        async move { parse(&server.exchange(message).await.response.unwrap()) }
    };
    let on_the_pool: Value = answer(1, "explode_blocking").await;
    let on_the_worker: Value = answer(1, "explode").await;
    assert_valid_error(&on_the_pool);
    assert_eq!(
        on_the_pool
            .to_string()
            .replace("explode_blocking", "explode"),
        on_the_worker.to_string()
    );
}

#[tokio::test]
async fn run_blocking_answers_from_the_pool() {
    WORKER.get_or_init(|| std::thread::current().id());
    let here = std::thread::current().id();
    let there = run_blocking(|| std::thread::current().id()).await;
    assert_ne!(here, there);
}

#[tokio::test]
async fn a_sync_handler_that_holds_its_thread_is_logged_in_debug_builds() {
    let server = server();
    let (logs, _guard) = LogCapture::start();
    for (id, name, arguments) in [
        (1, "dawdle", json!({})),
        (2, "hold", json!({"seconds": 0})),
        (3, "ping", json!({})),
    ] {
        let answer = server.exchange(call_tool(id, name, arguments)).await;
        assert_valid("CallToolResultResponse", &parse(&answer.response.unwrap()));
    }
    let logged = logs.text();
    let warning = "the synchronous #[tool] `dawdle` held a request thread for ";
    assert_eq!(logged.contains(warning), cfg!(debug_assertions), "{logged}");
    // Only the one: `hold` ran on the pool, `ping` is async.
    let warnings = logged
        .lines()
        .filter(|line| line.contains(" WARN "))
        .count();
    assert_eq!(warnings, usize::from(cfg!(debug_assertions)), "{logged}");
}
