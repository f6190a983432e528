//! Spawns the quickstart binary and talks to it over stdio, as a client
//! would: discovery, listing, calls, progress, cancellation, malformed input
//! and end of input.

use std::process::Stdio;
use std::time::Duration;

use mcp_test_support::{
    assert_valid, assert_valid_error, assert_valid_notification, call_tool, meta, parse, request,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

struct Quickstart {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl Quickstart {
    fn spawn() -> Quickstart {
        let mut child = Command::new(env!("CARGO_BIN_EXE_quickstart"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("the quickstart binary starts");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        Quickstart {
            child,
            stdin,
            stdout,
        }
    }

    async fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
    }

    async fn receive(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.stdout.next_line())
            .await
            .expect("a message within 10 s")
            .unwrap()
            .expect("stdout is still open");
        parse(&line)
    }

    /// Closes stdin and waits for a clean exit; returns what was still written.
    async fn finish(mut self) -> Vec<Value> {
        drop(self.stdin.take());
        let mut rest = Vec::new();
        while let Some(line) =
            tokio::time::timeout(Duration::from_secs(10), self.stdout.next_line())
                .await
                .expect("stdout closes after stdin does")
                .unwrap()
        {
            rest.push(parse(&line));
        }
        let status = tokio::time::timeout(Duration::from_secs(10), self.child.wait())
            .await
            .expect("the server exits after end of input")
            .unwrap();
        assert!(status.success(), "exit status {status}");
        rest
    }
}

#[tokio::test]
async fn discover_list_and_call() {
    let mut server = Quickstart::spawn();
    server.send(&request(1, "server/discover", json!({}))).await;
    let discover = server.receive().await;
    assert_valid("DiscoverResultResponse", &discover);
    assert_eq!(
        discover["result"]["supportedVersions"],
        json!(["2026-07-28"])
    );
    assert_eq!(
        discover["result"]["capabilities"],
        json!({"tools": {}, "resources": {}, "prompts": {}})
    );
    assert_eq!(
        discover["result"]["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "quickstart", "version": "0.1.0"})
    );

    server.send(&request(2, "tools/list", json!({}))).await;
    let list = server.receive().await;
    assert_valid("ListToolsResultResponse", &list);
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["add", "countdown", "divide", "echo"]);

    server
        .send(&call_tool(3, "echo", json!({"text": "hello"})))
        .await;
    let echo = server.receive().await;
    assert_valid("CallToolResultResponse", &echo);
    assert_eq!(
        echo["result"]["content"],
        json!([{"type": "text", "text": "hello"}])
    );

    server
        .send(&call_tool(4, "add", json!({"a": 2, "b": 40})))
        .await;
    let add = server.receive().await;
    assert_valid("CallToolResultResponse", &add);
    assert_eq!(
        add["result"]["content"],
        json!([{"type": "text", "text": "42"}])
    );
    assert_eq!(add["result"]["structuredContent"], json!({"sum": 42}));

    server
        .send(&call_tool(5, "divide", json!({"a": 1, "b": 0})))
        .await;
    let divide = server.receive().await;
    assert_valid("CallToolResultResponse", &divide);
    assert_eq!(divide["result"]["isError"], true);
    assert_eq!(
        divide["result"]["content"],
        json!([{"type": "text", "text": "cannot divide by zero"}])
    );
    assert!(server.finish().await.is_empty());
}

#[tokio::test]
async fn progress_arrives_before_the_result() {
    let mut server = Quickstart::spawn();
    let mut params =
        json!({"name": "countdown", "arguments": {"from": 3, "delay_ms": 10}, "_meta": meta()});
    params["_meta"]["progressToken"] = json!(17);
    server.send(&request(1, "tools/call", params)).await;
    let mut progress = Vec::new();
    let result = loop {
        let message = server.receive().await;
        if message.get("method").is_some() {
            assert_valid_notification(&message);
            progress.push(message["params"]["progress"].as_f64().unwrap());
            assert_eq!(message["params"]["progressToken"], 17);
        } else {
            break message;
        }
    };
    assert_eq!(progress, [0.0, 1.0, 2.0, 3.0]);
    assert_eq!(result["id"], 1);
    assert_eq!(result["result"]["content"][0]["text"], "liftoff");
    assert!(server.finish().await.is_empty());
}

#[tokio::test]
async fn cancellation_malformed_input_and_end_of_input() {
    let mut server = Quickstart::spawn();
    // A long countdown, cancelled.
    server
        .send(&call_tool(
            "long",
            "countdown",
            json!({"from": 100, "delay_ms": 1000}),
        ))
        .await;
    server
        .send(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"long"}}"#,
        )
        .await;
    // Malformed input is answered, and the server carries on.
    server.send("this is not json").await;
    let error = server.receive().await;
    assert_valid_error(&error);
    assert_eq!(error["error"]["code"], -32700);
    server
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}"#)
        .await;
    let error = server.receive().await;
    assert_valid_error(&error);
    assert_eq!(error["id"], 2);
    assert_eq!(error["error"]["code"], -32602);
    // A request still running when input ends is answered before exit.
    server
        .send(&call_tool(
            3,
            "countdown",
            json!({"from": 2, "delay_ms": 100}),
        ))
        .await;
    let rest = server.finish().await;
    assert_eq!(rest.len(), 1, "only the countdown's result: {rest:?}");
    assert_eq!(rest[0]["id"], 3);
    assert_eq!(rest[0]["result"]["content"][0]["text"], "liftoff");
}
