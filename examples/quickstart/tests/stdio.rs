//! Spawns the quickstart binary and talks to it over stdio, as a client
//! would: discovery, listing, calls, progress, cancellation, malformed input
//! and end of input.

use mcp_test_support::stdio::StdioServer;
use mcp_test_support::{
    assert_valid, assert_valid_error, assert_valid_notification, call_tool, meta, meta_with,
    request,
};
use serde_json::json;

fn spawn() -> StdioServer {
    StdioServer::spawn(env!("CARGO_BIN_EXE_quickstart"))
}

#[tokio::test]
async fn discover_list_and_call() {
    let mut server = spawn();
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
    assert_eq!(
        names,
        ["add", "confirm_delete", "countdown", "divide", "echo"]
    );

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
    let mut server = spawn();
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
    let mut server = spawn();
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

#[tokio::test]
async fn memo_resources_and_the_review_prompt() {
    let mut server = spawn();
    let readme = server
        .call(&request(
            1,
            "resources/read",
            json!({"uri": "memo://readme"}),
        ))
        .await;
    assert_valid("ReadResourceResultResponse", &readme);
    assert_eq!(readme["result"]["contents"][0]["mimeType"], "text/plain");
    assert!(
        readme["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("The quickstart server")
    );

    let note = server
        .call(&request(
            2,
            "resources/read",
            json!({"uri": "memo://notes/2"}),
        ))
        .await;
    assert_valid("ReadResourceResultResponse", &note);
    assert_eq!(
        note["result"]["contents"],
        json!([{"uri": "memo://notes/2", "mimeType": "text/plain", "text": "Note 2: Call the plumber about the leak."}])
    );
    let missing = server
        .call(&request(
            3,
            "resources/read",
            json!({"uri": "memo://notes/42"}),
        ))
        .await;
    assert_valid_error(&missing);
    assert_eq!(missing["error"]["data"], json!({"uri": "memo://notes/42"}));

    let review = server
        .call(&request(
            4,
            "prompts/get",
            json!({"name": "review", "arguments": {"topic": "the roadmap"}}),
        ))
        .await;
    assert_valid("GetPromptResultResponse", &review);
    let text = review["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("the roadmap"), "{text}");
    let missing_topic = server
        .call(&request(5, "prompts/get", json!({"name": "review"})))
        .await;
    assert_eq!(missing_topic["error"]["code"], -32602);
    assert!(server.finish().await.is_empty());
}

/// `tools/call confirm_delete` with the given extra params, from a client
/// that can answer form elicitations.
fn confirm_delete(id: i64, extra: serde_json::Value) -> String {
    let mut params = json!({
        "name": "confirm_delete",
        "arguments": {"path": "/tmp/report.txt"},
        "_meta": meta_with(json!({"elicitation": {}})),
    });
    for (key, value) in extra.as_object().unwrap() {
        params[key] = value.clone();
    }
    serde_json::to_string(
        &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}),
    )
    .unwrap()
}

#[tokio::test]
async fn confirm_delete_asks_then_deletes_or_keeps() {
    let mut server = spawn();
    server.send(&confirm_delete(1, json!({}))).await;
    let round = server.receive().await;
    assert_valid("CallToolResultResponse", &round);
    assert_valid("InputRequiredResult", &round["result"]);
    assert_eq!(round["result"]["resultType"], "input_required");
    assert_eq!(
        round["result"]["inputRequests"],
        json!({"answer": {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "Delete /tmp/report.txt?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"confirm": {"type": "boolean", "description": "Delete it for good?"}},
                    "required": ["confirm"]
                }
            }
        }})
    );
    let state = round["result"]["requestState"].as_str().unwrap().to_owned();

    // The retry is a new request (new id) echoing the state.
    let accept = json!({"answer": {"action": "accept", "content": {"confirm": true}}});
    server
        .send(&confirm_delete(
            2,
            json!({"inputResponses": accept, "requestState": state}),
        ))
        .await;
    let deleted = server.receive().await;
    assert_valid("CallToolResultResponse", &deleted);
    assert_eq!(deleted["id"], 2);
    assert_eq!(
        deleted["result"]["content"],
        json!([{"type": "text", "text": "deleted /tmp/report.txt"}])
    );
    assert!(deleted["result"].get("isError").is_none());

    // The same retry again: `confirm_delete` is destructive, so its state
    // opens once and the file is not deleted twice.
    server
        .send(&confirm_delete(
            3,
            json!({"inputResponses": accept, "requestState": state}),
        ))
        .await;
    let replayed = server.receive().await;
    assert_valid_error(&replayed);
    assert_eq!(
        replayed,
        json!({"jsonrpc": "2.0", "id": 3, "error": {
            "code": -32602,
            "message": "Invalid requestState: it is malformed, expired, or does not belong to this request; retry without it"
        }})
    );

    // An answer sent up front, without the state of the round that asked
    // it, is not used: the question is asked.
    server
        .send(&confirm_delete(
            4,
            json!({"inputResponses": {"answer": {"action": "accept", "content": {"confirm": true}}}}),
        ))
        .await;
    let asked = server.receive().await;
    assert_valid("CallToolResultResponse", &asked);
    let state = asked["result"]["requestState"].as_str().unwrap().to_owned();
    assert_eq!(
        asked,
        json!({"jsonrpc": "2.0", "id": 4, "result": {
            "resultType": "input_required",
            "inputRequests": round["result"]["inputRequests"],
            "requestState": state,
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "quickstart", "version": "0.1.0"}}
        }})
    );

    // Declining, with that round's state, keeps the file.
    server
        .send(&confirm_delete(
            5,
            json!({"inputResponses": {"answer": {"action": "decline"}}, "requestState": state}),
        ))
        .await;
    let declined = server.receive().await;
    assert_valid("CallToolResultResponse", &declined);
    assert_eq!(declined["result"]["isError"], true);
    assert_eq!(
        declined["result"]["content"],
        json!([{"type": "text", "text": "kept /tmp/report.txt: the user declined"}])
    );

    // A client without elicitation cannot be asked.
    server
        .send(&call_tool(
            6,
            "confirm_delete",
            json!({"path": "/tmp/report.txt"}),
        ))
        .await;
    let missing = server.receive().await;
    assert_valid_error(&missing);
    assert_eq!(
        missing["error"],
        json!({"code": -32021, "message": "Missing required client capability", "data": {"requiredCapabilities": {"elicitation": {}}}})
    );
    assert!(server.finish().await.is_empty());
}
