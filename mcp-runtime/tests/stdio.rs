//! The stdio transport in-process, over in-memory pipes: concurrency,
//! cancellation, malformed and over-long input, and clean end of input.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_runtime::{Context, ServerBuilder, StdioOptions, tool};
use mcp_test_support::{assert_valid_error, call_tool, parse};
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

static SLOW_CANCELLED: AtomicBool = AtomicBool::new(false);

/// Sleeps, and notes if it was cancelled.
#[tool]
async fn slow(millis: u64, #[ctx] ctx: Context) -> String {
    let watcher = ctx.clone();
    tokio::task::spawn_local(async move {
        watcher.cancelled().await;
        SLOW_CANCELLED.store(true, Ordering::SeqCst);
    });
    tokio::time::sleep(Duration::from_millis(millis)).await;
    format!("slept {millis}")
}

/// Answers at once.
#[tool]
fn fast() -> &'static str {
    "fast"
}

struct Client {
    input: WriteHalf<DuplexStream>,
    output: Lines<BufReader<ReadHalf<DuplexStream>>>,
}

impl Client {
    async fn send(&mut self, line: &str) {
        self.input.write_all(line.as_bytes()).await.unwrap();
        self.input.write_all(b"\n").await.unwrap();
    }

    async fn receive(&mut self) -> Value {
        receive(&mut self.output).await
    }
}

async fn receive(output: &mut Lines<BufReader<ReadHalf<DuplexStream>>>) -> Value {
    let line = tokio::time::timeout(Duration::from_secs(5), output.next_line())
        .await
        .expect("a response within 5 s")
        .unwrap()
        .expect("the server is still writing");
    parse(&line)
}

/// Runs `script` as the client of a stdio server until the server exits.
async fn with_server<F, Fut>(max_message_size: Option<usize>, script: F)
where
    F: FnOnce(Client) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let server = ServerBuilder::new("stdio-test", "0.0.1").build().unwrap();
    let mut options = StdioOptions::new();
    if let Some(limit) = max_message_size {
        options = options.max_message_size(limit);
    }
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_end);
    let (client_read, client_write) = tokio::io::split(client_end);
    let client = Client {
        input: client_write,
        output: BufReader::new(client_read).lines(),
    };
    let serve = async {
        tokio::time::timeout(
            Duration::from_secs(10),
            server.serve_streams(options, server_read, server_write),
        )
        .await
        .expect("the server exits once input ends")
        .expect("no transport error");
    };
    tokio::join!(serve, script(client));
}

#[tokio::test]
async fn a_slow_request_does_not_block_a_fast_one() {
    with_server(None, |mut client| async move {
        client
            .send(&call_tool(1, "slow", json!({"millis": 300})))
            .await;
        client.send(&call_tool(2, "fast", json!({}))).await;
        assert_eq!(client.receive().await["id"], 2);
        let slow = client.receive().await;
        assert_eq!(slow["id"], 1);
        assert_eq!(slow["result"]["content"][0]["text"], "slept 300");
        drop(client.input);
    })
    .await;
}

#[tokio::test]
async fn cancelled_requests_stop_and_get_no_response() {
    with_server(None, |mut client| async move {
        client.send(&call_tool("c", "slow", json!({"millis": 2000}))).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        client
            .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c","reason":"user"}}"#)
            .await;
        // Cancelling something unknown or finished is ignored.
        client
            .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":404}}"#)
            .await;
        client.send(&call_tool(2, "fast", json!({}))).await;
        assert_eq!(client.receive().await["id"], 2);
        client.input.shutdown().await.unwrap();
        // Nothing else arrives before the server closes its output.
        assert!(client.output.next_line().await.unwrap().is_none());
        assert!(SLOW_CANCELLED.load(Ordering::SeqCst), "the handler saw the cancellation");
    })
    .await;
}

#[tokio::test]
async fn malformed_lines_get_errors_and_the_server_continues() {
    with_server(None, |mut client| async move {
        client.send("{oops").await;
        let error = client.receive().await;
        assert_valid_error(&error);
        assert_eq!(error["error"]["code"], -32700);
        assert!(error.get("id").is_none());

        client.input.write_all(b"\xff\xfe\n").await.unwrap();
        assert_eq!(client.receive().await["error"]["code"], -32700);

        client.send("").await;
        client.send("   ").await;
        let crlf = format!("{}\r", call_tool(3, "fast", json!({})));
        client.send(&crlf).await;
        assert_eq!(client.receive().await["id"], 3);
        drop(client.input);
    })
    .await;
}

#[tokio::test]
async fn over_long_lines_are_rejected_without_buffering_them() {
    with_server(Some(400), |mut client| async move {
        let long = call_tool(1, "slow", json!({"millis": 1, "padding": "x".repeat(10_000)}));
        client.send(&long).await;
        let error = client.receive().await;
        assert_valid_error(&error);
        assert_eq!(
            error,
            json!({"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid request: message exceeds the 400-byte limit"}})
        );
        client.send(&call_tool(2, "fast", json!({}))).await;
        assert_eq!(client.receive().await["id"], 2);
        drop(client.input);
    })
    .await;
}

#[tokio::test]
async fn ids_in_flight_cannot_be_reused() {
    with_server(None, |mut client| async move {
        client.send(&call_tool(1, "slow", json!({"millis": 200}))).await;
        client.send(&call_tool(1, "fast", json!({}))).await;
        let rejected = client.receive().await;
        assert_eq!(
            rejected,
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "Invalid request: request id 1 is already in use by a request in flight"}})
        );
        assert_eq!(client.receive().await["result"]["content"][0]["text"], "slept 200");
        drop(client.input);
    })
    .await;
}

#[tokio::test]
async fn end_of_input_lets_requests_in_flight_finish() {
    with_server(None, |mut client| async move {
        client
            .send(&call_tool(1, "slow", json!({"millis": 200})))
            .await;
        client.input.shutdown().await.unwrap();
        drop(client.input);
        assert_eq!(
            receive(&mut client.output).await["result"]["content"][0]["text"],
            "slept 200"
        );
        assert!(client.output.next_line().await.unwrap().is_none());
    })
    .await;
}

#[tokio::test]
async fn subscriptions_on_stdio_are_tagged_cancellable_and_closed_at_end_of_input() {
    let server = ServerBuilder::new("stdio-test", "0.0.1")
        .list_changed()
        .build()
        .unwrap();
    let changes = server.changes();
    let (mut client, (server_read, server_write)) = mcp_test_support::stdio::InMemory::pair();
    let serve = mcp_test_support::stdio::served(server.serve_streams(
        StdioOptions::new(),
        server_read,
        server_write,
    ));
    let script = async move {
        let listen = |id: u32| {
            mcp_test_support::request(
                id,
                "subscriptions/listen",
                json!({"notifications": {"toolsListChanged": true}}),
            )
        };
        client.send(&listen(1)).await;
        client.send(&listen(2)).await;
        for id in [1, 2] {
            let ack = client.receive().await;
            mcp_test_support::assert_valid_notification(&ack);
            assert_eq!(
                ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
                id
            );
        }
        changes.tools_changed();
        let mut tagged = vec![];
        for _ in 0..2 {
            let note = client.receive().await;
            assert_eq!(note["method"], "notifications/tools/list_changed");
            tagged.push(note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].clone());
        }
        tagged.sort_by_key(|v| v.as_i64());
        assert_eq!(tagged, [json!(1), json!(2)]);
        // Cancelling subscription 1 ends it without a response.
        client
            .send(
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
            )
            .await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        changes.tools_changed();
        let note = client.receive().await;
        assert_eq!(
            note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            2
        );
        // End of input closes subscription 2 gracefully: cancelled, then
        // the result.
        client.close().await;
        let cancelled = client.receive().await;
        mcp_test_support::assert_valid("CancelledNotification", &cancelled);
        assert_eq!(cancelled["params"]["requestId"], 2);
        assert_eq!(
            cancelled["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            2
        );
        let closing = client.receive().await;
        mcp_test_support::assert_valid("SubscriptionsListenResultResponse", &closing);
        assert_eq!(closing["id"], 2);
        assert!(client.next_line().await.is_none());
    };
    tokio::join!(serve, script);
}
