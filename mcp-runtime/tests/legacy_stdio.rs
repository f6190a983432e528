//! The legacy-era adapter on stdio, in-process over in-memory pipes: the
//! `initialize` handshake, translated results and errors, the lifecycle
//! methods, era detection per message, notifications, and the bridge that
//! turns a handler's asks into server-to-client requests. Every message the
//! server sends is validated against the 2025-11-25 `schema.json`.
#![cfg(feature = "legacy")]

use std::time::Duration;

use mcp_runtime::{
    Context, ElicitForm, Elicitation, Input, Logger, Progress, PromptMessage, Root, ServerBuilder,
    prompt, resource, tool,
};
use mcp_test_support::legacy::{assert_valid_legacy_message, assert_valid_legacy_response};
use mcp_test_support::{meta, parse};
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

/// Echoes its text.
#[tool]
fn echo(text: String) -> String {
    text
}

/// Logs at info and warning, then answers.
#[tool]
fn chatty(#[ctx] log: Logger) -> &'static str {
    log.info("an info message");
    log.warning("a warning");
    "done"
}

/// A name.
#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Name {
    /// Your name.
    name: String,
}

/// Greets the user, asking for the name first.
#[tool]
fn greet(#[elicit("What is your name?")] who: Elicitation<Name>) -> String {
    match who {
        Elicitation::Accepted(Name { name }) => format!("Hello, {name}!"),
        _ => "Hello, stranger!".to_owned(),
    }
}

/// Asks twice, in two rounds, and counts the client's roots in between.
#[tool]
async fn survey(#[ctx] input: Input) -> String {
    let first = input.elicit::<Name>("First?").await.accepted();
    let roots: Vec<Root> = input.roots().await;
    let second = input.elicit::<Name>("Second?").await.accepted();
    format!(
        "{} and {} with {} root(s)",
        first.map_or("-".into(), |n| n.name),
        second.map_or("-".into(), |n| n.name),
        roots.len()
    )
}

/// Reports progress twice, then answers.
#[tool]
fn steps(#[ctx] progress: Progress) -> &'static str {
    progress.report_total(1.0, 2.0);
    progress.report_total(2.0, 2.0);
    "stepped"
}

/// Announces an update of `test://doc` and a tool list change.
#[tool]
fn touch(#[ctx] ctx: &Context) -> &'static str {
    ctx.changes().resource_updated("test://doc");
    ctx.changes().tools_changed();
    "touched"
}

/// A document.
#[resource("test://doc", name = "doc", mime_type = "text/plain")]
fn doc() -> &'static str {
    "the document"
}

/// A greeting prompt.
#[prompt]
fn hello(name: String) -> PromptMessage {
    PromptMessage::user(format!("Say hello to {name}"))
}

struct Client {
    input: WriteHalf<DuplexStream>,
    output: Lines<BufReader<ReadHalf<DuplexStream>>>,
}

impl Client {
    async fn send(&mut self, message: Value) {
        let line = message.to_string();
        self.input.write_all(line.as_bytes()).await.unwrap();
        self.input.write_all(b"\n").await.unwrap();
    }

    async fn receive(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(5), self.output.next_line())
            .await
            .expect("a message within 5 s")
            .unwrap()
            .expect("the server is still writing");
        parse(&line)
    }

    /// Sends a request and returns its response, checking it against the
    /// legacy schema.
    async fn call(&mut self, id: i64, method: &str, params: Value, definition: &str) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let response = self.receive().await;
        assert_eq!(response["id"], id, "{response}");
        assert_valid_legacy_response(definition, &response);
        response
    }

    async fn initialize(&mut self, version: &str, capabilities: Value) -> Value {
        let params = json!({
            "protocolVersion": version,
            "capabilities": capabilities,
            "clientInfo": {"name": "legacy-test", "version": "1.0.0"}
        });
        let response = self.call(0, "initialize", params, "InitializeResult").await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        response
    }
}

/// A long job: a task for modern clients that declare the extension.
#[tool(task)]
async fn long_job() -> &'static str {
    "job done"
}

fn builder() -> ServerBuilder {
    ServerBuilder::new("legacy-test", "1.2.3")
        .instructions("Be nice.")
        .list_changed()
        .resource_subscriptions()
}

async fn with_client<F, Fut>(script: F)
where
    F: FnOnce(Client) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let server = builder().build().unwrap();
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_end);
    let (client_read, client_write) = tokio::io::split(client_end);
    let client = Client {
        input: client_write,
        output: BufReader::new(client_read).lines(),
    };
    let serve = server.serve_streams(mcp_runtime::StdioOptions::new(), server_read, server_write);
    let (served, ()) = tokio::join!(
        async { tokio::time::timeout(Duration::from_secs(20), serve).await },
        script(client)
    );
    served.expect("the server finishes").expect("no I/O error");
}

#[tokio::test]
async fn task_tools_run_synchronously_for_handshake_clients() {
    with_client(|mut client| async move {
        let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
        let response = client.initialize("2025-11-25", tasks).await;
        assert!(
            response["result"]["capabilities"]
                .get("extensions")
                .is_none()
        );
        let call = client
            .call(
                1,
                "tools/call",
                json!({"name": "long_job"}),
                "CallToolResult",
            )
            .await;
        assert_eq!(call["result"]["content"][0]["text"], "job done");
        assert!(call["result"].get("taskId").is_none());
        for method in ["tasks/get", "tasks/cancel"] {
            let params = json!({"taskId": "x"});
            let response = client.call(2, method, params, "EmptyResult").await;
            assert_eq!(response["error"]["code"], -32601, "{method}");
        }
    })
    .await;
}

#[tokio::test]
async fn the_handshake_answers_with_the_negotiated_version_and_the_offer() {
    with_client(|mut client| async move {
        let response = client.initialize("2025-11-25", json!({})).await;
        assert_eq!(
            response,
            json!({"jsonrpc": "2.0", "id": 0, "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {
                    "tools": {"listChanged": true},
                    "resources": {"listChanged": true, "subscribe": true},
                    "prompts": {"listChanged": true},
                    "logging": {}
                },
                "serverInfo": {"name": "legacy-test", "version": "1.2.3"},
                "instructions": "Be nice."
            }})
        );
        let pong = client.call(1, "ping", json!({}), "EmptyResult").await;
        assert_eq!(pong, json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    })
    .await;
}

#[tokio::test]
async fn older_versions_are_kept_and_unknown_ones_get_the_newest() {
    for (asked, agreed) in [
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2025-11-25"),
    ] {
        with_client(|mut client| async move {
            let response = client.initialize(asked, json!({})).await;
            assert_eq!(response["result"]["protocolVersion"], agreed);
        })
        .await;
    }
}

#[tokio::test]
async fn a_bad_initialize_is_invalid_params_and_leaves_the_connection_modern() {
    with_client(|mut client| async move {
        let response = client
            .call(
                1,
                "initialize",
                json!({"capabilities": {}}),
                "InitializeResult",
            )
            .await;
        assert_eq!(response["error"]["code"], -32602, "{response}");
        // Still modern: a request without `_meta` is refused as modern
        // servers refuse it.
        let response = client
            .call(2, "tools/list", json!({}), "ListToolsResult")
            .await;
        assert_eq!(response["error"]["code"], -32602, "{response}");
    })
    .await;
}

#[tokio::test]
async fn results_lose_the_modern_members_and_errors_get_legacy_codes() {
    with_client(|mut client| async move {
        client.initialize("2025-11-25", json!({})).await;
        let tools = client.call(1, "tools/list", json!({}), "ListToolsResult").await;
        let result = &tools["result"];
        for member in ["resultType", "ttlMs", "cacheScope"] {
            assert!(result.get(member).is_none(), "{member} in {result}");
        }
        let names: Vec<&str> = result["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["chatty", "echo", "greet", "long_job", "steps", "survey", "touch"]
        );
        let call = client
            .call(
                2,
                "tools/call",
                json!({"name": "echo", "arguments": {"text": "hi"}}),
                "CallToolResult",
            )
            .await;
        assert_eq!(call["result"]["content"], json!([{"type": "text", "text": "hi"}]));
        assert!(call["result"].get("resultType").is_none());
        let read = client
            .call(3, "resources/read", json!({"uri": "test://doc"}), "ReadResourceResult")
            .await;
        assert_eq!(read["result"]["contents"][0]["text"], "the document");
        let missing = client
            .call(4, "resources/read", json!({"uri": "test://nope"}), "ReadResourceResult")
            .await;
        assert_eq!(
            missing["error"],
            json!({"code": -32002, "message": "Resource not found: test://nope", "data": {"uri": "test://nope"}})
        );
        let prompt = client
            .call(
                5,
                "prompts/get",
                json!({"name": "hello", "arguments": {"name": "Ada"}}),
                "GetPromptResult",
            )
            .await;
        assert_eq!(
            prompt["result"]["messages"][0]["content"]["text"],
            "Say hello to Ada"
        );
        client
            .call(6, "prompts/list", json!({}), "ListPromptsResult")
            .await;
        client
            .call(7, "resources/list", json!({}), "ListResourcesResult")
            .await;
        let unknown = client.call(8, "tasks/list", json!({}), "EmptyResult").await;
        assert_eq!(unknown["error"]["code"], -32601);
        let again = client
            .call(9, "initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}}), "InitializeResult")
            .await;
        assert_eq!(again["error"]["code"], -32600);
    })
    .await;
}

#[tokio::test]
async fn log_messages_flow_after_set_level_at_or_above_it() {
    with_client(|mut client| async move {
        client.initialize("2025-11-25", json!({})).await;
        // Before logging/setLevel: no messages.
        let quiet = client.call(1, "tools/call", json!({"name": "chatty"}), "CallToolResult").await;
        assert_eq!(quiet["result"]["content"][0]["text"], "done");
        let bad = client
            .call(2, "logging/setLevel", json!({"level": "loud"}), "EmptyResult")
            .await;
        assert_eq!(bad["error"]["code"], -32602);
        client
            .call(3, "logging/setLevel", json!({"level": "warning"}), "EmptyResult")
            .await;
        client
            .send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "chatty"}}))
            .await;
        let message = client.receive().await;
        assert_valid_legacy_message(&message);
        assert_eq!(
            message,
            json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "warning", "data": "a warning"}})
        );
        let response = client.receive().await;
        assert_eq!(response["id"], 4);
    })
    .await;
}

#[tokio::test]
async fn modern_requests_stay_modern_on_a_legacy_connection() {
    with_client(|mut client| async move {
        client.initialize("2025-11-25", json!({})).await;
        client
            .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta()}}))
            .await;
        let modern = client.receive().await;
        assert_eq!(modern["result"]["resultType"], "complete", "{modern}");
        // `server/discover` without `_meta` is not a legacy method.
        let discover = client.call(2, "server/discover", json!({}), "EmptyResult").await;
        assert_eq!(discover["error"]["code"], -32601);
        // A modern-shaped initialize is a modern request for a method that
        // does not exist.
        client
            .send(json!({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"_meta": meta()}}))
            .await;
        let modern = client.receive().await;
        assert_eq!(modern["error"]["code"], -32601, "{modern}");
    })
    .await;
}

#[tokio::test]
async fn asks_become_server_to_client_requests() {
    with_client(|mut client| async move {
        client
            .initialize("2025-06-18", json!({"elicitation": {}, "roots": {}}))
            .await;
        client
            .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "greet"}}))
            .await;
        let ask = client.receive().await;
        assert_valid_legacy_message(&ask);
        // 2025-06-18 predates `mode`: the form goes without it.
        assert_eq!(ask["method"], "elicitation/create");
        assert_eq!(
            ask["params"],
            json!({"message": "What is your name?", "requestedSchema": {
                "type": "object",
                "properties": {"name": {"type": "string", "description": "Your name."}},
                "required": ["name"]
            }})
        );
        client
            .send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Ada"}}}))
            .await;
        let response = client.receive().await;
        assert_valid_legacy_response("CallToolResult", &response);
        assert_eq!(response["result"]["content"][0]["text"], "Hello, Ada!");

        // Several rounds: each ask in turn, resumed with the sealed state.
        client
            .send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "survey"}}))
            .await;
        for answer in [
            json!({"action": "accept", "content": {"name": "one"}}),
            json!({"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}),
            json!({"action": "accept", "content": {"name": "two"}}),
        ] {
            let ask = client.receive().await;
            assert_valid_legacy_message(&ask);
            client
                .send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": answer}))
                .await;
        }
        let response = client.receive().await;
        assert_eq!(response["id"], 2);
        assert_eq!(
            response["result"]["content"][0]["text"],
            "one and two with 2 root(s)"
        );

        // A client that answers with an error fails the request, and the
        // error names what was asked.
        client
            .send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "greet"}}))
            .await;
        let ask = client.receive().await;
        client
            .send(json!({"jsonrpc": "2.0", "id": ask["id"], "error": {"code": -32601, "message": "no"}}))
            .await;
        let response = client.receive().await;
        assert_valid_legacy_response("CallToolResult", &response);
        assert_eq!(response["error"]["code"], -32603);
        assert!(
            response["error"]["message"]
                .as_str()
                .unwrap()
                .contains("elicitation/create"),
            "{response}"
        );
    })
    .await;
}

#[tokio::test]
async fn capabilities_come_from_initialize() {
    with_client(|mut client| async move {
        client.initialize("2025-11-25", json!({})).await;
        // No elicitation capability: the ask is refused before anything is
        // sent to the client.
        let response = client
            .call(1, "tools/call", json!({"name": "greet"}), "CallToolResult")
            .await;
        assert_eq!(response["error"]["code"], -32021, "{response}");
        assert_eq!(
            response["error"]["data"]["requiredCapabilities"],
            json!({"elicitation": {}})
        );
    })
    .await;
}

#[tokio::test]
async fn subscriptions_and_list_changes_are_notified() {
    with_client(|mut client| async move {
        client.initialize("2025-11-25", json!({})).await;
        client
            .call(1, "resources/subscribe", json!({"uri": "test://doc"}), "EmptyResult")
            .await;
        client
            .send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "touch"}}))
            .await;
        let mut seen = Vec::new();
        for _ in 0..3 {
            let message = client.receive().await;
            if message.get("id").is_none() {
                assert_valid_legacy_message(&message);
            }
            seen.push(message);
        }
        assert!(seen.contains(&json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "test://doc"}})), "{seen:?}");
        assert!(seen.contains(&json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})), "{seen:?}");
        client
            .call(3, "resources/unsubscribe", json!({"uri": "test://doc"}), "EmptyResult")
            .await;
        let bad = client.call(4, "resources/subscribe", json!({}), "EmptyResult").await;
        assert_eq!(bad["error"]["code"], -32602);
        // Unsubscribed: only the list change arrives now.
        client
            .send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "touch"}}))
            .await;
        let mut seen = Vec::new();
        for _ in 0..2 {
            seen.push(client.receive().await);
        }
        assert!(seen.iter().all(|m| m["method"] != "notifications/resources/updated"), "{seen:?}");
    })
    .await;
}

#[tokio::test]
async fn legacy_meta_such_as_a_progress_token_is_kept() {
    with_client(|mut client| async move {
        client.initialize("2025-11-25", json!({})).await;
        client
            .send(
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                    "name": "steps", "_meta": {"progressToken": "p1"}
                }}),
            )
            .await;
        for progress in [1, 2] {
            let message = client.receive().await;
            assert_valid_legacy_message(&message);
            assert_eq!(
                message,
                json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                    "progressToken": "p1", "progress": progress, "total": 2
                }})
            );
        }
        let response = client.receive().await;
        assert_valid_legacy_response("CallToolResult", &response);
        assert_eq!(response["result"]["content"][0]["text"], "stepped");
    })
    .await;
}

#[tokio::test]
async fn end_of_input_ends_a_wait_for_an_answer() {
    with_client(|mut client| async move {
        client.initialize("2025-11-25", json!({"elicitation": {}})).await;
        client
            .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "greet"}}))
            .await;
        let ask = client.receive().await;
        assert_eq!(ask["method"], "elicitation/create");
        // The client goes away without answering: the server must not wait
        // out the answer timeout (minutes) before it exits.
        client.input.shutdown().await.unwrap();
        let response = client.receive().await;
        assert_valid_legacy_response("CallToolResult", &response);
        assert_eq!(response["id"], 1);
        assert_eq!(response["error"]["code"], -32603, "{response}");
        let end = tokio::time::timeout(Duration::from_secs(5), client.output.next_line())
            .await
            .expect("the server finishes");
        assert_eq!(end.unwrap(), None);
    })
    .await;
}
