//! The Streamable HTTP transport over real sockets on loopback: every status
//! code, SSE ordering, cancellation on disconnect, DNS-rebinding defences,
//! limits, header validation and subscriptions. Every JSON body is
//! validated against the spec's `schema.json`.
#![cfg(feature = "http")]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_runtime::{Context, HttpOptions, Progress, Server, ServerBuilder, tool};
use mcp_test_support::http::{self, EventReader, Overrides, Reply, mcp_headers, post_with};
use mcp_test_support::{assert_valid, assert_valid_error, call_tool, meta, request};
use serde_json::{Value, json};

static CANCELLED: AtomicUsize = AtomicUsize::new(0);

/// Echoes.
#[tool]
fn echo(text: String) -> String {
    text
}

/// Sleeps, reporting progress first; counts cancellations.
#[tool]
async fn slow(millis: u64, #[ctx] ctx: Context, #[ctx] progress: Progress) -> String {
    let watcher = ctx.clone();
    tokio::task::spawn_local(async move {
        watcher.cancelled().await;
        CANCELLED.fetch_add(1, Ordering::SeqCst);
    });
    progress.report(0.0);
    tokio::time::sleep(Duration::from_millis(millis)).await;
    format!("slept {millis}")
}

/// Reports progress three times, then answers.
#[tool]
async fn steps(#[ctx] progress: Progress) -> &'static str {
    for step in 0..3 {
        progress.report_total(f64::from(step), 2.0);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    "done"
}

fn server() -> Server {
    ServerBuilder::new("http-test", "1.0.0")
        .list_changed()
        .build()
        .unwrap()
}

/// Runs `client` against a server on a fresh loopback port, then shuts the
/// server down and waits for it to drain.
async fn with_http<F, Fut>(options: HttpOptions, client: F)
where
    F: FnOnce(SocketAddr, Server) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    serve_until_stopped(options, |address, server, stop| async move {
        client(address, server).await;
        let _ = stop.send(());
    })
    .await;
}

/// Runs `client` against a server on a fresh loopback port and waits for
/// the server to drain; the client starts the shutdown with `stop` when it
/// chooses (dropping it counts).
async fn serve_until_stopped<F, Fut>(options: HttpOptions, client: F)
where
    F: FnOnce(SocketAddr, Server, tokio::sync::oneshot::Sender<()>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let server = server();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serve = server.serve_http(listener, options, async {
        let _ = stopped.await;
    });
    let (served, ()) = tokio::join!(
        async { tokio::time::timeout(Duration::from_secs(20), serve).await },
        client(address, server.clone(), stop)
    );
    served
        .expect("the server drains and stops")
        .expect("no server error");
}

fn assert_json_error(reply: &Reply, status: u16, code: i64) -> Value {
    assert_eq!(reply.status.as_u16(), status, "{}", reply.body);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let body = reply.json();
    assert_valid_error(&body);
    assert_eq!(body["error"]["code"], code, "{body}");
    body
}

#[tokio::test]
async fn json_results_and_status_codes() {
    with_http(HttpOptions::new(), |address, _| async move {
        let reply = http::post(address, &call_tool(1, "echo", json!({"text": "hi"}))).await;
        assert_eq!(reply.status.as_u16(), 200);
        assert_eq!(reply.header("content-type"), Some("application/json"));
        assert_valid("CallToolResultResponse", &reply.json());
        assert_eq!(reply.json()["result"]["content"][0]["text"], "hi");
        assert!(reply.header("mcp-session-id").is_none());

        // A notification is accepted with 202 and no body.
        let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}).to_string();
        let reply = http::request(address, "POST", "/mcp", &mcp_headers(&note), note.clone()).await;
        assert_eq!(reply.status.as_u16(), 202);
        assert!(reply.body.is_empty());

        // Malformed JSON: 400, -32700, no id.
        let reply = post_with(address, "{oops", &[]).await;
        let body = assert_json_error(&reply, 400, -32700);
        assert!(body.get("id").is_none());

        // Missing _meta: 400, -32602, the id echoed.
        let bare = json!({"jsonrpc": "2.0", "id": 101, "method": "server/discover", "params": {}}).to_string();
        let reply = post_with(address, &bare, &[("mcp-protocol-version", Some("2026-07-28"))]).await;
        assert_eq!(assert_json_error(&reply, 400, -32602)["id"], 101);

        // Unsupported version in header and body: 400, -32022.
        let mut old = json!({"jsonrpc": "2.0", "id": 301, "method": "server/discover", "params": {"_meta": meta()}});
        old["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
        let reply = post_with(address, &old.to_string(), &[]).await;
        let body = assert_json_error(&reply, 400, -32022);
        assert_eq!(body["error"]["data"]["requested"], "v999.0.0");

        // Unknown and removed methods: 404, -32601.
        for method in ["unknown/method", "initialize", "ping", "logging/setLevel", "resources/subscribe"] {
            let reply = http::post(address, &request(500, method, json!({}))).await;
            assert_json_error(&reply, 404, -32601);
        }

        // Batches are invalid requests: 400, -32600.
        let reply = post_with(address, "[]", &[]).await;
        assert_json_error(&reply, 400, -32600);

        // Unknown tool: 400, -32602.
        let reply = http::post(address, &call_tool(2, "nope", json!({}))).await;
        assert_json_error(&reply, 400, -32602);
    })
    .await;
}

#[tokio::test]
async fn http_level_rejections() {
    let options = HttpOptions::new().max_body_size(1024);
    with_http(options, |address, _| async move {
        let message = call_tool(1, "echo", json!({"text": "hi"}));
        for method in ["GET", "DELETE", "PUT"] {
            let reply = http::request(address, method, "/mcp", &mcp_headers(&message), "").await;
            assert_eq!(reply.status.as_u16(), 405, "{method}");
            assert_eq!(reply.header("allow"), Some("POST"));
        }
        let reply = http::request(
            address,
            "POST",
            "/other",
            &mcp_headers(&message),
            message.clone(),
        )
        .await;
        assert_eq!(reply.status.as_u16(), 404);

        let reply = post_with(address, &message, &[("content-type", Some("text/plain"))]).await;
        assert_eq!(reply.status.as_u16(), 415);
        let reply = post_with(address, &message, &[("content-type", None)]).await;
        assert_eq!(reply.status.as_u16(), 415);

        let reply = post_with(address, &message, &[("accept", Some("text/html"))]).await;
        assert_eq!(reply.status.as_u16(), 406);
        // A missing Accept means JSON.
        let reply = post_with(address, &message, &[("accept", None)]).await;
        assert_eq!(reply.status.as_u16(), 200);
        assert_eq!(reply.header("content-type"), Some("application/json"));

        // Over the body limit: 413, whether the length is declared or not.
        let big = call_tool(3, "echo", json!({"text": "x".repeat(2000)}));
        let reply = post_with(address, &big, &[]).await;
        assert_eq!(reply.status.as_u16(), 413);
        assert_valid_error(&reply.json());

        // Session and resumption headers of older revisions are ignored.
        let reply = post_with(
            address,
            &message,
            &[
                ("mcp-session-id", Some("abc")),
                ("last-event-id", Some("7")),
            ],
        )
        .await;
        assert_eq!(reply.status.as_u16(), 200);
        assert!(reply.header("mcp-session-id").is_none());
    })
    .await;
}

#[tokio::test]
async fn dns_rebinding_is_refused_before_anything_runs() {
    let options = HttpOptions::new().allow_origin("https://app.example.com");
    with_http(options, |address, _| async move {
        let message = request(1, "server/discover", json!({}));
        let reply = post_with(
            address,
            &message,
            &[
                ("host", Some("evil.example.com")),
                ("origin", Some("http://evil.example.com")),
            ],
        )
        .await;
        assert_eq!(reply.status.as_u16(), 403);
        assert_valid_error(&reply.json());
        let reply = post_with(
            address,
            &message,
            &[("origin", Some("http://evil.example.com"))],
        )
        .await;
        assert_eq!(reply.status.as_u16(), 403);
        let reply = post_with(address, &message, &[("host", Some("evil.example.com"))]).await;
        assert_eq!(reply.status.as_u16(), 403);

        let host = address.to_string();
        let local_origin = format!("http://{host}");
        for (host, origin) in [
            (host.as_str(), Some(local_origin.as_str())),
            (
                &format!("localhost:{}", address.port()),
                Some("http://localhost:5173"),
            ),
            (host.as_str(), Some("https://app.example.com")),
            (host.as_str(), None),
        ] {
            let reply = post_with(
                address,
                &message,
                &[("host", Some(host)), ("origin", origin)],
            )
            .await;
            assert_eq!(reply.status.as_u16(), 200, "{host} {origin:?}");
        }
    })
    .await;
}

#[tokio::test]
async fn progress_streams_as_sse_before_the_result() {
    with_http(HttpOptions::new(), |address, _| async move {
        let mut params = json!({"name": "steps", "arguments": {}, "_meta": meta()});
        params["_meta"]["progressToken"] = json!("progress-test-1");
        let message = request(7, "tools/call", params);
        let reply = http::post(address, &message).await;
        assert_eq!(reply.status.as_u16(), 200);
        assert_eq!(reply.header("content-type"), Some("text/event-stream"));
        assert_eq!(reply.header("x-accel-buffering"), Some("no"));
        let events = reply.events();
        assert_eq!(events.len(), 4, "{}", reply.body);
        for (step, event) in events[..3].iter().enumerate() {
            mcp_test_support::assert_valid_notification(event);
            assert_eq!(event["params"]["progress"], step);
            assert_eq!(event["params"]["progressToken"], "progress-test-1");
        }
        assert_valid("CallToolResultResponse", &events[3]);
        assert_eq!(events[3]["result"]["content"][0]["text"], "done");

        // A client that accepts only JSON gets JSON, without notifications.
        let reply = post_with(address, &message, &[("accept", Some("application/json"))]).await;
        assert_eq!(reply.header("content-type"), Some("application/json"));
        assert_eq!(reply.json()["result"]["content"][0]["text"], "done");

        // Without a progress token nothing streams.
        let reply = http::post(address, &call_tool(8, "steps", json!({}))).await;
        assert_eq!(reply.header("content-type"), Some("application/json"));
    })
    .await;
}

#[tokio::test]
async fn closing_the_stream_cancels_the_request() {
    with_http(HttpOptions::new(), |address, _| async move {
        let before = CANCELLED.load(Ordering::SeqCst);
        let mut params = json!({"name": "slow", "arguments": {"millis": 5000}, "_meta": meta()});
        params["_meta"]["progressToken"] = json!(1);
        let message = request(9, "tools/call", params);
        let response = http::send(
            address,
            "POST",
            "/mcp",
            &mcp_headers(&message),
            message.clone(),
        )
        .await;
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        let mut events = EventReader::new(response);
        assert_eq!(
            events.next().await.unwrap()["method"],
            "notifications/progress"
        );
        drop(events);
        for _ in 0..100 {
            if CANCELLED.load(Ordering::SeqCst) > before {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the handler was not cancelled when the client closed the stream");
    })
    .await;
}

#[tokio::test]
async fn slow_requests_time_out() {
    let options = HttpOptions::new().request_timeout(Duration::from_millis(100));
    with_http(options, |address, _| async move {
        let reply = http::post(address, &call_tool(4, "slow", json!({"millis": 2000}))).await;
        let body = assert_json_error(&reply, 504, -31002);
        assert_eq!(body["id"], 4);
        assert_eq!(
            body["error"]["message"],
            "The request did not finish within 100 ms"
        );
    })
    .await;
}

#[tokio::test]
async fn a_head_sent_too_slowly_closes_the_connection_and_the_server_serves_on() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let options = HttpOptions::new().header_timeout(Duration::from_millis(300));
    with_http(options, |address, _| async move {
        // Half a head, then nothing: the server must hang up on its own.
        let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
        stream
            .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: app")
            .await
            .unwrap();
        let started = std::time::Instant::now();
        let mut buffer = Vec::new();
        // Closed, or reset: either way the read ends.
        let _closed =
            tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut buffer))
                .await
                .expect("the server closes a connection whose head never completes");
        assert!(
            started.elapsed() >= Duration::from_millis(250),
            "closed before the timeout: {:?}",
            started.elapsed()
        );
        // An idle keep-alive connection is closed the same way.
        let mut idle = tokio::net::TcpStream::connect(address).await.unwrap();
        let mut byte = [0u8; 1];
        let read = tokio::time::timeout(Duration::from_secs(10), idle.read(&mut byte)).await;
        assert!(
            matches!(read, Ok(Ok(0) | Err(_))),
            "idle connection still open"
        );
        // Nothing else is affected, and the limit is on waiting for a
        // request, not on running one: a call longer than it completes.
        let reply = http::post(address, &request(5, "tools/list", json!({}))).await;
        assert_eq!(reply.status.as_u16(), 200, "{}", reply.body);
        let slow = http::post(address, &call_tool(6, "slow", json!({"millis": 900}))).await;
        assert_eq!(slow.status.as_u16(), 200, "{}", slow.body);
        assert!(slow.body.contains("slept 900"), "{}", slow.body);
    })
    .await;
}

#[tokio::test]
async fn concurrency_and_rate_limits() {
    let options = HttpOptions::new().max_in_flight(1).rate_limit(0.5, 3);
    with_http(options, |address, _| async move {
        let slow = call_tool(1, "slow", json!({"millis": 300}));
        let echo = call_tool(2, "echo", json!({"text": "x"}));
        let (first, second) = tokio::join!(http::post(address, &slow), async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            http::post(address, &echo).await
        });
        assert_eq!(first.status.as_u16(), 200);
        assert_json_error(&second, 503, -31001);
        assert_eq!(second.header("retry-after"), Some("1"));

        // The refused call spent no token: two more calls fit the burst.
        assert_eq!(http::post(address, &echo).await.status.as_u16(), 200);
        assert_eq!(http::post(address, &echo).await.status.as_u16(), 200);
        let limited = http::post(address, &echo).await;
        assert_eq!(assert_json_error(&limited, 429, -31000)["id"], 2);
        assert_eq!(limited.header("retry-after"), Some("2"));
        // Only tool calls are rate limited.
        let discover = http::post(address, &request(3, "server/discover", json!({}))).await;
        assert_eq!(discover.status.as_u16(), 200);
    })
    .await;
}

#[tokio::test]
async fn mirrored_headers_must_match_the_body() {
    with_http(HttpOptions::new(), |address, _| async move {
        let list = request(1, "tools/list", json!({}));
        let call = call_tool(2, "echo", json!({"text": "hi"}));
        let rejected: [(&str, Overrides<'_>); 8] = [
            (&list, &[("mcp-method", Some("prompts/list"))]),
            (&list, &[("mcp-method", None)]),
            (&list, &[("mcp-method", Some("TOOLS/LIST"))]),
            (&list, &[("mcp-protocol-version", None)]),
            (&list, &[("mcp-protocol-version", Some("2025-11-25"))]),
            (&call, &[("mcp-name", Some("wrong_tool_name"))]),
            (&call, &[("mcp-name", None)]),
            (&call, &[("mcp-name", Some("=?base64?ZWNo!!!?="))]),
        ];
        for (message, overrides) in rejected {
            let reply = post_with(address, message, overrides).await;
            assert_json_error(&reply, 400, -32020);
        }
        let accepted: [(&str, Overrides<'_>); 4] = [
            (&call, &[("mcp-name", Some("  echo  "))]),
            (&call, &[("mcp-name", Some("=?base64?ZWNobw==?="))]),
            (&list, &[("mcp-method", None), ("MCP-METHOD", Some("tools/list"))]),
            (&list, &[("mcp-method", None), ("mcp-method", Some("tools/list"))]),
        ];
        for (message, overrides) in accepted {
            let reply = post_with(address, message, overrides).await;
            assert_eq!(reply.status.as_u16(), 200, "{overrides:?}: {}", reply.body);
        }
        // A header that disagrees with an unsupported body version is a
        // mismatch first.
        let mut old = json!({"jsonrpc": "2.0", "id": 302, "method": "server/discover", "params": {"_meta": meta()}});
        old["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
        let reply = post_with(address, &old.to_string(), &[("mcp-protocol-version", Some("2026-07-28"))]).await;
        assert_json_error(&reply, 400, -32020);
    })
    .await;
}

#[tokio::test]
async fn subscriptions_stream_only_what_was_asked() {
    let options = HttpOptions::new().keep_alive(Duration::from_millis(50));
    with_http(options, |address, server| async move {
        let listen = request(
            "listen-1",
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": ["x://y"]}}),
        );
        let response = http::send(address, "POST", "/mcp", &mcp_headers(&listen), listen.clone()).await;
        assert_eq!(response.status().as_u16(), 200);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        let mut events = EventReader::new(response);
        let ack = events.next().await.unwrap();
        mcp_test_support::assert_valid_notification(&ack);
        // No prompts or resources here, and resource subscriptions are not
        // offered: only the tool list is honoured.
        assert_eq!(
            ack,
            json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
                "_meta": {"io.modelcontextprotocol/subscriptionId": "listen-1"},
                "notifications": {"toolsListChanged": true}
            }})
        );
        let changes = server.changes();
        changes.prompts_changed();
        changes.resource_updated("x://y");
        changes.tools_changed();
        let changed = events.next().await.unwrap();
        mcp_test_support::assert_valid_notification(&changed);
        assert_eq!(
            changed,
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {
                "_meta": {"io.modelcontextprotocol/subscriptionId": "listen-1"}
            }})
        );
        // Quiet streams get keep-alive comments.
        assert_eq!(events.next_raw().await.as_deref(), Some(":"));
        // Without SSE in Accept there is no stream to listen on.
        let reply = post_with(address, &listen, &[("accept", Some("application/json"))]).await;
        assert_eq!(reply.status.as_u16(), 406);
        drop(events);
    })
    .await;
}

#[tokio::test]
async fn shutdown_lets_a_request_in_flight_finish_and_closes_idle_connections() {
    use tokio::io::AsyncReadExt as _;
    let started = std::time::Instant::now();
    serve_until_stopped(HttpOptions::new(), |address, _, stop| async move {
        // A connection that has sent nothing yet, and a call in flight.
        let mut idle = tokio::net::TcpStream::connect(address).await.unwrap();
        let call = call_tool(7, "slow", json!({"millis": 800}));
        let slow = http::post(address, &call);
        let stopping = async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let _ = stop.send(());
            let started = std::time::Instant::now();
            let mut byte = [0u8; 1];
            let read = tokio::time::timeout(Duration::from_secs(5), idle.read(&mut byte)).await;
            assert!(
                matches!(read, Ok(Ok(0) | Err(_))),
                "the idle connection is closed at shutdown"
            );
            started.elapsed()
        };
        let (slow, closed_after) = tokio::join!(slow, stopping);
        assert!(
            closed_after < Duration::from_millis(500),
            "the idle connection waited {closed_after:?} for the request in flight"
        );
        assert_eq!(slow.status.as_u16(), 200, "{}", slow.body);
        assert!(slow.body.contains("slept 800"), "{}", slow.body);
    })
    .await;
    assert!(
        started.elapsed() >= Duration::from_millis(800),
        "stopped before the request in flight finished"
    );
}

#[tokio::test]
async fn shutdown_closes_subscriptions_with_a_result() {
    serve_until_stopped(HttpOptions::new(), |address, _, stop| async move {
        let listen = request(
            5,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        );
        let response = http::send(
            address,
            "POST",
            "/mcp",
            &mcp_headers(&listen),
            listen.clone(),
        )
        .await;
        let mut events = EventReader::new(response);
        assert_eq!(
            events.next().await.unwrap()["method"],
            "notifications/subscriptions/acknowledged"
        );
        let _ = stop.send(());
        // The stricter of the two pages: `notifications/cancelled` for the
        // subscription (the cancellation page's MUST), then the result (the
        // subscriptions page's SHOULD).
        let cancelled = events.next().await.unwrap();
        assert_valid("CancelledNotification", &cancelled);
        assert_eq!(
            cancelled,
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {
                "_meta": {"io.modelcontextprotocol/subscriptionId": 5},
                "requestId": 5,
                "reason": "the server is shutting down"
            }})
        );
        let closing = events.next().await.unwrap();
        assert_valid("SubscriptionsListenResultResponse", &closing);
        assert_eq!(
            closing,
            json!({"jsonrpc": "2.0", "id": 5, "result": {"resultType": "complete", "_meta": {
                "io.modelcontextprotocol/serverInfo": {"name": "http-test", "version": "1.0.0"},
                "io.modelcontextprotocol/subscriptionId": 5
            }}})
        );
        assert!(
            events.next().await.is_none(),
            "the stream ends after the result"
        );
    })
    .await;
}

#[tokio::test]
async fn dropping_the_connection_cancels_a_json_request() {
    with_http(HttpOptions::new(), |address, _| async move {
        let before = CANCELLED.load(Ordering::SeqCst);
        let message = call_tool(11, "slow", json!({"millis": 5000}));
        http::send_then_drop(address, &message, Duration::from_millis(100)).await;
        for _ in 0..100 {
            if CANCELLED.load(Ordering::SeqCst) > before {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the handler was not cancelled when the client disconnected");
    })
    .await;
}

/// Runs a query in a region (arguments mirrored into headers).
#[tool]
fn execute_sql(
    /// The region.
    #[arg(header = "Region")]
    region: String,
    query: String,
    #[arg(header = "Shard")] shard: Option<i64>,
    #[arg(header = "Dry-Run")] dry_run: Option<bool>,
) -> String {
    format!("{region} {query} {shard:?} {dry_run:?}")
}

#[tokio::test]
async fn mirrored_parameters_are_published_and_validated() {
    with_http(HttpOptions::new(), |address, _| async move {
        let list = http::post(address, &request(1, "tools/list", json!({}))).await;
        let tools = list.json()["result"]["tools"].clone();
        let tool = tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "execute_sql")
            .unwrap()
            .clone();
        assert_eq!(
            tool["inputSchema"]["properties"]["region"],
            json!({"type": "string", "description": "The region.", "x-mcp-header": "Region"})
        );
        assert_eq!(
            tool["inputSchema"]["properties"]["shard"]["x-mcp-header"],
            "Shard"
        );

        let call = |region: &str, shard: Option<i64>| {
            let mut arguments = json!({"region": region, "query": "SELECT 1"});
            if let Some(shard) = shard {
                arguments["shard"] = json!(shard);
            }
            call_tool(2, "execute_sql", arguments)
        };
        let accepted: [(String, Overrides<'_>); 6] = [
            (
                call("Hello", None),
                &[("mcp-param-region", Some("=?base64?SGVsbG8=?="))],
            ),
            (
                call("SGVsbG8=", None),
                &[("mcp-param-region", Some("SGVsbG8="))],
            ),
            (
                call("=?base64?SGVsbG8=", None),
                &[("mcp-param-region", Some("=?base64?SGVsbG8="))],
            ),
            (
                call("us-west1", Some(42)),
                &[
                    ("mcp-param-region", Some("us-west1")),
                    ("Mcp-Param-Shard", Some("42.0")),
                ],
            ),
            (
                call("us-west1", None),
                &[("MCP-PARAM-REGION", Some("us-west1"))],
            ),
            (
                call("Hello, 世界", None),
                &[("mcp-param-region", Some("=?base64?SGVsbG8sIOS4lueVjA==?="))],
            ),
        ];
        for (message, overrides) in &accepted {
            let reply = post_with(address, message, overrides).await;
            assert_eq!(reply.status.as_u16(), 200, "{overrides:?}: {}", reply.body);
            assert!(reply.json()["result"]["content"][0]["text"].is_string());
        }
        let rejected: [(String, Overrides<'_>); 7] = [
            (
                call("Hello", None),
                &[("mcp-param-region", Some("=?base64?SGVsbG8?="))],
            ),
            (
                call("Hello", None),
                &[("mcp-param-region", Some("=?base64?SGVs!!!bG8=?="))],
            ),
            (call("test-value", None), &[]),
            (
                call("us-west1", None),
                &[("mcp-param-region", Some("us-east1"))],
            ),
            (
                call("us-west1", Some(42)),
                &[
                    ("mcp-param-region", Some("us-west1")),
                    ("mcp-param-shard", Some("43")),
                ],
            ),
            (
                call("us-west1", Some(42)),
                &[("mcp-param-region", Some("us-west1"))],
            ),
            (
                call("us-west1", None),
                &[
                    ("mcp-param-region", Some("us-west1")),
                    ("mcp-param-shard", Some("1")),
                ],
            ),
        ];
        for (message, overrides) in &rejected {
            let reply = post_with(address, message, overrides).await;
            let body = assert_json_error(&reply, 400, -32020);
            assert_eq!(body["id"], 2, "{overrides:?}");
        }
    })
    .await;
}
