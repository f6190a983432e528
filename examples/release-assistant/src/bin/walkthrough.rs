//! Plays the client against the release assistant, in process, and prints
//! every round: `cargo run -q -p release-assistant --bin walkthrough`.
//!
//! Each `input_required` result is answered the way a user (or the
//! client's model) would, and the call is retried as a new request carrying
//! the answers and the sealed `requestState`.

use mcp_runtime::Server;
use serde_json::{Value, json};

/// What the scripted user answers to one input request.
type Answers = fn(&str, &Value) -> Value;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let server = mcp_runtime::server!().build().expect("the tools register");
    let mut client = Client { server, next_id: 1 };

    client
        .call("deploy", json!({"service": "search"}), |_, _| {
            form(json!({"environment": "staging"}))
        })
        .await;
    client
        .call("deploy", json!({"service": "billing"}), |_, request| {
            if message(request).starts_with("Where") {
                form(json!({"environment": "production", "migrate": true}))
            } else {
                form(json!({"service": "billing"}))
            }
        })
        .await;
    client
        .call("deploy", json!({"service": "billing"}), |_, request| {
            if message(request).starts_with("Where") {
                form(json!({"environment": "production"}))
            } else {
                form(json!({"service": "biling"}))
            }
        })
        .await;
    let changes = json!(["Search is twice as fast", "Invoices export to CSV"]);
    client
        .call(
            "release_notes",
            json!({"version": "2.4.0", "changes": changes}),
            |_, request| match request["method"].as_str() {
                Some("sampling/createMessage") => json!({
                    "role": "assistant",
                    "content": {"type": "text", "text": "Version 2.4.0 makes search twice as fast. You can now export invoices to CSV."},
                    "model": "demo-model",
                    "stopReason": "endTurn"
                }),
                _ => form(json!({"publish": true})),
            },
        )
        .await;
}

struct Client {
    server: Server,
    next_id: u64,
}

impl Client {
    /// Calls `tool`, answering every round with `answers`, until it ends.
    async fn call(&mut self, tool: &str, arguments: Value, answers: Answers) {
        println!("\n=== tools/call {tool} {arguments}");
        let mut retry = json!({});
        loop {
            let mut params = json!({
                "name": tool,
                "arguments": arguments,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}}
                }
            });
            for (key, value) in retry.as_object().expect("an object") {
                params[key] = value.clone();
            }
            let id = self.next_id;
            self.next_id += 1;
            let request =
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
            let exchange = self.server.exchange(request.to_string()).await;
            let response: Value =
                serde_json::from_str(&exchange.response.expect("a response")).expect("JSON");
            let result = &response["result"];
            if result["resultType"] != "input_required" {
                report(&response);
                return;
            }
            let mut responses = serde_json::Map::new();
            for (key, request) in result["inputRequests"].as_object().expect("requests") {
                println!(
                    "<- [{id}] {} `{key}`: {}",
                    request["method"].as_str().unwrap_or("?"),
                    describe(request)
                );
                let answer = answers(key, request);
                println!("   answer: {}", describe_answer(&answer));
                responses.insert(key.clone(), answer);
            }
            let state = result["requestState"].as_str().unwrap_or_default();
            println!(
                "-> retry with {} answer(s) and the sealed requestState ({} bytes)",
                responses.len(),
                state.len()
            );
            retry = json!({"inputResponses": responses, "requestState": state});
        }
    }
}

fn form(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

fn message(request: &Value) -> &str {
    request["params"]["message"].as_str().unwrap_or_default()
}

fn describe(request: &Value) -> String {
    match request["method"].as_str() {
        Some("sampling/createMessage") => format!(
            "{:?} (max {} tokens)",
            request["params"]["messages"][0]["content"]["text"]
                .as_str()
                .unwrap_or_default(),
            request["params"]["maxTokens"]
        ),
        _ => {
            let fields: Vec<&String> = request["params"]["requestedSchema"]["properties"]
                .as_object()
                .map(|p| p.keys().collect())
                .unwrap_or_default();
            format!("{:?} fields {fields:?}", message(request))
        }
    }
}

fn describe_answer(answer: &Value) -> String {
    match answer.get("content") {
        Some(content) if answer.get("action").is_some() => format!("accept {content}"),
        _ => format!(
            "model says {:?}",
            answer["content"]["text"].as_str().unwrap_or_default()
        ),
    }
}

fn report(response: &Value) {
    if let Some(error) = response.get("error") {
        println!("<- error {}: {}", error["code"], error["message"]);
        return;
    }
    let result = &response["result"];
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    let outcome = if result["isError"] == true {
        "tool error"
    } else {
        "done"
    };
    println!("<- {outcome}: {text}");
}
