//! The quickstart's handlers through the in-process test client: what a
//! framework user writes to test their own server.

use mcp_runtime::testing::{Elicited, TestClient};
use quickstart::Confirm;
use serde_json::json;

#[tokio::test]
async fn tools_answer_as_documented() {
    let mut client = TestClient::new();
    let names: Vec<String> = client
        .list_tools()
        .await
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(
        names,
        ["add", "confirm_delete", "countdown", "divide", "echo"]
    );

    client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .assert_text("hi");
    #[derive(serde::Deserialize)]
    struct Sum {
        sum: i64,
    }
    let sum: Sum = client
        .call_tool("add", json!({"a": 2, "b": 40}))
        .await
        .structured();
    assert_eq!(sum.sum, 42);
    client
        .call_tool("divide", json!({"a": 1, "b": 0}))
        .await
        .assert_tool_error("cannot divide by zero");
    client
        .call_tool("add", json!({"a": "two"}))
        .await
        .assert_tool_error("Invalid arguments for tool add");
    let message = client
        .call_tool("nope", json!({}))
        .await
        .assert_error_code(-32602);
    assert_eq!(message, "Unknown tool: nope");
}

#[tokio::test]
async fn progress_is_reported_when_asked_for() {
    let mut client = TestClient::new().progress();
    let called = client
        .call_tool("countdown", json!({"from": 3, "delay_ms": 1}))
        .await;
    let progress: Vec<f64> = called
        .notifications()
        .progress()
        .iter()
        .map(|p| p.progress)
        .collect();
    assert_eq!(progress, [0.0, 1.0, 2.0, 3.0]);
    called.assert_text("liftoff");
}

#[tokio::test]
async fn confirm_delete_round_by_round() {
    let mut client = TestClient::new().elicitation();
    let round = client
        .call_tool("confirm_delete", json!({"path": "/tmp/a"}))
        .await
        .input_required();
    let form = round.elicitation("answer");
    assert_eq!(form.message, "Delete /tmp/a?");
    assert!(form.requires("confirm"));
    let answers = mcp_runtime::client::Answers::new().accept("answer", json!({"confirm": true}));
    let done = client.answer(&round, answers).await;
    done.assert_text("deleted /tmp/a");
}

#[tokio::test]
async fn confirm_delete_with_a_callback() {
    let mut client = TestClient::new().on_elicit(|form| {
        assert_eq!(form.message, "Delete /tmp/b?");
        Elicited::Decline
    });
    let called = client
        .call_tool_answering("confirm_delete", json!({"path": "/tmp/b"}))
        .await;
    assert_eq!(called.rounds(), 2);
    called.assert_tool_error("the user declined");
    // The form type is public, so tests can build answers from it too.
    let _ = Confirm { confirm: true };
}

#[tokio::test]
async fn resources_and_prompts() {
    let mut client = TestClient::new();
    assert_eq!(
        client.read_resource("memo://notes/2").await.text(),
        "Note 2: Call the plumber about the leak."
    );
    assert_eq!(
        client.read_resource("memo://notes/9").await.error().code,
        -32602
    );
    let texts = client
        .get_prompt("review", json!({"topic": "the plan"}))
        .await
        .texts();
    assert!(texts[0].starts_with("Please review the plan carefully"));
    let discovery = client.discover().await;
    assert_eq!(discovery.server_info.unwrap().name, "test-server");
}
