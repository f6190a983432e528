//! Without the `legacy` feature the server is modern only, and tells
//! initialize-handshake clients why it cannot serve them: a legacy
//! `initialize` gets `-32022` naming the supported versions (HTTP 400), a
//! modern-shaped one `-32601` (HTTP 404), and the 2025-11-25 session
//! machinery (GET, DELETE) is 405. Run with
//! `cargo test -p mcp-runtime --no-default-features --test legacy_off`.
#![cfg(all(feature = "http", not(feature = "legacy")))]

use std::time::Duration;

use mcp_runtime::{HttpOptions, ServerBuilder, tool};
use mcp_test_support::http::{self, mcp_headers};
use mcp_test_support::{assert_valid_error, meta, request};
use serde_json::{Value, json};

/// Echoes its text.
#[tool]
fn echo(text: String) -> String {
    text
}

fn legacy_initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"}
    }})
    .to_string()
}

fn assert_unsupported(response: &Value) {
    assert_valid_error(response);
    assert_eq!(
        response["error"],
        json!({"code": -32022, "message": "Unsupported protocol version", "data": {
            "supported": ["2026-07-28"], "requested": "2025-11-25"
        }})
    );
}

#[tokio::test]
async fn stdio_refuses_initialize_naming_the_supported_versions() {
    let server = ServerBuilder::new("modern-only", "1.0.0").build().unwrap();
    let exchange = server.exchange(legacy_initialize()).await;
    let response: Value = serde_json::from_str(&exchange.response.unwrap()).unwrap();
    assert_unsupported(&response);
    let modern = server
        .exchange(request(2, "initialize", json!({"_meta": meta()})))
        .await;
    let response: Value = serde_json::from_str(&modern.response.unwrap()).unwrap();
    assert_eq!(response["error"]["code"], -32601, "{response}");
}

#[tokio::test]
async fn http_refuses_initialize_and_has_no_sessions() {
    let server = ServerBuilder::new("modern-only", "1.0.0").build().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serve = server.serve_http(listener, HttpOptions::new(), async {
        let _ = stopped.await;
    });
    let client = async {
        let headers = vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            (
                "accept".to_owned(),
                "application/json, text/event-stream".to_owned(),
            ),
        ];
        let reply = http::request(address, "POST", "/mcp", &headers, legacy_initialize()).await;
        assert_eq!(reply.status, 400, "{}", reply.body);
        assert!(reply.header("mcp-session-id").is_none());
        assert_unsupported(&reply.json());

        let message = request(2, "initialize", json!({"_meta": meta()}));
        let reply = http::request(address, "POST", "/mcp", &mcp_headers(&message), message).await;
        assert_eq!(reply.status, 404, "{}", reply.body);
        assert_eq!(reply.json()["error"]["code"], -32601);

        let mut session = headers.clone();
        session.push(("mcp-session-id".to_owned(), "anything".to_owned()));
        for method in ["GET", "DELETE"] {
            let reply = http::request(address, method, "/mcp", &session, "").await;
            assert_eq!(reply.status, 405, "{method}");
        }
        let _ = stop.send(());
    };
    let (served, ()) = tokio::join!(tokio::time::timeout(Duration::from_secs(20), serve), client);
    served.expect("the server stops").expect("no server error");
}
