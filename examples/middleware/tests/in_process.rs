//! Each layer of the example, through the dispatcher in process: the exact
//! answers, and what the handlers did (a timed-out handler stops).

mod common;

use std::time::{Duration, Instant};

use common::*;
use mcp_runtime::{Server, ServerBuilder, StdioOptions};
use mcp_test_support::parse;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn server() -> Server {
    middleware::configure(ServerBuilder::new("middleware", "0.1.0"))
        .build()
        .unwrap()
}

async fn answer(server: &Server, message: String, result: &str) -> Value {
    let exchange = server.exchange(message).await;
    checked(parse(&exchange.response.unwrap()), result)
}

async fn activity(server: &Server) -> Value {
    let answer = answer(
        server,
        call(99, "activity", json!({})),
        "CallToolResultResponse",
    )
    .await;
    answer["result"]["structuredContent"].clone()
}

#[tokio::test]
async fn a_timeout_layer_answers_minus_31002_and_the_handler_stops() {
    let server = server();
    let quick = answer(
        &server,
        call(1, "sleep", json!({"ms": 20})),
        "CallToolResultResponse",
    );
    assert_eq!(quick.await, text_result(1, "slept 20 ms", false));

    let started = Instant::now();
    let slow = answer(
        &server,
        call(2, "sleep", json!({"ms": 5000})),
        "CallToolResultResponse",
    );
    assert_eq!(slow.await, sleep_timed_out(2));
    assert!(started.elapsed() < Duration::from_secs(3));
    let after = activity(&server).await;
    assert_eq!(
        (&after["finished"], &after["dropped"]),
        (&json!(1), &json!(1))
    );
    // Dropped, not left running: no tick is added after the answer.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(activity(&server).await["ticks"], after["ticks"]);

    let nap = answer(
        &server,
        call(3, "nap", json!({"ms": 5000})),
        "CallToolResultResponse",
    );
    assert_eq!(nap.await, nap_timed_out(3));
    assert_eq!(activity(&server).await["dropped"], json!(2));
}

#[tokio::test]
async fn a_concurrency_limit_makes_the_excess_wait_or_refuses_it() {
    let server = server();
    let started = Instant::now();
    let (first, second) = tokio::join!(
        answer(
            &server,
            call(1, "render", json!({"ms": 200})),
            "CallToolResultResponse"
        ),
        answer(
            &server,
            call(2, "render", json!({"ms": 200})),
            "CallToolResultResponse"
        ),
    );
    assert_eq!(first, text_result(1, "rendered in 200 ms", false));
    assert_eq!(second, text_result(2, "rendered in 200 ms", false));
    // One at a time: the second waited for the first.
    assert!(
        started.elapsed() >= Duration::from_millis(390),
        "{:?}",
        started.elapsed()
    );

    let (first, second) = tokio::join!(
        answer(
            &server,
            call(3, "render_now", json!({"ms": 200})),
            "CallToolResultResponse"
        ),
        answer(
            &server,
            call(4, "render_now", json!({"ms": 200})),
            "CallToolResultResponse"
        ),
    );
    assert_eq!(first, text_result(3, "rendered in 200 ms", false));
    assert_eq!(second, render_refused(4));
    // The limit is released when the call ends.
    let again = answer(
        &server,
        call(5, "render_now", json!({"ms": 1})),
        "CallToolResultResponse",
    );
    assert_eq!(again.await, text_result(5, "rendered in 1 ms", false));
}

#[tokio::test]
async fn a_from_fn_guard_refuses_by_argument_value() {
    let server = server();
    let refused = answer(
        &server,
        call(1, "delete", json!({"path": "/etc/passwd"})),
        "CallToolResultResponse",
    );
    let message = "/etc/passwd is under /etc, which this server never deletes";
    assert_eq!(refused.await, text_result(1, message, true));
    let allowed = answer(
        &server,
        call(2, "delete", json!({"path": "/tmp/etc"})),
        "CallToolResultResponse",
    );
    assert_eq!(allowed.await, text_result(2, "deleted /tmp/etc", false));
    // Arguments the guard cannot read go on to the handler's own check.
    let wrong = answer(
        &server,
        call(3, "delete", json!({"file": "/etc"})),
        "CallToolResultResponse",
    );
    let wrong = wrong.await;
    assert_eq!(wrong["result"]["isError"], json!(true), "{wrong}");
    let text = wrong["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Invalid arguments for tool delete: "),
        "{text}"
    );
}

#[tokio::test]
async fn the_groups_layer_wraps_the_group_only() {
    let server = server();
    let daily = answer(
        &server,
        call(1, "daily_report", json!({})),
        "CallToolResultResponse",
    );
    assert_eq!(daily.await, stamped(1, "all quiet"));
    let weekly = answer(
        &server,
        call(2, "weekly_report", json!({})),
        "CallToolResultResponse",
    );
    assert_eq!(weekly.await, stamped(2, "all quiet, all week"));
    let other = answer(
        &server,
        call(3, "delete", json!({"path": "/tmp/x"})),
        "CallToolResultResponse",
    );
    assert_eq!(other.await, text_result(3, "deleted /tmp/x", false));
}

#[tokio::test]
async fn an_extension_methods_layer_refuses_and_the_metrics_layer_counts_per_item() {
    let server = server();
    answer(
        &server,
        call(1, "daily_report", json!({})),
        "CallToolResultResponse",
    )
    .await;
    answer(
        &server,
        call(2, "sleep", json!({"ms": 5000})),
        "CallToolResultResponse",
    )
    .await;
    answer(
        &server,
        call(3, "delete", json!({"path": "/etc"})),
        "CallToolResultResponse",
    )
    .await;
    assert_eq!(
        answer(&server, stats(4, true), "JSONRPCResultResponse").await,
        reset_refused(4)
    );
    let counts = answer(&server, stats(5, false), "JSONRPCResultResponse").await;
    assert_eq!(
        counts["result"]["counts"],
        json!({
            "method:example.com/stats/get": {"ok": 0, "error": 1},
            "tool:daily_report": {"ok": 1, "error": 0},
            "tool:delete": {"ok": 1, "error": 0},
            "tool:sleep": {"ok": 0, "error": 1},
        })
    );
}

#[tokio::test]
async fn stdio_answers_a_request_past_its_timeout_with_minus_31002() {
    let server = server();
    let (client, served) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(served);
    let options = StdioOptions::new().request_timeout(Duration::from_millis(200));
    let serving = server.serve_streams(options, read, write);
    let talking = async move {
        let (output, mut input) = tokio::io::split(client);
        let mut lines = BufReader::new(output).lines();
        input
            .write_all(format!("{}\n", call(1, "render", json!({"ms": 5000}))).as_bytes())
            .await
            .unwrap();
        let line = lines.next_line().await.unwrap().unwrap();
        drop(input);
        parse(&line)
    };
    let (served, answer) = tokio::join!(serving, talking);
    served.unwrap();
    assert_eq!(
        answer,
        error(1, -31_002, "The request did not finish within 200 ms")
    );
}

#[tokio::test]
async fn stdio_times_out_an_older_clients_request_too() {
    let server = server();
    let (client, served) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(served);
    let options = StdioOptions::new().request_timeout(Duration::from_millis(200));
    let serving = server.serve_streams(options, read, write);
    let talking = async move {
        let (output, mut input) = tokio::io::split(client);
        let mut lines = BufReader::new(output).lines();
        let initialize = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "older", "version": "1.0.0"}
            }
        });
        let render = json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "render", "arguments": {"ms": 5000}}
        });
        let started = Instant::now();
        for message in [initialize, render] {
            input
                .write_all(format!("{message}\n").as_bytes())
                .await
                .unwrap();
        }
        let initialized = parse(&lines.next_line().await.unwrap().unwrap());
        assert_eq!(initialized["result"]["protocolVersion"], "2025-11-25");
        let line = lines.next_line().await.unwrap().unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "not the handler's 5 s"
        );
        drop(input);
        parse(&line)
    };
    let (served, answer) = tokio::join!(serving, talking);
    served.unwrap();
    assert_eq!(
        answer,
        error(1, -31_002, "The request did not finish within 200 ms")
    );
}
