//! The release assistant over stdio, as a client sees it, and the
//! walkthrough the guide runs (docs/src/asking-the-user.md).

use mcp_test_support::stdio::StdioServer;
use mcp_test_support::{assert_valid, meta_with};
use serde_json::{Value, json};

fn call(id: i64, tool: &str, arguments: Value, retry: Value) -> String {
    let mut params = json!({
        "name": tool,
        "arguments": arguments,
        "_meta": meta_with(json!({"elicitation": {}, "sampling": {}})),
    });
    for (key, value) in retry.as_object().unwrap() {
        params[key] = value.clone();
    }
    let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    assert_valid("CallToolRequest", &request);
    request.to_string()
}

async fn round(server: &mut StdioServer, message: String) -> Value {
    server.send(&message).await;
    let response = server.receive().await;
    assert_valid("CallToolResultResponse", &response);
    response["result"].clone()
}

fn accept(key: &str, content: Value, state: &Value) -> Value {
    json!({
        "inputResponses": {key: {"action": "accept", "content": content}},
        "requestState": state
    })
}

#[tokio::test]
async fn production_deploys_take_two_rounds_and_run_once() {
    let mut server = StdioServer::spawn(env!("CARGO_BIN_EXE_release-assistant"));
    let args = json!({"service": "billing"});
    let first = round(&mut server, call(1, "deploy", args.clone(), json!({}))).await;
    assert_eq!(
        first["inputRequests"],
        json!({"elicitation_1": {"method": "elicitation/create", "params": {
            "mode": "form",
            "message": "Where should billing go?",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "environment": {"type": "string", "description": "Where to deploy.", "oneOf": [
                        {"const": "staging", "title": "Staging: safe to break."},
                        {"const": "production", "title": "Production: customers see it."}
                    ]},
                    "migrate": {"type": "boolean", "description": "Run database migrations first?", "default": false}
                },
                "required": ["environment"]
            }
        }}})
    );
    let retry = accept(
        "elicitation_1",
        json!({"environment": "production"}),
        &first["requestState"],
    );
    let second = round(&mut server, call(2, "deploy", args.clone(), retry)).await;
    assert_eq!(
        second["inputRequests"]["elicitation_2"]["params"]["message"],
        "billing is going to production. Type billing to confirm."
    );
    let retry = accept(
        "elicitation_2",
        json!({"service": "billing"}),
        &second["requestState"],
    );
    let done = round(&mut server, call(3, "deploy", args.clone(), retry)).await;
    assert_eq!(
        done["content"],
        json!([{"type": "text", "text": "deployed billing to production (build 1042)"}])
    );
    // `deploy` is destructive: its first question answered up front, with
    // no state, is asked all the same, and a replayed state is refused.
    let staging = json!({"environment": "staging"});
    let up_front = json!({"inputResponses": {"elicitation_1": {
        "action": "accept", "content": staging
    }}});
    let asked = round(&mut server, call(4, "deploy", args.clone(), up_front)).await;
    assert_eq!(asked["inputRequests"], first["inputRequests"]);
    let retry = accept("elicitation_1", staging, &asked["requestState"]);
    // A second deployment gets the next build: the first ran once.
    let done = round(&mut server, call(5, "deploy", args.clone(), retry.clone())).await;
    assert_eq!(
        done["content"],
        json!([{"type": "text", "text": "deployed billing to staging (build 1043)"}])
    );
    server.send(&call(6, "deploy", args, retry)).await;
    let replayed = server.receive().await;
    assert_eq!(replayed["error"]["code"], -32602, "{replayed}");
    assert!(server.finish().await.is_empty());
}

#[tokio::test]
async fn release_notes_are_sampled_then_approved() {
    let mut server = StdioServer::spawn(env!("CARGO_BIN_EXE_release-assistant"));
    let args = json!({"version": "1.0", "changes": ["first"]});
    let first = round(
        &mut server,
        call(1, "release_notes", args.clone(), json!({})),
    )
    .await;
    assert_eq!(
        first["inputRequests"],
        json!({"draft": {"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "Write two sentences of release notes for version 1.0. Changes: [\"first\"]"}}],
            "maxTokens": 200,
            "systemPrompt": "You write concise, friendly release notes."
        }}})
    );
    let sampled =
        json!({"role": "assistant", "content": {"type": "text", "text": "Hello."}, "model": "m"});
    let retry =
        json!({"inputResponses": {"draft": sampled}, "requestState": first["requestState"]});
    let second = round(&mut server, call(2, "release_notes", args.clone(), retry)).await;
    let retry = accept(
        "elicitation_1",
        json!({"publish": false}),
        &second["requestState"],
    );
    let done = round(&mut server, call(3, "release_notes", args, retry)).await;
    assert_eq!(done["isError"], true);
    assert_eq!(
        done["content"][0]["text"],
        "the notes for 1.0 were not published"
    );
    assert!(server.finish().await.is_empty());
}

#[test]
fn the_walkthrough_tells_the_whole_story() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_walkthrough"))
        .output()
        .expect("the walkthrough runs");
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    for line in [
        "<- done: deployed search to staging (build 1042)",
        "<- done: deployed billing to production (build 1043, migrations run)",
        "<- tool error: billing was not deployed: confirmation did not match",
        "<- done: Release 2.4.0",
    ] {
        assert!(stdout.contains(line), "missing {line:?} in:\n{stdout}");
    }
}
