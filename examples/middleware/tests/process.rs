//! The example's binary as a client meets it, over stdio and over HTTP:
//! the same layers, the same answers (HTTP adds its statuses).

mod common;

use std::net::{SocketAddr, TcpListener};
use std::process::Stdio;
use std::time::Duration;

use common::*;
use mcp_test_support::{http, parse};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

struct StdioChild {
    _child: Child,
    input: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
}

impl StdioChild {
    fn spawn() -> StdioChild {
        let mut child = Command::new(env!("CARGO_BIN_EXE_middleware"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .env("RUST_LOG", "warn")
            .kill_on_drop(true)
            .spawn()
            .expect("the example runs");
        let input = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        StdioChild {
            _child: child,
            input,
            lines,
        }
    }

    async fn send(&mut self, message: String) {
        self.input
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }

    async fn receive(&mut self, result: &str) -> Value {
        let line = self.lines.next_line().await.unwrap().expect("an answer");
        checked(parse(&line), result)
    }

    async fn ask(&mut self, message: String, result: &str) -> Value {
        self.send(message).await;
        self.receive(result).await
    }
}

#[tokio::test]
async fn over_stdio_each_layer_answers_as_in_process() {
    let mut child = StdioChild::spawn();
    let result = "CallToolResultResponse";
    assert_eq!(
        child
            .ask(call(1, "sleep", json!({"ms": 5000})), result)
            .await,
        sleep_timed_out(1)
    );
    assert_eq!(
        child.ask(call(2, "nap", json!({"ms": 5000})), result).await,
        nap_timed_out(2)
    );
    let activity = child.ask(call(3, "activity", json!({})), result).await;
    assert_eq!(activity["result"]["structuredContent"]["dropped"], json!(2));

    // Two at once: the second is refused while the first runs.
    child.send(call(4, "render_now", json!({"ms": 300}))).await;
    child.send(call(5, "render_now", json!({"ms": 300}))).await;
    let mut answers = [child.receive(result).await, child.receive(result).await];
    answers.sort_by_key(|answer| answer["id"].as_u64());
    assert_eq!(
        answers,
        [
            text_result(4, "rendered in 300 ms", false),
            render_refused(5)
        ]
    );

    let refused = child
        .ask(call(6, "delete", json!({"path": "/etc"})), result)
        .await;
    let message = "/etc is under /etc, which this server never deletes";
    assert_eq!(refused, text_result(6, message, true));
    assert_eq!(
        child.ask(call(7, "daily_report", json!({})), result).await,
        stamped(7, "all quiet")
    );
    assert_eq!(
        child.ask(stats(8, true), "JSONRPCResultResponse").await,
        reset_refused(8)
    );
    // On stdio the tenant is whoever started the server.
    let whoami = child.ask(call(10, "whoami", json!({})), result).await;
    assert_eq!(whoami, text_result(10, "tenant local", false));
    let counts = child.ask(stats(9, false), "JSONRPCResultResponse").await;
    assert_eq!(
        counts["result"]["counts"]["tool:sleep"],
        json!({"ok": 0, "error": 1})
    );
    assert_eq!(
        counts["result"]["counts"]["tool:render_now"],
        json!({"ok": 1, "error": 1})
    );
}

/// The example served over HTTP on a free loopback port.
struct HttpChild {
    _child: Child,
    address: SocketAddr,
}

impl HttpChild {
    async fn spawn() -> HttpChild {
        let address = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_middleware"))
            .args(["--http", &address.to_string()])
            .env("RUST_LOG", "warn")
            .kill_on_drop(true)
            .spawn()
            .expect("the example runs");
        http::wait_listening(address).await;
        HttpChild {
            _child: child,
            address,
        }
    }

    async fn post(&self, message: String, status: u16, result: &str) -> Value {
        self.post_as(None, message, status, result).await
    }

    /// POSTs `message` with `X-Tenant: tenant`, when given.
    async fn post_as(
        &self,
        tenant: Option<&str>,
        message: String,
        status: u16,
        result: &str,
    ) -> Value {
        let mut headers = http::mcp_headers(&message);
        headers.extend(tenant.map(|t| (middleware::TENANT_HEADER.to_owned(), t.to_owned())));
        let reply = http::request(self.address, "POST", "/mcp", &headers, message.clone()).await;
        assert_eq!(reply.status.as_u16(), status, "{message}");
        checked(reply.json(), result)
    }
}

#[tokio::test]
async fn over_http_each_layer_answers_with_its_status() {
    let child = HttpChild::spawn().await;
    let result = "CallToolResultResponse";
    assert_eq!(
        child
            .post(call(1, "sleep", json!({"ms": 5000})), 504, result)
            .await,
        sleep_timed_out(1)
    );
    assert_eq!(
        child
            .post(call(2, "nap", json!({"ms": 5000})), 504, result)
            .await,
        nap_timed_out(2)
    );
    let (first, second) = tokio::join!(
        child.post(call(3, "render_now", json!({"ms": 300})), 200, result),
        async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            child
                .post(call(4, "render_now", json!({"ms": 300})), 503, result)
                .await
        },
    );
    assert_eq!(
        (first, second),
        (
            text_result(3, "rendered in 300 ms", false),
            render_refused(4)
        )
    );
    let refused = child
        .post(
            call(5, "delete", json!({"path": "/etc/hosts"})),
            200,
            result,
        )
        .await;
    let message = "/etc/hosts is under /etc, which this server never deletes";
    assert_eq!(refused, text_result(5, message, true));
    assert_eq!(
        child
            .post(call(6, "weekly_report", json!({})), 200, result)
            .await,
        stamped(6, "all quiet, all week")
    );
    assert_eq!(
        child
            .post(stats(7, true), 400, "JSONRPCResultResponse")
            .await,
        reset_refused(7)
    );
}

#[tokio::test]
async fn over_http_the_tenant_comes_from_the_header() {
    let child = HttpChild::spawn().await;
    let result = "CallToolResultResponse";
    let whoami = |id| call(id, "whoami", json!({}));
    let acme = child.post_as(Some("acme"), whoami(1), 200, result).await;
    assert_eq!(acme, text_result(1, "tenant acme", false));
    let public = child.post_as(None, whoami(2), 200, result).await;
    assert_eq!(public, text_result(2, "tenant public", false));
    let bad = child.post_as(Some("a b"), whoami(3), 400, result).await;
    let message = "Send an X-Tenant header: 1 to 64 letters, digits, '-' or '_'";
    assert_eq!(bad, error(3, -32_602, message));
    // Every request goes through the layer, a list as well as a call.
    let list = mcp_test_support::request(4, "tools/list", json!({}));
    let refused = child
        .post_as(Some(""), list, 400, "ListToolsResultResponse")
        .await;
    assert_eq!(refused, error(4, -32_602, message));
}
