//! The release assistant through the in-process test client: multi-round
//! flows asserted round by round, and answered by callbacks.

use mcp_runtime::client::Answers;
// Names the library, so that its handlers are linked into this test.
use mcp_runtime::testing::{Elicited, TestClient};
use release_assistant as _;
use serde_json::json;

#[tokio::test]
async fn production_deploy_round_by_round() {
    let mut client = TestClient::new().elicitation();
    let args = json!({"service": "api"});
    let first = client.call_tool("deploy", args).await.input_required();
    let target = first.elicitation("elicitation_1");
    assert_eq!(target.message, "Where should api go?");
    let fields: Vec<&str> = target.fields().into_iter().map(|(name, _)| name).collect();
    assert_eq!(fields, ["environment", "migrate"]);
    assert!(target.requires("environment") && !target.requires("migrate"));

    let production = Answers::new().accept("elicitation_1", json!({"environment": "production"}));
    let second = client.answer(&first, production).await.input_required();
    assert_eq!(
        second.elicitation("elicitation_2").message,
        "api is going to production. Type api to confirm."
    );
    let confirmed = Answers::new().accept("elicitation_2", json!({"service": "api"}));
    let text = client.answer(&second, confirmed).await.text();
    assert!(
        text.starts_with("deployed api to production (build "),
        "{text}"
    );
}

#[tokio::test]
async fn release_notes_answered_by_callbacks() {
    let mut client = TestClient::new()
        .on_sample(|request| {
            assert_eq!(request.max_tokens, 200);
            assert_eq!(
                request.system_prompt.as_deref(),
                Some("You write concise, friendly release notes.")
            );
            format!("Notes for: {}", request.prompt())
        })
        .on_elicit(|form| {
            assert!(form.message.starts_with("Publish these notes for 3.0?"));
            Elicited::Accept(json!({"publish": true}))
        });
    let called = client
        .call_tool_answering(
            "release_notes",
            json!({"version": "3.0", "changes": ["faster"]}),
        )
        .await;
    assert_eq!(called.rounds(), 3);
    called.assert_text(
        "Release 3.0\n\nNotes for: Write two sentences of release notes for version 3.0. Changes: [\"faster\"]",
    );
}

#[tokio::test]
async fn a_client_without_elicitation_is_told_what_is_missing() {
    let mut client = TestClient::new().sampling();
    let error = client
        .call_tool("deploy", json!({"service": "api"}))
        .await
        .error();
    assert_eq!(error.code, -32021);
    assert_eq!(
        error.data,
        Some(json!({"requiredCapabilities": {"elicitation": {}}}))
    );
}

#[tokio::test]
async fn a_release_ships_as_a_task_with_an_approval_midway() {
    let mut client = TestClient::new()
        .tasks()
        .elicitation()
        .on_elicit(|request| {
            assert_eq!(request.message, "Release 1.4.0 is packaged. Publish it?");
            Elicited::Accept(json!({"publish": true}))
        });
    let args = json!({"version": "1.4.0", "step_ms": 20});
    let task = client.call_tool("ship_release", args).await.task();
    assert_eq!(task.status, mcp_runtime::tasks::TaskStatus::Working);
    let asking = client.wait_for_task(&task.id).await;
    assert_eq!(
        asking.status_message.as_deref(),
        Some("waiting for approval to publish 1.4.0")
    );
    let progress = asking.progress.expect("progress is reported");
    assert_eq!((progress.progress, progress.total), (3.0, Some(4.0)));
    client
        .finish_task(&task.id)
        .await
        .assert_text("published 1.4.0");
}

#[tokio::test]
async fn a_release_can_be_cancelled_while_it_builds() {
    let mut client = TestClient::new().tasks();
    let task = client
        .call_tool("ship_release", json!({"version": "2.0.0"}))
        .await
        .task();
    client.cancel_task(&task.id).await;
    let ended = client.wait_for_task(&task.id).await;
    assert_eq!(ended.status, mcp_runtime::tasks::TaskStatus::Cancelled);
    assert_eq!(
        ended.status_message.as_deref(),
        Some("Cancelled by the client")
    );
}

#[tokio::test]
async fn a_client_without_tasks_waits_for_the_result() {
    let mut client = TestClient::new()
        .elicitation()
        .on_elicit(|_| Elicited::Accept(json!({"publish": false})));
    let args = json!({"version": "0.9.0", "step_ms": 1});
    client
        .call_tool_answering("ship_release", args)
        .await
        .assert_tool_error("release 0.9.0 was not published");
}
