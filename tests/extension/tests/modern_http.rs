//! The example server over Streamable HTTP on loopback, driven by a
//! 2026-07-28 client: the extension's methods get the statuses and header
//! rules of core methods, stream progress as SSE, and are cancelled when
//! the client hangs up. Every body is validated against the 2026-07-28
//! `schema.json`.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::*;
use mcp_runtime::HttpOptions;
use mcp_test_support::http::{self, EventReader, Overrides, Reply, mcp_headers, post_with};
use mcp_test_support::{assert_valid, assert_valid_notification, call_tool};
use serde_json::{Value, json};

async fn serve<F, Fut>(client: F)
where
    F: FnOnce(SocketAddr) -> Fut,
    Fut: Future<Output = ()>,
{
    with_http(|_| HttpOptions::new(), client).await;
}

/// The JSON body of `reply`, checked to have `status` and a JSON content
/// type, and validated as an extension method's response.
fn json_body(reply: &Reply, status: u16) -> Value {
    assert_eq!(reply.status.as_u16(), status, "{}", reply.body);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let body = reply.json();
    assert_valid_extension_response(&body);
    body
}

/// `server/discover` over HTTP advertises the extension with its settings.
#[tokio::test]
async fn discover_advertises_the_extension_and_its_settings() {
    serve(|address| async move {
        let reply = http::post(address, &plain(1, "server/discover", json!({}))).await;
        let body = json_body(&reply, 200);
        assert_valid("DiscoverResultResponse", &body);
        assert_eq!(body, discover(1));
    })
    .await;
}

/// Results are 200; a missing extension and bad params are 400; an
/// unknown method is 404: the statuses of core methods' answers.
#[tokio::test]
async fn answers_have_the_statuses_of_core_answers() {
    serve(|address| async move {
        let ping = negotiated(1, "com.example/ping", json!({"message": "hi"}));
        assert_eq!(
            json_body(&http::post(address, &ping).await, 200),
            pong(1, "hi")
        );
        let stats_request = plain(2, "pings/stats", json!({}));
        let reply = http::post(address, &stats_request).await;
        assert_eq!(json_body(&reply, 200), stats(2, 1, 0));
        let wait = negotiated(3, "com.example/wait", json!({"timeoutMs": 10}));
        let expected = result(3, json!({"resultType": "complete", "waitedMs": 10}));
        assert_eq!(json_body(&http::post(address, &wait).await, 200), expected);

        let refused = plain(4, "com.example/ping", json!({"message": "hi"}));
        let reply = http::post(address, &refused).await;
        assert_eq!(json_body(&reply, 400), missing_extension(4));
        let bad = negotiated(5, "com.example/ping", json!({"message": "a".repeat(70)}));
        assert_eq!(
            json_body(&http::post(address, &bad).await, 400),
            too_long(5, 70)
        );
        let nope = negotiated(6, "com.example/nope", json!({}));
        let reply = http::post(address, &nope).await;
        assert_eq!(json_body(&reply, 404), not_found(6, "com.example/nope"));
    })
    .await;
}

/// The tool that requires the extension: 400 `-32021` without it, 200 with.
#[tokio::test]
async fn the_tool_requires_the_extension() {
    serve(|address| async move {
        let reply = http::post(address, &call_tool(1, "pong", json!({"message": "hi"}))).await;
        assert_eq!(json_body(&reply, 400), missing_extension(1));
        let call = negotiated(
            2,
            "tools/call",
            json!({"name": "pong", "arguments": {"message": "hi"}}),
        );
        let reply = http::post(address, &call).await;
        let body = json_body(&reply, 200);
        assert_valid("CallToolResultResponse", &body);
        assert_eq!(body, pong_tool(2, "hi"));
    })
    .await;
}

/// `Mcp-Method` and `MCP-Protocol-Version` must be present and match the
/// body for an extension's method as for a core one: 400 `-32020`
/// otherwise, before negotiation is even looked at.
#[tokio::test]
async fn the_mirrored_headers_must_match_the_body() {
    serve(|address| async move {
        let ping = negotiated(1, "com.example/ping", json!({"message": "hi"}));
        let plain_ping = plain(1, "com.example/ping", json!({"message": "hi"}));
        let rejected: [(&str, Overrides<'_>); 5] = [
            (&ping, &[("mcp-method", None)]),
            (&ping, &[("mcp-method", Some("com.example/wait"))]),
            (&ping, &[("mcp-method", Some("tools/call"))]),
            (&ping, &[("mcp-protocol-version", None)]),
            (&plain_ping, &[("mcp-method", Some("pings/stats"))]),
        ];
        for (message, overrides) in rejected {
            let reply = post_with(address, message, overrides).await;
            let body = json_body(&reply, 400);
            assert_eq!(body["error"]["code"], -32020, "{overrides:?}: {body}");
            assert_eq!(body["id"], 1);
        }
        let reply = post_with(
            address,
            &ping,
            &[("mcp-method", Some(" com.example/ping "))],
        )
        .await;
        assert_eq!(json_body(&reply, 200), pong(1, "hi"));
    })
    .await;
}

/// With a `progressToken` and `Accept: text/event-stream`, the progress
/// notifications and the log message stream as SSE before the pong; a
/// client that accepts only JSON gets the pong alone.
#[tokio::test]
async fn progress_streams_as_sse_before_the_pong() {
    serve(|address| async move {
        let extra = json!({"progressToken": 7, "io.modelcontextprotocol/logLevel": "info"});
        let message = negotiated_with(1, "com.example/ping", json!({"message": "hi"}), extra);
        let reply = http::post(address, &message).await;
        assert_eq!(reply.status.as_u16(), 200);
        assert_eq!(reply.header("content-type"), Some("text/event-stream"));
        let events = reply.events();
        assert_eq!(events.len(), 4, "{}", reply.body);
        for (event, expected) in events.iter().zip(ping_notifications(json!(7), "hi")) {
            assert_valid_notification(event);
            assert_eq!(event, &expected);
        }
        assert_valid_extension_response(&events[3]);
        assert_eq!(events[3], pong(1, "hi"));

        let reply = post_with(address, &message, &[("accept", Some("application/json"))]).await;
        assert_eq!(json_body(&reply, 200), pong(1, "hi"));
    })
    .await;
}

/// Closing the connection of a `com.example/wait` in flight cancels it:
/// the handler's job sees the cancellation.
#[tokio::test]
async fn dropping_the_connection_cancels_the_wait() {
    serve(|address| async move {
        let message = negotiated(1, "com.example/wait", json!({}));
        http::send_then_drop(address, &message, Duration::from_millis(100)).await;
        assert_one_cancelled_wait(address).await;
    })
    .await;
}

/// Closing the event stream of a `com.example/wait` that has started (its
/// first progress notification arrived) cancels it.
#[tokio::test]
async fn closing_the_event_stream_cancels_the_wait() {
    serve(|address| async move {
        let message = negotiated_with(
            1,
            "com.example/wait",
            json!({}),
            json!({"progressToken": 1}),
        );
        let response = http::send(
            address,
            "POST",
            "/mcp",
            &mcp_headers(&message),
            message.clone(),
        )
        .await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        let mut events = EventReader::new(response);
        let started = events.next().await.expect("the wait's first notification");
        assert_valid_notification(&started);
        assert_eq!(started, wait_started(json!(1)));
        drop(events);
        assert_one_cancelled_wait(address).await;
    })
    .await;
}

/// The server's request timeout applies to an extension's method as to a
/// tool: 504 `-31002`, and the handler's job sees the cancellation.
#[tokio::test]
async fn the_request_timeout_answers_and_cancels_a_wait() {
    let options = |_| HttpOptions::new().request_timeout(Duration::from_millis(100));
    with_http(options, |address| async move {
        let message = negotiated(1, "com.example/wait", json!({}));
        let body = json_body(&http::post(address, &message).await, 504);
        let expected = error(
            1,
            json!({"code": -31002, "message": "The request did not finish within 100 ms"}),
        );
        assert_eq!(body, expected);
        assert_one_cancelled_wait(address).await;
    })
    .await;
}

/// Polls `pings/stats` until it counts one cancelled wait.
async fn assert_one_cancelled_wait(address: SocketAddr) {
    for id in 100..200 {
        let reply = http::post(address, &plain(id, "pings/stats", json!({}))).await;
        let body = json_body(&reply, 200);
        if body["result"]["cancelledWaits"] == 1 {
            assert_eq!(body, stats(id, 0, 1));
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the wait never saw its cancellation");
}
